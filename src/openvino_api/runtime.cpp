#include "openvino_api/runtime.h"

#include <cstring>

#include "loader/runtime_locator.h"

namespace executorch_openvino::openvino_api {
namespace {

const char* status_name(StatusCode status) {
  switch (status) {
    case kOk: return "OK";
    case kGeneralError: return "GENERAL_ERROR";
    case kNotImplemented: return "NOT_IMPLEMENTED";
    case kNetworkNotLoaded: return "NETWORK_NOT_LOADED";
    case kParameterMismatch: return "PARAMETER_MISMATCH";
    case kNotFound: return "NOT_FOUND";
    case kOutOfBounds: return "OUT_OF_BOUNDS";
    case kUnexpected: return "UNEXPECTED";
    case kRequestBusy: return "REQUEST_BUSY";
    case kResultNotReady: return "RESULT_NOT_READY";
    case kNotAllocated: return "NOT_ALLOCATED";
    case kInferNotStarted: return "INFER_NOT_STARTED";
    case kNetworkNotRead: return "NETWORK_NOT_READ";
    case kInferCancelled: return "INFER_CANCELLED";
    case kInvalidCParam: return "INVALID_C_PARAM";
    case kUnknownCError: return "UNKNOWN_C_ERROR";
    case kNotImplementCMethod: return "NOT_IMPLEMENT_C_METHOD";
    case kUnknownException: return "UNKNOWN_EXCEPTION";
    default: return "unknown status";
  }
}

// The last load attempt of instance(): what it was asked to load, and how it ended.
struct InstanceState {
  std::mutex mutex;
  bool attempted = false;
  std::optional<std::filesystem::path> configured;
  Runtime* runtime = nullptr;  // never deleted: see instance()
  std::optional<Failure> failure;
  std::optional<std::filesystem::path> default_path;
};

InstanceState& instance_state() {
  // Leaked on purpose: nothing here may be torn down by a static destructor, which can run while
  // other threads still execute models, or (in a DLL) under the loader lock.
  static InstanceState* state = new InstanceState();
  return *state;
}

}  // namespace

Runtime::Runtime(loader::DynamicLibrary library, std::filesystem::path path, SymbolTable api)
    : library_(std::move(library)), library_path_(std::move(path)), api_(api) {}

Runtime::~Runtime() {
  if (core_ != nullptr) api_.ov_core_free(core_);
}

Outcome<std::unique_ptr<Runtime>> Runtime::load(const std::optional<std::filesystem::path>& configured) {
  Outcome<loader::LocatedLibrary> located = loader::open_openvino_c(configured);
  if (!located.ok()) return located.failure();
  const std::string where = loader::to_utf8(located->path);

  Outcome<SymbolTable> api = resolve_symbols(located->library);
  if (!api.ok()) {
    return Failure{FailureKind::kRuntimeUnavailable,
                   "the OpenVINO C library at " + where + " is unusable: " + api.failure().message +
                       ". Fix: point " + loader::kLibPathVariable +
                       " at a complete OpenVINO runtime (the C library of the openvino pip package)"};
  }
  std::unique_ptr<Runtime> runtime(new Runtime(std::move(located->library), located->path, api.value()));
  if (Status version = runtime->check_version(); !version.ok()) {
    return Failure{version.failure().kind, "the OpenVINO C library at " + where + ": " + version.failure().message};
  }
  if (Status codes = runtime->verify_element_codes(); !codes.ok()) {
    return Failure{codes.failure().kind, "the OpenVINO C library at " + where + ": " + codes.failure().message};
  }
  return runtime;
}

void Runtime::set_default_path(const std::filesystem::path& path) {
  InstanceState& state = instance_state();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.default_path = path.empty() ? std::nullopt : std::optional<std::filesystem::path>(path);
}

std::optional<std::filesystem::path> Runtime::configured_path() {
  if (auto from_environment = loader::read_environment_path(loader::kLibPathVariable)) return from_environment;
  InstanceState& state = instance_state();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.default_path;
}

Outcome<Runtime*> Runtime::instance() {
  InstanceState& state = instance_state();
  std::optional<std::filesystem::path> configured = configured_path();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.runtime != nullptr) return state.runtime;

  if (state.attempted && state.configured == configured) return *state.failure;

  state.attempted = true;
  state.configured = configured;
  Outcome<std::unique_ptr<Runtime>> loaded = load(configured);
  if (!loaded.ok()) {
    state.failure = loaded.failure();
    return loaded.failure();
  }
  // The process-wide runtime stays loaded until the process ends. Unloading it would pull code out
  // from under TBB worker threads OpenVINO started, and on Windows our static destructors run under
  // the loader lock, where freeing a library or joining threads can deadlock.
  state.runtime = loaded.value().release();
  state.runtime->library_.keep_loaded_forever();
  state.failure.reset();
  return state.runtime;
}

