#include "delegate/compiling/model_compiler.h"

#include <algorithm>

#include "delegate/compiling/paged_model.h"
#include "openvino_api/helper_library.h"

namespace executorch_openvino::delegate {
namespace {

// Why `candidate` cannot stand in for compiling the IR with `options`; empty when it can.
std::string precompiled_mismatch(openvino_api::Runtime& runtime, const blob::PrecompiledModel& candidate,
                                 const CompileOptions& options) {
  if (candidate.device != options.device) {
    return "it was compiled for " + candidate.device + " and the program loads for " + options.device;
  }
  if (candidate.openvino_version != runtime.build_number()) {
    return "it was compiled by OpenVINO " + candidate.openvino_version + " and this runtime is " +
           runtime.build_number();
  }
  auto recorded = candidate.properties;
  std::sort(recorded.begin(), recorded.end());
  const auto wanted = compilation_properties(options);
  if (recorded != wanted) {
    auto text = [](const std::vector<std::pair<std::string, std::string>>& properties) {
      std::string out;
      for (const auto& [key, value] : properties) out += (out.empty() ? "" : " ") + key + "=" + value;
      return out.empty() ? std::string("none") : out;
    };
    return "it was compiled with {" + text(recorded) + "} and the program loads with {" + text(wanted) + "}";
  }
  return {};
}

std::string read_back_properties(openvino_api::Runtime& runtime, const openvino_api::ov_compiled_model* model) {
  std::string text;
  for (const char* key : {"EXECUTION_DEVICES", "PERFORMANCE_HINT", "INFERENCE_NUM_THREADS", "NUM_STREAMS",
                          "INFERENCE_PRECISION_HINT", "PERF_COUNT"}) {
    // Virtual devices do not report every property; what they do not know is left out.
    Outcome<std::string> value = openvino_api::compiled_model_property(runtime, model, key);
    if (value.ok()) text += (text.empty() ? "" : " ") + std::string(key) + "=" + value.value();
  }
  return text;
}

// What the import must have in effect: the compilation properties, as compiled with.
std::vector<openvino_api::Property> import_properties(const CompileOptions& options) {
  std::vector<openvino_api::Property> properties;
  for (const auto& [key, value] : compilation_properties(options)) properties.push_back({key, value});
  return properties;
}

// Fills in the ports and what OpenVINO reports about a freshly made compiled model.
Status describe(openvino_api::Runtime& runtime, const CompileOptions& options, CompiledModel& result) {
  Outcome<std::vector<openvino_api::PortInfo>> inputs = openvino_api::input_ports(runtime, result.model.get());
  if (!inputs.ok()) return inputs.failure();
  Outcome<std::vector<openvino_api::PortInfo>> outputs = openvino_api::output_ports(runtime, result.model.get());
  if (!outputs.ok()) return outputs.failure();
  if (outputs->empty()) {
    // Found by fuzzing: OpenVINO reads an IR with mangled layer types, or a Parameter without a
    // Result, as a model with no outputs; such a model computes nothing and is never ours.
    return Failure{FailureKind::kInvalidBlob,
                   "the model has no outputs (OpenVINO read " + std::to_string(inputs->size()) +
                       " inputs and no outputs from the IR): the delegate blob is corrupt or was not written by "
                       "executorch_openvino; re-export the model"};
  }
  result.inputs = std::move(inputs).value();
  result.outputs = std::move(outputs).value();
  result.effective_properties = read_back_properties(runtime, result.model.get());
  result.paged = std::any_of(result.inputs.begin(), result.inputs.end(),
                             [](const openvino_api::PortInfo& port) { return port.name.rfind(kPagedCachePrefix, 0) == 0; });
  if (result.paged && result.outputs.size() > 1 && result.outputs.back().name == kComputedMaskOutput) {
    result.computed_mask = std::move(result.outputs.back());
    result.outputs.pop_back();
  }
  const std::string* profiling = find_property(options, "PERF_COUNT");
  result.profiling = profiling != nullptr && *profiling == "YES";
  return ok_status();
}

// The element type of paged caches: the precision the device computes in, f32 unless asked otherwise
// (the CPU plugin's paged attention keeps its caches in its compute precision).
std::string paged_cache_type(openvino_api::Runtime& runtime, const CompileOptions& options) {
  const std::string* hint = find_property(options, "INFERENCE_PRECISION_HINT");
  if (hint != nullptr) return *hint;
  Outcome<std::string> device_default = openvino_api::device_property(runtime, options.device, "INFERENCE_PRECISION_HINT");
  return device_default.ok() ? device_default.value() : "f32";
}

// attention=paged, or auto for a model whose blob says its caches grow: those caches rewritten for OpenVINO's paged
// attention, where the state helper can do it (paged_model.h); any other model, device or process is
// left as it is, and says why. Returns the caches' element type when the model was rewritten, else nothing.
Outcome<std::string> page_attention(openvino_api::Runtime& runtime, const CompileOptions& options, openvino_api::ov_model* model,
                                    Notes& notes) {
  const openvino_api::ProcessHelper& helper = openvino_api::process_helper(runtime);
  std::string left, type;
  if (!is_cpu_device(options.device)) {
    left = "paged attention is run on CPU only, and the device is " + options.device;
  } else if (helper.library == nullptr) {
    left = "it needs the state helper: " + helper.why_not;
  } else {
    type = paged_cache_type(runtime, options);
    if (type != "f32" && type != "bf16" && type != "f16") {
      left = "caches in " + type + " are not supported";
    } else {
      Outcome<std::string> paged = helper.library->page_attention(model, type, kPagedBlockSize);
      if (!paged.ok()) return paged.failure();
      left = paged.value();
    }
  }
  if (left.empty()) return type;
  notes.push_back("attention=" + options.attention + ": the model runs as exported: " + left);
  return std::string();
}

// Imports the compiled model in the first `model_size` bytes of `bytes` with the options in effect.
// On success `result` owns the bytes (the imported model reads them in place) and records `source`;
// on failure `result` is untouched.
Status import_into(openvino_api::Runtime& runtime, const CompileOptions& options, AlignedBytes bytes, size_t model_size,
                   CompiledModel::Source source, CompiledModel& result) {
  Outcome<openvino_api::CompiledModelPtr> imported =
      openvino_api::import_model(runtime, bytes.data.get(), model_size, options.device, import_properties(options));
  if (!imported.ok()) return imported.failure();
  result.backing = std::move(bytes);
  result.model = std::move(imported).value();
  result.source = source;
  return ok_status();
}

}  // namespace

const char* source_name(CompiledModel::Source source) {
  switch (source) {
    case CompiledModel::Source::kIr: return "ir";
    case CompiledModel::Source::kPrecompiled: return "precompiled";
    case CompiledModel::Source::kModelCache: return "cache";
    case CompiledModel::Source::kUpstream: return "upstream";
  }
  return "unknown";
}

std::vector<std::pair<std::string, std::string>> compilation_properties(const CompileOptions& options) {
  std::vector<std::pair<std::string, std::string>> properties;
  for (const openvino_api::Property& property : options.properties) {
    if (property.key == "CACHE_DIR" || property.key == "ENABLE_MMAP") continue;
    properties.emplace_back(property.key, property.value);
  }
  std::sort(properties.begin(), properties.end());
  return properties;
}

Status check_device(openvino_api::Runtime& runtime, const std::string& device) {
  if (is_virtual_device(device)) return ok_status();
  Outcome<std::vector<std::string>> devices = runtime.available_devices();
  if (!devices.ok()) return devices.failure();
  std::string listed;
  for (const std::string& present : devices.value()) {
    if (present == device || present.rfind(device + ".", 0) == 0) return ok_status();
    listed += (listed.empty() ? "" : ", ") + present;
  }
  return Failure{FailureKind::kDeviceUnavailable,
                 "device '" + device + "' is not available; available devices: " + (listed.empty() ? "none" : listed)};
}

Outcome<std::unique_ptr<CompiledModel>> compile(openvino_api::Runtime& runtime, const blob::ParsedBlob& parsed,
                                                const ReadWeights& read_weights, const CompileOptions& options,
                                                Notes* notes_out,
                                                const std::function<void()>& release_blob,
                                                const CacheEntry* cache_entry) {
  if (Status device = check_device(runtime, options.device); !device.ok()) return device.failure();
  auto result = std::make_unique<CompiledModel>();
  result->device = options.device;
  Notes ignored;
  Notes& notes = notes_out != nullptr ? *notes_out : ignored;

  std::string reasons;
  for (const blob::PrecompiledModel& candidate : parsed.precompiled) {
    std::string mismatch = precompiled_mismatch(runtime, candidate, options);
    if (mismatch.empty()) {
      Status imported = import_into(runtime, options, AlignedBytes::copy_of(candidate.model.data, candidate.model.size),
                                    candidate.model.size, CompiledModel::Source::kPrecompiled, *result);
      if (imported.ok()) {
        if (release_blob) release_blob();
        break;
      }
      mismatch = "importing it failed: " + imported.failure().message;
    }
    reasons += (reasons.empty() ? "" : "; ") + ("the precompiled model for " + candidate.device + " was not used: ") +
               mismatch;
  }
  if (!result->model && !reasons.empty()) {
    notes.push_back(reasons + (cache_entry != nullptr ? "; trying the model cache" : "; compiling the IR"));
  }

  if (!result->model && cache_entry != nullptr) {
    std::string problem;
    if (std::optional<CachedModel> cached = read_cached_model(*cache_entry, &problem)) {
      Status imported = import_into(runtime, options, std::move(cached->bytes), cached->model_size,
                                    CompiledModel::Source::kModelCache, *result);
      if (imported.ok()) {
        if (release_blob) release_blob();
      } else {
        problem = "importing it failed: " + imported.failure().message;
      }
    }
    if (!problem.empty()) notes.push_back("model cache: " + cache_entry->file.u8string() + " not used: " + problem + "; compiling the IR");
  }

  if (!result->model) {
    Outcome<blob::Span> weights = read_weights();
    if (!weights.ok()) return weights.failure();
    result->backing = AlignedBytes::copy_of(weights->data, weights->size);
    // Read before the blob is released below.
    const bool wants_paging =
        options.attention == kPagedAttention || (options.attention == kAutoAttention && parsed.grown_caches > 0);
    Outcome<openvino_api::ModelPtr> model = openvino_api::read_model(runtime, reinterpret_cast<const char*>(parsed.ir_xml.data),
                                                 parsed.ir_xml.size, result->backing.data.get(), result->backing.size);
    if (!model.ok()) return model.failure();
    if (release_blob) release_blob();  // the model holds its XML; the weights are in `backing`
    std::string paged_type;
    if (wants_paging) {
      Outcome<std::string> paged = page_attention(runtime, options, model->get(), notes);
      if (!paged.ok()) return paged.failure();
      paged_type = paged.value();
    }
    // With our cache in use OpenVINO's own would store a second copy of the same compiled model.
    std::vector<openvino_api::Property> properties = options.properties;
    if (!paged_type.empty()) {
      // The plugin's paged attention wants the cache precision it is given to be the caches' type (the
      // IR's own KV_CACHE_PRECISION is the grown caches').
      properties.erase(std::remove_if(properties.begin(), properties.end(),
                                      [](const openvino_api::Property& p) { return p.key == "KV_CACHE_PRECISION"; }),
                       properties.end());
      properties.push_back({"KV_CACHE_PRECISION", paged_type});
    }
    if (cache_entry != nullptr) {
      properties.erase(std::remove_if(properties.begin(), properties.end(),
                                      [](const openvino_api::Property& p) { return p.key == "CACHE_DIR"; }),
                       properties.end());
    }
    Outcome<openvino_api::CompiledModelPtr> compiled = openvino_api::compile_model(runtime, model->get(), options.device, properties);
    if (!compiled.ok()) return compiled.failure();
    result->model = std::move(compiled).value();
    if (cache_entry != nullptr && !paged_type.empty()) {
      // OpenVINO's CPU plugin exports such a model without the run-time info its paged attention
      // needs, and then cannot import it: storing it would only cost time and disk at every load.
      notes.push_back("model cache: a model with paged attention is not stored (OpenVINO cannot import it back)");
    } else if (cache_entry != nullptr) {
      const std::string problem = store_compiled_model(runtime, result->model.get(), *cache_entry);
      if (!problem.empty()) notes.push_back("model cache: the compiled model was not stored: " + problem);
    }
  }

  if (Status described = describe(runtime, options, *result); !described.ok()) return described.failure();
  return result;
}

Outcome<std::unique_ptr<CompiledModel>> import_upstream(openvino_api::Runtime& runtime, const void* data, size_t size,
                                                        const CompileOptions& options) {
  if (Status device = check_device(runtime, options.device); !device.ok()) return device.failure();
  auto result = std::make_unique<CompiledModel>();
  result->device = options.device;
  Status imported = import_into(runtime, options, AlignedBytes::copy_of(static_cast<const uint8_t*>(data), size), size,
                                CompiledModel::Source::kUpstream, *result);
  if (!imported.ok()) {
    Failure failure = imported.failure();
    failure.kind = FailureKind::kInvalidBlob;
    failure.message = "a blob of ExecuTorch's own OpenVINO delegate could not be imported: " + failure.message;
    return failure;
  }
  if (Status described = describe(runtime, options, *result); !described.ok()) return described.failure();
  return result;
}

}  // namespace executorch_openvino::delegate
