#include "delegate/compiling/model_compiler.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "delegate/compiling/paged_model.h"

namespace executorch_openvino::delegate {
namespace {

// What the import must have in effect: the compilation properties, as compiled with.
std::vector<openvino_api::Property> import_properties(const CompileOptions& options) {
  std::vector<openvino_api::Property> properties;
  for (const auto& [key, value] : compilation_properties(options)) properties.push_back({key, value});
  return properties;
}

// Imports the compiled model in the first `model_size` bytes of `bytes` with the options in effect.
// On success `result` owns the bytes (the imported model reads them in place) and records `source`;
// on failure `result` is untouched.
Status import_into(openvino_api::Runtime& runtime, const CompileOptions& options, ModelBytes bytes, size_t model_size,
                   CompiledModel::Source source, CompiledModel& result) {
  Outcome<openvino_api::CompiledModelPtr> imported =
      openvino_api::import_model(runtime, bytes.data(), model_size, options.device, import_properties(options));
  if (!imported.ok()) return imported.failure();
  result.backing = std::move(bytes);
  result.model = std::move(imported).value();
  result.source = source;
  return ok_status();
}

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

// One compile(): each source in turn, until one gives the model.
class Compilation {
 public:
  Compilation(openvino_api::Runtime& runtime, const CompileRequest& request, Notes& notes, CompiledModel& result)
      : runtime_(runtime), request_(request), options_(request.options), notes_(notes), result_(result) {}

  Status run() {
    if (from_precompiled() || from_model_cache()) return ok_status();
    return from_ir();
  }

 private:
  // A precompiled model of the blob that fits; whether one was imported (a note says why none was).
  bool from_precompiled() {
    std::string reasons;
    for (const blob::PrecompiledModel& candidate : request_.parsed.precompiled) {
      std::string mismatch = precompiled_mismatch(runtime_, candidate, options_);
      if (mismatch.empty()) {
        const Status imported =
            import_into(runtime_, options_, ModelBytes(AlignedBytes::copy_of(candidate.model.data, candidate.model.size)),
                        candidate.model.size, CompiledModel::Source::kPrecompiled, result_);
        if (imported.ok()) return release_blob();
        mismatch = "importing it failed: " + imported.failure().message;
      }
      reasons += (reasons.empty() ? "" : "; ") + ("the precompiled model for " + candidate.device + " was not used: ") +
                 mismatch;
    }
    if (!reasons.empty()) {
      notes_.push_back(reasons + (request_.cache_entry ? "; trying the model cache" : "; compiling the IR"));
    }
    return false;
  }

  // The model-file cache's file, when one is in use and usable; whether it was imported.
  bool from_model_cache() {
    if (!request_.cache_entry) return false;
    const CacheEntry& entry = *request_.cache_entry;
    std::string problem;
    if (std::optional<CachedModel> cached = read_cached_model(entry, &problem)) {
      const Status imported = import_into(runtime_, options_, std::move(cached->bytes), cached->model_size,
                                          CompiledModel::Source::kModelCache, result_);
      if (imported.ok()) return release_blob();
      problem = "importing it failed: " + imported.failure().message;
    }
    if (!problem.empty()) notes_.push_back("model cache: " + entry.file.u8string() + " not used: " + problem + "; compiling the IR");
    return false;
  }

  // The IR read, paged where asked and possible, compiled, and stored in the model-file cache.
  Status from_ir() {
    Outcome<HeldWeights> weights = request_.take_weights();
    if (!weights.ok()) return weights.failure();
    result_.weights = std::move(weights).value();
    const blob::Span xml = request_.parsed.ir_xml;
    const bool wants_paging = options_.attention == kPagedAttention ||
                              (options_.attention == kAutoAttention && request_.parsed.grown_caches > 0);
    Outcome<openvino_api::ModelPtr> model =
        openvino_api::read_model(runtime_, reinterpret_cast<const char*>(xml.data), xml.size,
                                 result_.weights.data(), result_.weights.size());
    if (!model.ok()) return model.failure();
    release_blob();  // the model holds its XML; the weights hold what of the blob they need
    std::optional<std::string> paged_type;
    if (wants_paging) {
      Outcome<std::optional<std::string>> paged = page_attention(runtime_, options_, model->get(), notes_);
      if (!paged.ok()) return paged.failure();
      paged_type = paged.value();
    }
    std::vector<openvino_api::Property> properties = options_.properties;
    if (paged_type) properties = paged_properties(std::move(properties), *paged_type);
    if (request_.cache_entry) {  // with our cache in use OpenVINO's own would store a second copy
      properties.erase(std::remove_if(properties.begin(), properties.end(),
                                      [](const openvino_api::Property& p) { return p.key == "CACHE_DIR"; }),
                       properties.end());
    }
    Outcome<openvino_api::CompiledModelPtr> compiled =
        openvino_api::compile_model(runtime_, model->get(), options_.device, properties);
    if (!compiled.ok()) return compiled.failure();
    result_.model = std::move(compiled).value();
    store_in_model_cache(paged_type.has_value());
    result_.weights.after_compile();
    return ok_status();
  }

  // The IR's compiled model written to the model-file cache, when one is in use.
  void store_in_model_cache(bool paged) {
    if (!request_.cache_entry) return;
    if (paged) {
      // OpenVINO's CPU plugin exports such a model without the run-time info its paged attention
      // needs, and then cannot import it: storing it would only cost time and disk at every load.
      notes_.push_back("model cache: a model with paged attention is not stored (OpenVINO cannot import it back)");
      return;
    }
    const std::string problem = store_compiled_model(runtime_, result_.model.get(), *request_.cache_entry);
    if (!problem.empty()) notes_.push_back("model cache: the compiled model was not stored: " + problem);
  }

  // Returns true, for the sources that succeed by it.
  bool release_blob() {
    if (request_.release_blob) request_.release_blob();
    return true;
  }

  openvino_api::Runtime& runtime_;
  const CompileRequest& request_;
  const CompileOptions& options_;
  Notes& notes_;
  CompiledModel& result_;
};

}  // namespace

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

Outcome<std::unique_ptr<CompiledModel>> compile(openvino_api::Runtime& runtime, const CompileRequest& request,
                                                Notes& notes) {
  if (Status device = check_device(runtime, request.options.device); !device.ok()) return device.failure();
  auto result = std::make_unique<CompiledModel>();
  result->device = request.options.device;
  if (Status made = Compilation(runtime, request, notes, *result).run(); !made.ok()) return made.failure();
  if (Status described = describe(runtime, request.options, *result); !described.ok()) return described.failure();
  return result;
}

Outcome<std::unique_ptr<CompiledModel>> import_upstream(openvino_api::Runtime& runtime, const void* data, size_t size,
                                                        const CompileOptions& options) {
  if (Status device = check_device(runtime, options.device); !device.ok()) return device.failure();
  auto result = std::make_unique<CompiledModel>();
  result->device = options.device;
  Status imported = import_into(runtime, options, ModelBytes(AlignedBytes::copy_of(static_cast<const uint8_t*>(data), size)), size,
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
