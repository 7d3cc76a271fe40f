// A DLL that uses the process-wide OpenVINO runtime the way the delegate DLL does: it holds the
// loader and openvino_api layers and exports one C function that calls Runtime::instance(). The
// test loads it, calls it, frees it, and checks the runtime it loaded is still there.
#include <cstdio>
#include <cstring>
#include <string>

#include "openvino_api/runtime.h"

namespace {
void copy_out(const std::string& text, char* out, size_t size) {
  if (out == nullptr || size == 0) return;
  std::snprintf(out, size, "%s", text.c_str());
}
}  // namespace

// Loads (or finds) the process-wide runtime. On success writes "<build number>\n<library path>"
// to `out` and returns 0; on failure writes the failure message and returns the failure's system
// code, or -1 when it has none.
extern "C" __declspec(dllexport) int eov_probe_load_runtime(char* out, size_t size) {
  using executorch_openvino::Outcome;
  using executorch_openvino::openvino_api::Runtime;
  Outcome<Runtime*> runtime = Runtime::instance();
  if (!runtime.ok()) {
    copy_out(runtime.failure().message, out, size);
    return runtime.failure().system_code != 0 ? runtime.failure().system_code : -1;
  }
  copy_out(runtime.value()->build_number() + "\n" +
               executorch_openvino::loader::to_utf8(runtime.value()->library_path()),
           out, size);
  return 0;
}
