// Saved prefixes, process-wide: every loaded partition whose conversation keeps them (grown caches
// with the state helper, or paged ones) saves the conversation so far under a name and sets it back
// later, so a prefix such as a system prompt is computed once and reused by later conversations. Like
// ExecuTorch's backend registry, process-wide: the C API (include/executorch_openvino/backend.h:
// executorch_openvino_save_state, ...) acts on every such partition at once, each keeping its own copy.
#pragma once

#include <string>

#include "common/outcome.h"

namespace executorch_openvino::delegate {

class PartitionHandle;

void register_handle(PartitionHandle* handle);
void unregister_handle(PartitionHandle* handle);

// Each fails when no loaded partition keeps prefixes; restore also when none has one saved under the
// name (a partition loaded after the save is left as it is). The count of partitions acted on.
Outcome<size_t> save_prefixes(const std::string& name);
Outcome<size_t> restore_prefixes(const std::string& name);
size_t forget_prefixes(const std::string& name);

}  // namespace executorch_openvino::delegate
