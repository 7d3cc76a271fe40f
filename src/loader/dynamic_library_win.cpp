// Windows side of the platform shim: the only file that includes <windows.h>.
//
// Search rules, decided per call and never by changing process-wide state (no
// SetDefaultDllDirectories, AddDllDirectory or SetDllDirectory, which would also change how the
// host application and OpenVINO itself find their libraries):
//   - a bare name ("openvino_c.dll") is looked up in the application's folder, the user-added
//     folders and System32 only (LOAD_LIBRARY_SEARCH_DEFAULT_DIRS), never in the current folder
//     or along PATH, where anyone could plant a DLL of that name;
//   - a path is made absolute first and loaded from exactly there, with its folder searched first
//     for its dependencies (LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR), so openvino.dll and tbb12.dll load
//     from beside openvino_c.dll. That flag requires an absolute path, hence GetFullPathNameW.
#ifndef NOMINMAX
#define NOMINMAX
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <string>

#include "loader/dynamic_library.h"

namespace executorch_openvino::loader {
namespace {

HMODULE as_module(void* handle) { return static_cast<HMODULE>(handle); }

// UTF-16 to UTF-8; empty on failure. Never throws except for allocation failure, which callers
// that must not throw catch.
std::string narrow(const wchar_t* text, size_t length) {
  if (length == 0) return {};
  const int wide_length = static_cast<int>(length);
  const int size = WideCharToMultiByte(CP_UTF8, 0, text, wide_length, nullptr, 0, nullptr, nullptr);
  if (size <= 0) return {};
  std::string result(static_cast<size_t>(size), '\0');
  WideCharToMultiByte(CP_UTF8, 0, text, wide_length, &result[0], size, nullptr, nullptr);
  return result;
}

std::wstring widen(const char* text) {
  const int size = MultiByteToWideChar(CP_UTF8, 0, text, -1, nullptr, 0);
  if (size <= 1) return {};
  std::wstring result(static_cast<size_t>(size), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, text, -1, &result[0], size);
  result.resize(static_cast<size_t>(size) - 1);  // drop the terminating NUL
  return result;
}

// The system's text for an error number, CR/LF and trailing blanks trimmed, as UTF-8, with the
// number. Inserts are not expanded (IGNORE_INSERTS), so the "%1" of some texts (193: "%1 is not a
// valid Win32 application.") is replaced here; the caller names the file.
std::string system_message(DWORD code) {
  wchar_t* buffer = nullptr;
  const DWORD length = FormatMessageW(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code,
      0, reinterpret_cast<LPWSTR>(&buffer), 0, nullptr);
  std::string text;
  if (length > 0 && buffer != nullptr) {
    size_t end = length;
    while (end > 0 && (buffer[end - 1] == L'\r' || buffer[end - 1] == L'\n' || buffer[end - 1] == L' ')) --end;
    text = narrow(buffer, end);
  }
  if (buffer != nullptr) LocalFree(buffer);
  if (text.empty()) text = "unknown error";
  for (size_t at = text.find("%1"); at != std::string::npos; at = text.find("%1", at)) text.replace(at, 2, "the file");
  return text + " (Windows error " + std::to_string(code) + ")";
}

// A name without any separator: left to the system's search. Anything else ("libs\x.dll",
// "./x.dll", "C:x.dll", "C:/a/x.dll", "\\server\share\x.dll") is a path.
bool is_bare_name(const std::wstring& name) { return name.find_first_of(L"\\/:") == std::wstring::npos; }

// GetFullPathNameW with the two-call pattern; empty on failure (GetLastError() says why).
std::wstring absolute_path(const std::wstring& path) {
  std::wstring buffer(MAX_PATH, L'\0');
  for (;;) {
    const DWORD length = GetFullPathNameW(path.c_str(), static_cast<DWORD>(buffer.size()), &buffer[0], nullptr);
    if (length == 0) return {};
    if (length < buffer.size()) {  // success: length excludes the NUL
      buffer.resize(length);
      return buffer;
    }
    buffer.assign(length, L'\0');  // too small: length includes the NUL
  }
}

bool file_exists(const std::wstring& path) {
  const DWORD attributes = GetFileAttributesW(path.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) == 0;
}

// Loads with critical-error dialogs (e.g. "insert a disk") suppressed for this thread only. The
// result and GetLastError() are read before the error mode is restored.
HMODULE load_quietly(const std::wstring& name, DWORD flags, DWORD* error) {
  DWORD previous_mode = 0;
  const bool mode_changed = SetThreadErrorMode(SEM_FAILCRITICALERRORS, &previous_mode) != FALSE;
  HMODULE module = LoadLibraryExW(name.c_str(), nullptr, flags);
  *error = module == nullptr ? GetLastError() : 0;  // only meaningful when the call failed
  if (mode_changed) SetThreadErrorMode(previous_mode, nullptr);
  return module;
}

Failure load_failure(DWORD code, std::string message) {
  Failure failure{FailureKind::kRuntimeUnavailable, std::move(message)};
  failure.system_code = static_cast<int>(code);
  return failure;
}

}  // namespace

Outcome<DynamicLibrary> DynamicLibrary::open(const std::filesystem::path& path) {
  const std::wstring name = path.wstring();  // the native (UTF-16) form: any Unicode survives
  DWORD error = 0;

  if (is_bare_name(name)) {
    HMODULE module = load_quietly(name, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS, &error);
    if (module != nullptr) return DynamicLibrary(module);
    std::string message = system_message(error);
    if (error == ERROR_MOD_NOT_FOUND) {
      message += "; searched the application's folder and the system folders (not the current folder or PATH)";
    }
    return load_failure(error, std::move(message));
  }

  const std::wstring full = absolute_path(name);
  if (full.empty()) {
    const DWORD code = GetLastError();
    return load_failure(code, "cannot make the path absolute: " + system_message(code));
  }
  HMODULE module = load_quietly(full, LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS, &error);
  if (module != nullptr) return DynamicLibrary(module);

  std::string message = system_message(error);
  if (full != name) message += " [resolved to " + narrow(full.data(), full.size()) + "]";
  // Windows says "module not found" both for the file and for any DLL it imports.
  if (error == ERROR_MOD_NOT_FOUND && file_exists(full)) {
    message += "; the file exists, so a DLL it depends on was found neither beside it nor in the system folders";
  }
  return load_failure(error, std::move(message));
}

// Freeing a library this object owns is fine here: only the process-wide runtime lives until exit
// (and so would be freed from a static destructor), and that one is kept, never closed.
void DynamicLibrary::close() {
  if (handle_ != nullptr) {
    FreeLibrary(as_module(handle_));
    handle_ = nullptr;
  }
}

void DynamicLibrary::keep_loaded_forever() {
  if (handle_ == nullptr) return;
  // The runtime is never unloaded. At process exit the static destructors of a DLL (ours, when the
  // delegate is a DLL) run under the loader lock, where FreeLibrary, or OpenVINO joining its TBB
  // worker threads while unloading, can deadlock; and code of the runtime may still be running on
  // those threads. So the handle is forgotten instead of freed, and the module is pinned, so that a
  // stray FreeLibrary elsewhere in the process cannot unload it either. The module's base address
  // lies inside the module, so FROM_ADDRESS with the handle names exactly this module.
  HMODULE pinned = nullptr;
  GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN | GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS,
                     reinterpret_cast<LPCWSTR>(handle_), &pinned);
  handle_ = nullptr;
}

