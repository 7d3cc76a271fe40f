// The OpenVINO runtime of this process: the opened C library, its resolved symbols, its version
// and element-type numbering, and the one shared core. Loaded on first use, never before, so a
// process may set OPENVINO_LIB_PATH after start.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "loader/dynamic_library.h"
#include "openvino_api/element_type.h"
#include "openvino_api/runtime_version.h"
#include "openvino_api/symbol_table.h"

namespace executorch_openvino::openvino_api {

class Runtime {
 public:
  // The process-wide runtime. The first call loads it (thread-safe); later calls return it. A
  // failure is returned again, without retrying, while OPENVINO_LIB_PATH keeps the value it had;
  // a changed value is tried anew. The runtime is never unloaded (see runtime.cpp).
  static Outcome<Runtime*> instance();

  // The path to use when OPENVINO_LIB_PATH is unset (the Python package hands over the runtime it
  // found in site-packages). The variable, when set, still wins. Empty clears it.
  static void set_default_path(const std::filesystem::path& path);

  // What instance() would load from now: OPENVINO_LIB_PATH, else the default path, else nullopt
  // (the system's search for the bare name).
  static std::optional<std::filesystem::path> configured_path();

  // Loads a runtime from `configured` (OPENVINO_LIB_PATH's meaning; nullopt: the system's search).
  // Used by instance(), and by tests that load stand-in libraries they may unload again.
  static Outcome<std::unique_ptr<Runtime>> load(const std::optional<std::filesystem::path>& configured);

  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const SymbolTable& api() const { return api_; }
  const ElementCodes& element_codes() const { return *codes_; }
  const RuntimeVersion& version() const { return version_; }
  const std::string& build_number() const { return build_number_; }
  const std::filesystem::path& library_path() const { return library_path_; }

  // The core shared by every compiled model, created on first call.
  Outcome<ov_core*> core();
  // How many cores this runtime has created (one, once anything was compiled): for diagnostics.
  int cores_created() const;

  // Compiling takes this shared; importing a precompiled model takes it exclusively, because the C
  // API imports without properties, so they are set on the shared core for the call and restored.
  std::shared_mutex& core_settings_mutex() { return core_settings_mutex_; }

  // Devices the core reports (e.g. "CPU", "GPU.0"), queried once.
  Outcome<std::vector<std::string>> available_devices();

  // A failure for a call that returned `status`: what we were doing, OpenVINO's status name and
  // number, and OpenVINO's own message when the runtime offers one.
  Failure failure(StatusCode status, const std::string& doing, FailureKind kind = FailureKind::kOpenVinoError) const;

 private:
  Runtime(loader::DynamicLibrary library, std::filesystem::path path, SymbolTable api);
  Status check_version();
  Status verify_element_codes() const;

  loader::DynamicLibrary library_;
  std::filesystem::path library_path_;
  SymbolTable api_;
  std::string build_number_;
  RuntimeVersion version_;
  std::optional<ElementCodes> codes_;  // set by check_version()

  mutable std::mutex core_mutex_;
  std::shared_mutex core_settings_mutex_;
  ov_core* core_ = nullptr;
  int cores_created_ = 0;
  std::optional<std::vector<std::string>> devices_;
};

}  // namespace executorch_openvino::openvino_api