Status Runtime::check_version() {
  Version version{nullptr, nullptr};
  StatusCode status = api_.ov_get_openvino_version(&version);
  if (status != kOk || version.build_number == nullptr) {
    return failure(status, "reading the runtime version (ov_get_openvino_version)", FailureKind::kUnsupportedRuntime);
  }
  build_number_ = version.build_number;
  api_.ov_version_free(&version);

  std::optional<RuntimeVersion> parsed = parse_build_number(build_number_);
  if (!parsed) {
    return Failure{FailureKind::kUnsupportedRuntime, "cannot parse the OpenVINO version '" + build_number_ + "'"};
  }
  version_ = *parsed;
  codes_ = ElementCodes::for_version(version_);
  if (!is_supported(version_) || !codes_) {
    return Failure{FailureKind::kUnsupportedRuntime,
                   "OpenVINO " + build_number_ + " is not supported; this delegate supports OpenVINO " +
                       supported_range_text() + ". Fix: install a supported runtime (pip install '" +
                       loader::pip_requirement() + "') and point " + loader::kLibPathVariable + " at it"};
  }
  return ok_status();
}

// Creates a one-element tensor of a few types by our numbering and checks the byte size the
// runtime reports. A numbering that does not fit this runtime would silently reinterpret every
// tensor (u8 read as u64, f32 as f16), so it is refused here instead.
Status Runtime::verify_element_codes() const {
  static constexpr ElementType kProbes[] = {ElementType::kBoolean, ElementType::kF16, ElementType::kF32,
                                            ElementType::kI64, ElementType::kU8, ElementType::kF64};
  alignas(16) unsigned char storage[16] = {};
  int64_t dims[1] = {1};
  for (ElementType type : kProbes) {
    ov_tensor* tensor = nullptr;
    StatusCode status = api_.ov_tensor_create_from_host_ptr(codes_->code(type), Shape{1, dims}, storage, &tensor);
    size_t bytes = 0;
    if (status == kOk) status = api_.ov_tensor_get_byte_size(tensor, &bytes);
    if (tensor != nullptr) api_.ov_tensor_free(tensor);
    if (status != kOk || bytes != element_size(type)) {
      return Failure{FailureKind::kUnsupportedRuntime,
                     std::string("element-type numbering ") + codes_->numbering_name() + " chosen for OpenVINO " +
                         build_number_ + " does not match the runtime (" + element_type_name(type) +
                         " reported " + std::to_string(bytes) + " bytes, expected " +
                         std::to_string(element_size(type)) + ")"};
    }
  }
  return ok_status();
}

Outcome<ov_core*> Runtime::core() {
  std::lock_guard<std::mutex> lock(core_mutex_);
  if (core_ == nullptr) {
    StatusCode status = api_.ov_core_create(&core_);
    if (status != kOk) {
      core_ = nullptr;
      return failure(status, "creating the OpenVINO core");
    }
    ++cores_created_;
  }
  return core_;
}

int Runtime::cores_created() const {
  std::lock_guard<std::mutex> lock(core_mutex_);
  return cores_created_;
}

Outcome<std::vector<std::string>> Runtime::available_devices() {
  Outcome<ov_core*> shared_core = core();
  if (!shared_core.ok()) return shared_core.failure();
  std::lock_guard<std::mutex> lock(core_mutex_);
  if (!devices_) {
    AvailableDevices found{nullptr, 0};
    StatusCode status = api_.ov_core_get_available_devices(core_, &found);
    if (status != kOk) return failure(status, "listing the available devices");
    std::vector<std::string> names;
    for (size_t i = 0; i < found.size; ++i) names.emplace_back(found.devices[i]);
    api_.ov_available_devices_free(&found);
    devices_ = std::move(names);
  }
  return *devices_;
}

Failure Runtime::failure(StatusCode status, const std::string& doing, FailureKind kind) const {
  std::string message = doing + " failed: " + status_name(status) + " (" + std::to_string(status) + ")";
  if (api_.ov_get_last_err_msg != nullptr) {
    // Process-wide in OpenVINO, so another thread may have replaced it; good enough for a message.
    if (const char* detail = api_.ov_get_last_err_msg()) {
      if (detail[0] != '\0') message += ": " + std::string(detail);
      api_.ov_free(detail);
    }
  }
  if (kind == FailureKind::kOpenVinoError && status == kNotAllocated) kind = FailureKind::kOutOfMemory;
  return Failure{kind, message};
}

}  // namespace executorch_openvino::openvino_api
