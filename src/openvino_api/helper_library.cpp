#include "openvino_api/helper_library.h"

#include <array>
#include <mutex>

#include "openvino_api/objects.h"
#include "openvino_state/state_abi.h"

namespace executorch_openvino::openvino_api {

namespace fs = std::filesystem;

// The helper's functions with the very types state_abi.h declares (a call through a pointer of
// another type is undefined, and UBSan's function check says so: the helper is built with it too).
struct HelperLibrary::Functions {
  decltype(&eov_state_abi_version) abi_version;
  decltype(&eov_state_reset) reset;
  decltype(&eov_state_reset_prefix) reset_prefix;
  decltype(&eov_state_truncate) truncate;
  decltype(&eov_state_read_int) read_int;
  decltype(&eov_state_snapshot_take) snapshot_take;
  decltype(&eov_state_snapshot_restore) snapshot_restore;
  decltype(&eov_state_snapshot_free) snapshot_free;
  decltype(&eov_state_page_attention) page_attention;
};

namespace {

// The delegate's and the helper's declarations of OpenVINO's opaque handles name the same objects.
::ov_infer_request_t* abi(ov_infer_request* request) { return reinterpret_cast<::ov_infer_request_t*>(request); }
::ov_model_t* abi(ov_model* model) { return reinterpret_cast<::ov_model_t*>(model); }

constexpr size_t kErrorSize = 1024;

std::vector<const char*> c_names(const std::vector<std::string>& names) {
  std::vector<const char*> pointers;
  for (const std::string& name : names) pointers.push_back(name.c_str());
  return pointers;
}

Status status_of(int code, const std::array<char, kErrorSize>& error) {
  if (code == 0) return ok_status();
  return Failure{FailureKind::kOpenVinoError, std::string("OpenVINO variable state: ") + error.data()};
}

}  // namespace

HelperLibrary::HelperLibrary(loader::DynamicLibrary library, std::unique_ptr<Functions> functions)
    : library_(std::move(library)), functions_(std::move(functions)) {}

HelperLibrary::~HelperLibrary() = default;

fs::path HelperLibrary::default_path() {
#if defined(_WIN32)
  const char* name = "executorch_openvino_state.dll";
#else
  const char* name = "libexecutorch_openvino_state.so";
#endif
  std::optional<fs::path> self = loader::module_path_of(reinterpret_cast<const void*>(&HelperLibrary::default_path));
  return self ? self->parent_path() / name : fs::path(name);
}

Outcome<std::unique_ptr<HelperLibrary>> HelperLibrary::open(const fs::path& path) {
  Outcome<loader::DynamicLibrary> opened = loader::DynamicLibrary::open(path);
  if (!opened.ok()) {
    Failure failure = opened.failure();
    failure.message = "the state helper " + path.string() + " could not be opened (rollback, prefix reuse and "
                      "state resets need it; it is built with the delegate on Linux): " + failure.message;
    return failure;
  }
  loader::DynamicLibrary library = std::move(opened).value();
  auto functions = std::make_unique<Functions>();
  bool complete = true;
  auto find = [&](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(library.symbol(name));
    complete = complete && slot != nullptr;
  };
  find(functions->abi_version, "eov_state_abi_version");
  find(functions->reset, "eov_state_reset");
  find(functions->reset_prefix, "eov_state_reset_prefix");
  find(functions->truncate, "eov_state_truncate");
  find(functions->read_int, "eov_state_read_int");
  find(functions->snapshot_take, "eov_state_snapshot_take");
  find(functions->snapshot_restore, "eov_state_snapshot_restore");
  find(functions->snapshot_free, "eov_state_snapshot_free");
  find(functions->page_attention, "eov_state_page_attention");
  if (!complete) {
    return Failure{FailureKind::kRuntimeUnavailable, "the state helper " + path.string() + " lacks a function"};
  }
  if (const int version = functions->abi_version(); version != EOV_STATE_ABI_VERSION) {
    return Failure{FailureKind::kUnsupportedRuntime,
                   "the state helper " + path.string() + " speaks interface " + std::to_string(version) +
                       ", this delegate " + std::to_string(EOV_STATE_ABI_VERSION) + ": install them together"};
  }
  return std::unique_ptr<HelperLibrary>(new HelperLibrary(std::move(library), std::move(functions)));
}

Status HelperLibrary::reset(ov_infer_request* request, const std::vector<std::string>& names) const {
  std::array<char, kErrorSize> error{};
  const std::vector<const char*> pointers = c_names(names);
  return status_of(functions_->reset(abi(request), pointers.data(), pointers.size(), error.data(), error.size()), error);
}

Status HelperLibrary::reset_prefix(ov_infer_request* request, const std::string& prefix) const {
  std::array<char, kErrorSize> error{};
  return status_of(functions_->reset_prefix(abi(request), prefix.c_str(), error.data(), error.size()), error);
}

Status HelperLibrary::truncate(ov_infer_request* request, const std::string& prefix, int axis, int64_t length) const {
  std::array<char, kErrorSize> error{};
  return status_of(functions_->truncate(abi(request), prefix.c_str(), axis, length, error.data(), error.size()), error);
}

Outcome<int64_t> HelperLibrary::read_int(ov_infer_request* request, const std::string& name) const {
  std::array<char, kErrorSize> error{};
  int64_t value = 0;
  if (Status read = status_of(functions_->read_int(abi(request), name.c_str(), &value, error.data(), error.size()), error);
      !read.ok()) {
    return read.failure();
  }
  return value;
}

Outcome<HelperLibrary::Snapshot> HelperLibrary::snapshot(ov_infer_request* request) const {
  std::array<char, kErrorSize> error{};
  eov_state_snapshot* handle = nullptr;
  if (Status taken = status_of(functions_->snapshot_take(abi(request), &handle, error.data(), error.size()), error);
      !taken.ok()) {
    return taken.failure();
  }
  return Snapshot(this, handle);
}

Status HelperLibrary::restore(ov_infer_request* request, const Snapshot& snapshot) const {
  std::array<char, kErrorSize> error{};
  return status_of(functions_->snapshot_restore(abi(request), snapshot.handle_, error.data(), error.size()), error);
}

Outcome<std::string> HelperLibrary::page_attention(ov_model* model, const std::string& cache_type,
                                                  int32_t block_size) const {
  std::array<char, kErrorSize> error{};
  const eov_paging options{cache_type.c_str(), block_size};
  const int code = functions_->page_attention(abi(model), &options, error.data(), error.size());
  if (code == EOV_STATE_OK) return std::string();
  if (code == EOV_STATE_LEFT) return std::string(error.data());
  return Failure{FailureKind::kOpenVinoError, std::string(error.data())};
}

HelperLibrary::Snapshot::Snapshot(Snapshot&& other) noexcept : owner_(other.owner_), handle_(other.handle_) {
  other.handle_ = nullptr;
}

HelperLibrary::Snapshot& HelperLibrary::Snapshot::operator=(Snapshot&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) owner_->functions_->snapshot_free(handle_);
    owner_ = other.owner_;
    handle_ = other.handle_;
    other.handle_ = nullptr;
  }
  return *this;
}

