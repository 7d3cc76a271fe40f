#include "delegate/compiling/compiled_model_cache.h"

#include <map>
#include <mutex>
#include <optional>

#include "delegate/compiling/content_hash.h"
#include "delegate/compiling/model_file_cache.h"

namespace executorch_openvino::delegate {
namespace {

void append_section(std::string& key, const char* name, const blob::Span& span) {
  // Size and a 64-bit hash beside the CRC-32 the container already checked: together they identify
  // the content without keeping a copy of it for comparison.
  key += name;
  key += '=' + std::to_string(span.size) + ':' + std::to_string(content_hash(span.data, span.size)) + '\n';
}

// The model's content: the XML verbatim (it is small); weights and precompiled models by size and
// hash. Weights in named data by their record: the key our export writes is their SHA-256, and the
// record is all a load has without fetching them.
std::string model_identity(const blob::ParsedBlob& parsed) {
  std::string identity;
  if (parsed.named_weights) {
    const blob::NamedWeights& named = *parsed.named_weights;
    identity += "named-weights=" + std::to_string(named.size) + ':' + std::to_string(named.crc) + ':' + named.key + '\n';
  } else {
    append_section(identity, "weights", parsed.ir_weights);
  }
  for (const blob::PrecompiledModel& model : parsed.precompiled) {
    identity += "precompiled:" + model.device + ':' + model.openvino_version + '\n';
    append_section(identity, "model", model.model);
  }
  // The exporter's word that the caches grow decides whether attention=auto pages them.
  if (parsed.grown_caches > 0) identity += "grown-caches=" + std::to_string(parsed.grown_caches) + '\n';
  identity += "xml=";
  identity.append(reinterpret_cast<const char*>(parsed.ir_xml.data), parsed.ir_xml.size);
  return identity;
}

// Everything that decides what compile() would produce in this process.
std::string cache_key(const std::string& identity, const CompileOptions& options) {
  std::string key = "device=" + options.device + "\nattention=" + options.attention + '\n';
  for (const openvino_api::Property& property : options.properties) key += property.key + '=' + property.value + '\n';
  return key + identity;
}

// The model cache's file for this model, when a cache folder is set and the device is a physical
// one (a virtual device's compiled model is left to OpenVINO's own CACHE_DIR). The key adds the
// runtime's build to what decides the compiled model; CACHE_DIR and ENABLE_MMAP do not change it.
std::optional<CacheEntry> file_cache_entry(openvino_api::Runtime& runtime, const std::string& identity,
                                           const CompileOptions& options) {
  const std::string* folder = find_property(options, "CACHE_DIR");
  if (folder == nullptr || is_virtual_device(options.device)) return std::nullopt;
  std::string key = "executorch_openvino model cache\nopenvino=" + runtime.build_number() + "\ndevice=" + options.device +
                    "\nattention=" + options.attention + '\n';
  for (const auto& [name, value] : compilation_properties(options)) key += name + '=' + value + '\n';
  return cache_entry(*folder, key + identity);
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
  compiled.value()->identity = content_hash(key.data(), key.size());
  std::shared_ptr<const CompiledModel> model(std::move(compiled).value());
  std::lock_guard<std::mutex> lock(c.mutex);  // slot->model is written holding both locks
  slot->model = model;
  ++c.stats.compiled;
  return model;
}

}  // namespace

Outcome<std::shared_ptr<const CompiledModel>> shared_compiled_model(openvino_api::Runtime& runtime,
                                                                    CompileRequest request, Notes& notes) {
  const std::string identity = model_identity(request.parsed);
  return shared_model(cache_key(identity, request.options), [&] {
    request.cache_entry = file_cache_entry(runtime, identity, request.options);
    return compile(runtime, request, notes);
  });
}

Outcome<std::shared_ptr<const CompiledModel>> shared_upstream_model(openvino_api::Runtime& runtime, const void* data,
                                                                    size_t size, const CompileOptions& options) {
  std::string identity = "upstream\n";
  append_section(identity, "model", blob::Span{static_cast<const uint8_t*>(data), size});
  return shared_model(cache_key(identity, options), [&] { return import_upstream(runtime, data, size, options); });
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
    text += "device=" + model->device + " source=" + source_name(model->source) +
            " users=" + std::to_string(model.use_count() - 1) + " weights=" + backing_name(model->weights.backing()) +
            " weights_given_back=" + std::to_string(model->weights.given_back()) +
            " imported_bytes=" + model->backing.kind() +
            (model->paged ? " attention=paged " : " ") +
            model->effective_properties + "\n";
  }
  return text;
}

}  // namespace executorch_openvino::delegate
