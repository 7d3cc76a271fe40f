// The platform shim: open a shared library, find a symbol, say why not. Mechanism only: no
// search policy, no ExecuTorch, no OpenVINO. One implementation file per platform
// (dynamic_library_posix.cpp, dynamic_library_win.cpp) is chosen by CMake.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "common/outcome.h"

namespace executorch_openvino::loader {

class DynamicLibrary {
 public:
  // `path` is either a bare file name (the platform's own search applies) or a path (loaded from
  // exactly there). On failure the message holds the system's reason; the caller adds context.
  static Outcome<DynamicLibrary> open(const std::filesystem::path& path);

  DynamicLibrary(DynamicLibrary&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept {
    if (this != &other) {
      close();
      handle_ = other.handle_;
      other.handle_ = nullptr;
    }
    return *this;
  }
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary() { close(); }

  // Address of an exported symbol, or nullptr when the library does not export it.
  void* symbol(const char* name) const;

  // Keep the library loaded for the rest of the process: the handle is forgotten, never closed
  // (and on Windows the module is pinned, so no other FreeLibrary can unload it either).
  void keep_loaded_forever();

 private:
  explicit DynamicLibrary(void* handle) : handle_(handle) {}
  void close();  // per platform: dlclose / FreeLibrary, unless kept or moved from

  void* handle_ = nullptr;
};

// The value of an environment variable read now (not cached), or nullopt when unset or empty.
// Wide on Windows, so non-ASCII paths survive.
std::optional<std::filesystem::path> read_environment_path(const char* name);

// The file of the shared library (or executable) that contains `address`, or nullopt.
std::optional<std::filesystem::path> module_path_of(const void* address);

// A path as UTF-8 text for messages, without throwing.
std::string to_utf8(const std::filesystem::path& path);

}  // namespace executorch_openvino::loader