HelperLibrary::Snapshot::~Snapshot() {
  if (handle_ != nullptr) owner_->functions_->snapshot_free(handle_);
}

namespace {

// The OpenVINO release the helper was built against (the openvino wheel this library was built
// with). The helper links that release's libopenvino by its versioned name: with the same release
// already loaded the process keeps one runtime; with another, opening it would load a second.
#ifdef EXECUTORCH_OPENVINO_STATE_HELPER_OV_VERSION
constexpr const char* kHelperRelease = EXECUTORCH_OPENVINO_STATE_HELPER_OV_VERSION;
#else
constexpr const char* kHelperRelease = "";
#endif

ProcessHelper open_helper(const Runtime& runtime) {
  ProcessHelper helper;
  const std::string loaded = runtime.version().to_string();
  if (std::string(kHelperRelease).rfind(loaded, 0) != 0 || loaded.empty()) {
    helper.why_not = "the state helper was built for OpenVINO " +
                     std::string(*kHelperRelease ? kHelperRelease : "(none: not built on this platform)") +
                     " and the runtime loaded is " + loaded;
    return helper;
  }
  const fs::path path =
      loader::read_environment_path("EXECUTORCH_OPENVINO_STATE_LIBRARY").value_or(HelperLibrary::default_path());
  helper.path = path;
  Outcome<std::unique_ptr<HelperLibrary>> opened = HelperLibrary::open(path);
  if (!opened.ok()) {
    helper.why_not = opened.failure().message;
    return helper;
  }
  helper.library = std::move(opened).value().release();  // kept for the process
  return helper;
}

// state = x (first call), then state + x: one i32 variable the probe reads back. No constants.
constexpr const char* kProbeModel = R"IR(<?xml version="1.0"?>
<net name="eov_state_probe" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="1" element_type="i32" />
      <output><port id="0" precision="I32" names="x"><dim>1</dim></port></output>
    </layer>
    <layer id="1" name="read" type="ReadValue" version="opset6">
      <data variable_id="eov_probe" variable_type="i32" variable_shape="1" />
      <input><port id="0" precision="I32"><dim>1</dim></port></input>
      <output><port id="1" precision="I32"><dim>1</dim></port></output>
    </layer>
    <layer id="2" name="sum" type="Add" version="opset1">
      <input><port id="0" precision="I32"><dim>1</dim></port><port id="1" precision="I32"><dim>1</dim></port></input>
      <output><port id="2" precision="I32" names="y"><dim>1</dim></port></output>
    </layer>
    <layer id="3" name="assign" type="Assign" version="opset6">
      <data variable_id="eov_probe" />
      <input><port id="0" precision="I32"><dim>1</dim></port></input>
      <output><port id="1" precision="I32"><dim>1</dim></port></output>
    </layer>
    <layer id="4" name="y" type="Result" version="opset1">
      <input><port id="0" precision="I32"><dim>1</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="0" />
    <edge from-layer="1" from-port="1" to-layer="2" to-port="0" />
    <edge from-layer="0" from-port="0" to-layer="2" to-port="1" />
    <edge from-layer="2" from-port="2" to-layer="3" to-port="0" />
    <edge from-layer="2" from-port="2" to-layer="4" to-port="0" />
  </edges>
</net>
)IR";

