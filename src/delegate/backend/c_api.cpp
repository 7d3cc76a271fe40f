// The library's C entry points (include/executorch_openvino/backend.h), for callers that load it
// at run time, such as the Python package.
#include <executorch_openvino/backend.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "delegate/backend/errors.h"
#include "delegate/backend/openvino_backend.h"
#include "delegate/compiling/compiled_model_cache.h"
#include "delegate/conversation/call_sequences.h"
#include "delegate/conversation/encoder_caches.h"
#include "delegate/options/runtime_options.h"
#include "delegate/execution/saved_prefixes.h"
#include "loader/dynamic_library.h"
#include "openvino_api/helper_library.h"
#include "openvino_api/runtime.h"

namespace {

// Replaces characters that would break the line-oriented description.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

extern "C" {

EXECUTORCH_OPENVINO_API const char* executorch_openvino_backend_id(void) { return EXECUTORCH_OPENVINO_BACKEND_ID; }

EXECUTORCH_OPENVINO_API int executorch_openvino_registration_status(void) {
  return static_cast<int>(executorch_openvino::registration_status);
}

EXECUTORCH_OPENVINO_API const char* executorch_openvino_last_error(void) {
  return executorch_openvino::delegate::last_error();
}

EXECUTORCH_OPENVINO_API void executorch_openvino_clear_last_error(void) {
  executorch_openvino::delegate::clear_last_error();
}

EXECUTORCH_OPENVINO_API void executorch_openvino_set_default_runtime_path(const char* path) {
  executorch_openvino::openvino_api::Runtime::set_default_path(path == nullptr ? "" : path);
}

EXECUTORCH_OPENVINO_API const char* executorch_openvino_describe_runtime(void) {
  namespace openvino_api = executorch_openvino::openvino_api;
  thread_local std::string text;
  auto configured = openvino_api::Runtime::configured_path();
  text = "configured=" + (configured ? one_line(configured->string()) : std::string()) + "\n";
  auto runtime = openvino_api::Runtime::instance();
  if (!runtime.ok()) {
    text += "loaded=0\nerror=" + runtime.failure().message + "\n";
    return text.c_str();
  }
  text += "loaded=1\n";
  text += "library=" + one_line(runtime.value()->library_path().string()) + "\n";
  text += "version=" + one_line(runtime.value()->build_number()) + "\n";
  auto devices = runtime.value()->available_devices();
  std::string listed;
  if (devices.ok()) {
    for (const std::string& device : devices.value()) listed += (listed.empty() ? "" : ",") + device;
  }
  text += "devices=" + listed + "\n";
  text += "cores_created=" + std::to_string(runtime.value()->cores_created()) + "\n";
  const executorch_openvino::delegate::CacheStats stats = executorch_openvino::delegate::compiled_model_stats();
  text += "compiled_models_created=" + std::to_string(stats.compiled) + "\n";
  text += "compiled_models_reused=" + std::to_string(stats.reused) + "\n";
  text += "compiled_models_live=" + std::to_string(stats.live) + "\n";
  if (!devices.ok()) text += "error=" + devices.failure().message + "\n";
  return text.c_str();
}

EXECUTORCH_OPENVINO_API const char* executorch_openvino_describe_state_helper(void) {
  namespace openvino_api = executorch_openvino::openvino_api;
  thread_local std::string text;
  const std::string release = openvino_api::helper_release();
  text = "built_for=" + release + "\n";
  auto runtime = openvino_api::Runtime::instance();
  if (!runtime.ok()) {
    text += "runtime=\npath=\nloaded=0\nworks=0\nerror=the OpenVINO runtime did not load: " +
            runtime.failure().message + "\n";
    return text.c_str();
  }
  text += "runtime=" + one_line(runtime.value()->version().to_string()) + "\n";
  const openvino_api::ProcessHelper& helper = openvino_api::process_helper(*runtime.value());
  text += "path=" + one_line(helper.path.string()) + "\n";
  if (helper.library == nullptr) {
    text += "loaded=0\nworks=0\nerror=" + helper.why_not + "\n";
    return text.c_str();
  }
  text += "loaded=1\n";
  executorch_openvino::Status probed = openvino_api::probe_helper(*runtime.value(), *helper.library);
  text += probed.ok() ? "works=1\n" : "works=0\nerror=" + probed.failure().message + "\n";
  return text.c_str();
}

EXECUTORCH_OPENVINO_API int executorch_openvino_set_option(const char* key, const char* value) {
  namespace delegate = executorch_openvino::delegate;
  delegate::clear_last_error();
  executorch_openvino::Status set =
      delegate::set_process_option(key == nullptr ? "" : key, value == nullptr ? "" : value);
  return set.ok() ? 0 : static_cast<int>(delegate::report(set.failure()));
}

EXECUTORCH_OPENVINO_API int executorch_openvino_save_state(const char* name) {
  namespace delegate = executorch_openvino::delegate;
  delegate::clear_last_error();
  executorch_openvino::Outcome<size_t> saved = delegate::save_prefixes(name == nullptr ? "" : name);
  return saved.ok() ? 0 : static_cast<int>(delegate::report(saved.failure()));
}

EXECUTORCH_OPENVINO_API int executorch_openvino_restore_state(const char* name) {
  namespace delegate = executorch_openvino::delegate;
  delegate::clear_last_error();
  executorch_openvino::Outcome<size_t> restored = delegate::restore_prefixes(name == nullptr ? "" : name);
  return restored.ok() ? 0 : static_cast<int>(delegate::report(restored.failure()));
}

EXECUTORCH_OPENVINO_API int executorch_openvino_forget_state(const char* name) {
  return static_cast<int>(executorch_openvino::delegate::forget_prefixes(name == nullptr ? "" : name));
}

EXECUTORCH_OPENVINO_API void executorch_openvino_set_load_owner(uint64_t owner) {
  executorch_openvino::delegate::set_load_owner(owner);
}

EXECUTORCH_OPENVINO_API int executorch_openvino_save_state_of(uint64_t owner, const char* name) {
  namespace delegate = executorch_openvino::delegate;
  delegate::clear_last_error();
  executorch_openvino::Outcome<size_t> saved = delegate::save_prefixes(name == nullptr ? "" : name, owner);
  return saved.ok() ? 0 : static_cast<int>(delegate::report(saved.failure()));
}

EXECUTORCH_OPENVINO_API int executorch_openvino_restore_state_of(uint64_t owner, const char* name) {
  namespace delegate = executorch_openvino::delegate;
  delegate::clear_last_error();
  executorch_openvino::Outcome<size_t> restored = delegate::restore_prefixes(name == nullptr ? "" : name, owner);
  return restored.ok() ? 0 : static_cast<int>(delegate::report(restored.failure()));
}

EXECUTORCH_OPENVINO_API int executorch_openvino_forget_state_of(uint64_t owner, const char* name) {
  return static_cast<int>(executorch_openvino::delegate::forget_prefixes(name == nullptr ? "" : name, owner));
}

EXECUTORCH_OPENVINO_API void executorch_openvino_set_sequences(const int64_t* slots, const int64_t* counts,
                                                               size_t count) {
  std::vector<executorch_openvino::delegate::CallSequence> sequences;
  for (size_t i = 0; slots != nullptr && counts != nullptr && i < count; ++i) sequences.push_back({slots[i], counts[i]});
  executorch_openvino::delegate::set_call_sequences(std::move(sequences));
}

EXECUTORCH_OPENVINO_API void executorch_openvino_promise_same_encoder_states(int promised) {
  executorch_openvino::delegate::promise_same_encoder_states(promised != 0);
}

EXECUTORCH_OPENVINO_API int executorch_openvino_write_state(uint64_t owner, const char* name, const char* path,
                                                            const void* data, size_t size) {
  namespace delegate = executorch_openvino::delegate;
  delegate::clear_last_error();
  if (name == nullptr || path == nullptr || (data == nullptr && size > 0))
    return static_cast<int>(delegate::report(executorch_openvino::Failure{
        executorch_openvino::FailureKind::kInvalidArgument, "write_state needs a name, a path and the bytes given"}));
  const auto* bytes = static_cast<const uint8_t*>(data);
  executorch_openvino::Status written =
      delegate::write_prefixes(name, owner, path, std::vector<uint8_t>(bytes, bytes + size));
  return written.ok() ? 0 : static_cast<int>(delegate::report(written.failure()));
}

EXECUTORCH_OPENVINO_API int executorch_openvino_read_state(uint64_t owner, const char* name, const char* path,
                                                           void* data, size_t capacity, size_t* size) {
  namespace delegate = executorch_openvino::delegate;
  delegate::clear_last_error();
  if (name == nullptr || path == nullptr || size == nullptr || (data == nullptr && capacity > 0))
    return static_cast<int>(delegate::report(executorch_openvino::Failure{
        executorch_openvino::FailureKind::kInvalidArgument, "read_state needs a name, a path and room for a size"}));
  executorch_openvino::Outcome<std::vector<uint8_t>> read = delegate::read_prefixes(name, owner, path);
  if (!read.ok()) return static_cast<int>(delegate::report(read.failure()));
  const std::vector<uint8_t>& application = read.value();
  *size = application.size();
  if (!application.empty() && capacity > 0)
    std::memcpy(data, application.data(), std::min(capacity, application.size()));
  return 0;
}

EXECUTORCH_OPENVINO_API const char* executorch_openvino_get_option(const char* key) {
  thread_local std::string value;
  value = executorch_openvino::delegate::effective_process_option(key == nullptr ? "" : key).value_or("");
  return value.c_str();
}

EXECUTORCH_OPENVINO_API const char* executorch_openvino_option_keys(void) {
  thread_local std::string keys;
  keys = executorch_openvino::delegate::option_keys_text();
  return keys.c_str();
}

EXECUTORCH_OPENVINO_API const char* executorch_openvino_describe_compiled_models(void) {
  thread_local std::string text;
  text = executorch_openvino::delegate::describe_compiled_models();
  return text.c_str();
}

EXECUTORCH_OPENVINO_API int executorch_openvino_registered_upstream_name(void) {
  return executorch_openvino::registered_upstream_name() ? 1 : 0;
}

EXECUTORCH_OPENVINO_API const char* executorch_openvino_backend_library(const char* backend_id) {
  thread_local std::string path;
  path.clear();
  executorch::runtime::BackendInterface* backend =
      executorch::runtime::get_backend_class(backend_id == nullptr ? "" : backend_id);
  if (backend == nullptr) return path.c_str();
  // The object may live on the heap; its virtual table lives in the library that defines it.
  const void* vtable = *reinterpret_cast<const void* const*>(backend);
  if (auto found = executorch_openvino::loader::module_path_of(vtable)) path = found->string();
  return path.c_str();
}

}  // extern "C"
