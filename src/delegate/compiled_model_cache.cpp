#include "delegate/compiled_model_cache.h"

#include <cstring>
#include <map>
#include <mutex>

namespace executorch_openvino::delegate {
namespace {

// A 64-bit hash of a section, next to the CRC-32 the container already checked: together they
// identify content without keeping a copy of it for comparison.
uint64_t content_hash(const uint8_t* data, size_t size) {
  uint64_t hash = 0x9e3779b97f4a7c15ull ^ size;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    hash = (hash ^ word) * 0xff51afd7ed558ccdull;
    hash ^= hash >> 32;
  }
  for (; i < size; ++i) hash = (hash ^ data[i]) * 0x100000001b3ull;
  hash ^= hash >> 29;
  return hash * 0xc4ceb9fe1a85ec53ull;
}

void append_section(std::string& key, const char* name, const blob::Span& span) {
  key += name;
  key += '=' + std::to_string(span.size) + ':' + std::to_string(content_hash(span.data, span.size)) + '\n';
}

// Everything that decides what compile() would produce. The XML is part of it verbatim (it is
// small); weights and precompiled models by size and hash.
std::string cache_key(const blob::ParsedBlob& parsed, const CompileOptions& options) {
  std::string key = "device=" + options.device + '\n';
  for (const ov::Property& property : options.properties) key += property.key + '=' + property.value + '\n';
  append_section(key, "weights", parsed.ir_weights);
  for (const blob::PrecompiledModel& model : parsed.precompiled) {
    key += "precompiled:" + model.device + ':' + model.openvino_version + '\n';
    append_section(key, "model", model.model);
  }
  key += "xml=";
  key.append(reinterpret_cast<const char*>(parsed.ir_xml.data), parsed.ir_xml.size);
  return key;
}

struct Slot {
  std::mutex mutex;  // held while the model is being compiled, so a second load waits for it
  std::weak_ptr<const CompiledModel> model;
};

struct Cache {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<Slot>> slots;
  CacheStats stats;
};

Cache& cache() {
  static auto* instance = new Cache();  // never destroyed: methods may outlive static destructors
  return *instance;
}

// Drops slots whose model is gone and which no load is using. Called with the cache locked.
void sweep(Cache& c) {
  for (auto it = c.slots.begin(); it != c.slots.end();) {
    if (it->second.use_count() == 1 && it->second->model.expired()) {
      it = c.slots.erase(it);
    } else {
      ++it;
    }
  }
}

// The cache's one entry point: the model for `key`, made by `make` on a miss.
template <typename Make>
Outcome<std::shared_ptr<const CompiledModel>> shared_model(const std::string& key, Make make) {
  Cache& c = cache();
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    sweep(c);
    std::shared_ptr<Slot>& entry = c.slots[key];
    if (!entry) entry = std::make_shared<Slot>();
    slot = entry;
  }
  std::lock_guard<std::mutex> slot_lock(slot->mutex);
  if (std::shared_ptr<const CompiledModel> live = slot->model.lock()) {
    std::lock_guard<std::mutex> lock(c.mutex);
    ++c.stats.reused;
    return live;
  }
  Outcome<std::unique_ptr<CompiledModel>> compiled = make();
  if (!compiled.ok()) return compiled.failure();
  std::shared_ptr<const CompiledModel> model(std::move(compiled).value());
  std::lock_guard<std::mutex> lock(c.mutex);  // slot->model is written holding both locks
  slot->model = model;
  ++c.stats.compiled;
  return model;
}

}  // namespace

Outcome<std::shared_ptr<const CompiledModel>> shared_compiled_model(ov::Runtime& runtime,
                                                                    const blob::ParsedBlob& parsed,
                                                                    const CompileOptions& options, std::string* note,
                                                                    const std::function<void()>& release_blob) {
  return shared_model(cache_key(parsed, options),
                      [&] { return compile(runtime, parsed, options, note, release_blob); });
}

Outcome<std::shared_ptr<const CompiledModel>> shared_upstream_model(ov::Runtime& runtime, const void* data,
                                                                    size_t size, const CompileOptions& options) {
  std::string key = "upstream\ndevice=" + options.device + '\n';
  for (const ov::Property& property : options.properties) key += property.key + '=' + property.value + '\n';
  append_section(key, "model", blob::Span{static_cast<const uint8_t*>(data), size});
  return shared_model(key, [&] { return import_upstream(runtime, data, size, options); });
}

CacheStats compiled_model_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  CacheStats stats = c.stats;
  stats.live = 0;
  for (const auto& [key, slot] : c.slots) {
    if (!slot->model.expired()) ++stats.live;
  }
  return stats;
}

std::string describe_compiled_models() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  std::string text;
  for (const auto& [key, slot] : c.slots) {
    std::shared_ptr<const CompiledModel> model = slot->model.lock();
    if (!model) continue;
    // use_count counts our local copy too.
    text += "device=" + model->device + " source=" + (model->from_precompiled ? "precompiled" : "ir") +
            " users=" + std::to_string(model.use_count() - 1) + " " + model->effective_properties + "\n";
  }
  return text;
}

}  // namespace executorch_openvino::delegate
