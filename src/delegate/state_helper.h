// The state helper (libexecutorch_openvino_state, src/openvino_state/), opened once per process the
// first time a program with grown KV caches is loaded. Without it (not built on this platform, not
// found, or built for another OpenVINO release than the one loaded) the delegate works as before:
// a new infer request for each new conversation, and no rollback or saved states.
#pragma once

#include <string>

#include "openvino_api/runtime.h"
#include "openvino_api/variable_state.h"

namespace executorch_openvino::delegate {

struct StateHelper {
  const openvino_api::StateControl* control = nullptr;  // null: unavailable, and `why_not` says why
  std::string why_not;
};

// EXECUTORCH_OPENVINO_STATE_LIBRARY names the helper to open instead of the one beside this library
// (tests use it to run without one).
const StateHelper& state_helper(const openvino_api::Runtime& runtime);

}  // namespace executorch_openvino::delegate
