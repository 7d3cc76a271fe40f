#include "delegate/state_helper.h"

#include <memory>
#include <mutex>

#include "loader/dynamic_library.h"

namespace executorch_openvino::delegate {

namespace {

// The OpenVINO release the helper was built against (the openvino wheel this library was built
// with). The helper links that release's libopenvino by its versioned name: with the same release
// already loaded the process keeps one runtime; with another, opening it would load a second.
#ifdef EXECUTORCH_OPENVINO_STATE_HELPER_OV_VERSION
constexpr const char* kHelperRelease = EXECUTORCH_OPENVINO_STATE_HELPER_OV_VERSION;
#else
constexpr const char* kHelperRelease = "";
#endif

StateHelper open_helper(const openvino_api::Runtime& runtime) {
  StateHelper helper;
  const std::string loaded = runtime.version().to_string();
  if (std::string(kHelperRelease).rfind(loaded, 0) != 0 || loaded.empty()) {
    helper.why_not = "the state helper was built for OpenVINO " +
                     std::string(*kHelperRelease ? kHelperRelease : "(none: not built on this platform)") +
                     " and the runtime loaded is " + loaded;
    return helper;
  }
  const std::filesystem::path path =
      loader::read_environment_path("EXECUTORCH_OPENVINO_STATE_LIBRARY").value_or(openvino_api::StateControl::default_path());
  Outcome<std::unique_ptr<openvino_api::StateControl>> opened = openvino_api::StateControl::open(path);
  if (!opened.ok()) {
    helper.why_not = opened.failure().message;
    return helper;
  }
  // Kept for the process, like the runtime it calls into.
  helper.control = std::move(opened).value().release();
  return helper;
}

}  // namespace

const StateHelper& state_helper(const openvino_api::Runtime& runtime) {
  static std::once_flag once;
  static StateHelper helper;
  std::call_once(once, [&] { helper = open_helper(runtime); });
  return helper;
}

}  // namespace executorch_openvino::delegate
