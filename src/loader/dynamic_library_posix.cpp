// POSIX side of the platform shim: the only file that includes <dlfcn.h>.
#include <dlfcn.h>

#include <cstdlib>

#include "loader/dynamic_library.h"

namespace executorch_openvino::loader {

Outcome<DynamicLibrary> DynamicLibrary::open(const std::filesystem::path& path) {
  // RTLD_LOCAL keeps OpenVINO's symbols out of the global namespace, so it cannot interpose on
  // the host's own copies of TBB or libstdc++ helpers. RTLD_NOW surfaces missing dependencies here,
  // as an error, instead of as a crash at first call.
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    return Failure{FailureKind::kRuntimeUnavailable, reason != nullptr ? reason : "dlopen failed"};
  }
  return DynamicLibrary(handle);
}

void DynamicLibrary::close() {
  if (handle_ != nullptr) {
    dlclose(handle_);
    handle_ = nullptr;
  }
}

void DynamicLibrary::keep_loaded_forever() { handle_ = nullptr; }

void* DynamicLibrary::symbol(const char* name) const {
  return handle_ == nullptr ? nullptr : dlsym(handle_, name);
}

std::optional<std::filesystem::path> read_environment_path(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') return std::nullopt;
  return std::filesystem::path(value);
}

std::optional<std::filesystem::path> module_path_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr || info.dli_fname[0] == '\0') return std::nullopt;
  return std::filesystem::path(info.dli_fname);
}

std::string to_utf8(const std::filesystem::path& path) { return path.string(); }

}  // namespace executorch_openvino::loader