Failure probe_failure(const std::string& step, const Failure& failure) {
  return Failure{failure.kind, "the state helper's probe failed at " + step + ": " + failure.message};
}

}  // namespace

const ProcessHelper& process_helper(const Runtime& runtime) {
  static std::once_flag once;
  static ProcessHelper helper;
  std::call_once(once, [&] { helper = open_helper(runtime); });
  return helper;
}

std::string helper_release() { return kHelperRelease; }

Status probe_helper(Runtime& runtime, const HelperLibrary& helper) {
  auto model = read_model(runtime, kProbeModel, std::char_traits<char>::length(kProbeModel), nullptr, 0);
  if (!model.ok()) return probe_failure("reading its model", model.failure());
  auto compiled = compile_model(runtime, model.value().get(), "CPU", {});
  if (!compiled.ok()) return probe_failure("compiling its model", compiled.failure());
  auto request = create_infer_request(runtime, compiled.value().get());
  if (!request.ok()) return probe_failure("making an infer request", request.failure());
  int32_t x = 21;
  const int64_t dims[1] = {1};
  auto input = wrap_host_memory(runtime, ElementType::kI32, dims, 1, &x);
  if (!input.ok()) return probe_failure("making its input", input.failure());
  if (Status set = set_input(runtime, request.value().get(), 0, input.value().get()); !set.ok()) {
    return probe_failure("setting its input", set.failure());
  }
  if (Status ran = infer(runtime, request.value().get()); !ran.ok()) return probe_failure("running", ran.failure());
  // The variable holds x + x after one call.
  Outcome<int64_t> read = helper.read_int(request.value().get(), "eov_probe");
  if (!read.ok()) return probe_failure("reading the variable", read.failure());
  if (read.value() != 2 * x) {
    return Failure{FailureKind::kOpenVinoError, "the state helper's probe read " + std::to_string(read.value()) +
                                                    " from a variable that holds " + std::to_string(2 * x)};
  }
  Outcome<HelperLibrary::Snapshot> taken = helper.snapshot(request.value().get());
  if (!taken.ok()) return probe_failure("taking a snapshot", taken.failure());
  if (Status reset = helper.reset(request.value().get(), {}); !reset.ok()) {
    return probe_failure("resetting the variable", reset.failure());
  }
  return ok_status();
}

}  // namespace executorch_openvino::openvino_api