void* DynamicLibrary::symbol(const char* name) const {
  if (handle_ == nullptr) return nullptr;
  // FARPROC to void* through a generic function pointer: no -Wcast-function-type; callers cast to
  // the exact signature. GetLastError() is ERROR_PROC_NOT_FOUND (127) when this returns nullptr.
  const FARPROC address = GetProcAddress(as_module(handle_), name);
  return reinterpret_cast<void*>(reinterpret_cast<void (*)()>(address));
}

std::optional<std::filesystem::path> read_environment_path(const char* name) {
  const std::wstring wide_name = widen(name);
  if (wide_name.empty()) return std::nullopt;
  std::wstring value;
  DWORD size = GetEnvironmentVariableW(wide_name.c_str(), nullptr, 0);
  // 0: unset (ERROR_ENVVAR_NOT_FOUND) or set but empty; both mean unset. The value may change
  // between the two calls, so retry until it fits.
  while (size > 0) {
    value.assign(size, L'\0');
    const DWORD length = GetEnvironmentVariableW(wide_name.c_str(), &value[0], size);
    if (length == 0) return std::nullopt;
    if (length < size) {
      value.resize(length);
      return std::filesystem::path(value);
    }
    size = length;
  }
  return std::nullopt;
}

std::optional<std::filesystem::path> module_path_of(const void* address) {
  HMODULE module = nullptr;
  if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          static_cast<LPCWSTR>(address), &module)) {
    return std::nullopt;
  }
  std::wstring buffer(MAX_PATH, L'\0');
  for (;;) {
    const DWORD length = GetModuleFileNameW(module, &buffer[0], static_cast<DWORD>(buffer.size()));
    if (length == 0) return std::nullopt;
    if (length < buffer.size()) {
      buffer.resize(length);
      return std::filesystem::path(buffer);
    }
    if (buffer.size() >= 32768) return std::nullopt;  // longer than any Windows path
    buffer.assign(buffer.size() * 2, L'\0');           // truncated: grow and retry
  }
}

std::string to_utf8(const std::filesystem::path& path) {
  try {
    const std::wstring wide = path.wstring();
    return narrow(wide.data(), wide.size());
  } catch (...) {  // allocation failure only; a message without the path is better than a throw
    return {};
  }
}

}  // namespace executorch_openvino::loader
