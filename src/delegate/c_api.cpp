// The library's C entry points (include/executorch_openvino/backend.h), for callers that load it
// at run time, such as the Python package.
#include <executorch_openvino/backend.h>

#include <string>

#include "delegate/errors.h"
#include "delegate/openvino_backend.h"
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
  executorch_openvino::ov::Runtime::set_default_path(path == nullptr ? "" : path);
}

EXECUTORCH_OPENVINO_API const char* executorch_openvino_describe_runtime(void) {
  namespace ov = executorch_openvino::ov;
  thread_local std::string text;
  auto configured = ov::Runtime::configured_path();
  text = "configured=" + (configured ? one_line(configured->string()) : std::string()) + "\n";
  auto runtime = ov::Runtime::instance();
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
  if (!devices.ok()) text += "error=" + devices.failure().message + "\n";
  return text.c_str();
}

}  // extern "C"
