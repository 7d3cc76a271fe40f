// Saved conversation states: the state of every loaded method whose KV caches grow (and that has
// the state helper), kept under a name and set back later, so a prefix such as a system prompt is
// computed once and reused by later conversations. Process-wide, like ExecuTorch's backend registry:
// the C API (include/executorch_openvino/backend.h) acts on every such method at once, each keeping
// its own copy.
#pragma once

#include <string>

#include "common/outcome.h"

namespace executorch_openvino::delegate {

class CompiledMethod;

void register_method(CompiledMethod* method);
void unregister_method(CompiledMethod* method);

// Each fails when no loaded method controls its state; restore also when none has a state saved
// under the name (a method loaded after the save is left as it is). The count of methods acted on.
Outcome<size_t> save_states(const std::string& name);
Outcome<size_t> restore_states(const std::string& name);
size_t forget_states(const std::string& name);

}  // namespace executorch_openvino::delegate
