// Saved prefixes, per program or process-wide, in memory and in files. Every loaded partition whose
// conversation keeps them (grown caches with the state helper, or paged ones) saves the conversation
// so far under a name and sets it back later, so a prefix such as a system prompt is computed once and
// reused by later conversations.
//
// Partitions belong to an owner: the value set on the loading thread when they load (the generation
// engine gives each program it loads its own, so that one program's save or restore never reaches
// another's caches). Owner 0 acts on every partition (the C API's process-wide calls,
// include/executorch_openvino/backend.h: executorch_openvino_save_state, ...).
//
// A saved prefix also goes to a file and back (state_file/state_file.h): the owner's partitions in
// the order they loaded, each with its program's identity and the form of its caches, checked whole
// before anything is installed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/outcome.h"

namespace executorch_openvino::delegate {

class PartitionHandle;

// The owner of partitions loaded on this thread from now on (0: none).
void set_load_owner(uint64_t owner);
void register_handle(PartitionHandle* handle);  // under the loading thread's owner
void unregister_handle(PartitionHandle* handle);

// Each fails when none of the owner's partitions keeps prefixes; restore also when none has one saved
// under the name (a partition loaded after the save is left as it is). The count of partitions acted on.
Outcome<size_t> save_prefixes(const std::string& name, uint64_t owner = 0);
Outcome<size_t> restore_prefixes(const std::string& name, uint64_t owner = 0);
size_t forget_prefixes(const std::string& name, uint64_t owner = 0);

// The prefix the owner's partitions saved as `name`, to `path` (written beside it, then renamed over
// it: a reader never sees half a file), with the caller's `application` bytes.
Status write_prefixes(const std::string& name, uint64_t owner, const std::string& path,
                      const std::vector<uint8_t>& application);
// The file at `path` saved as `name` in the owner's partitions, if it is whole and was written by the
// same program with the same options and caches; otherwise refused, naming the difference, and
// nothing changes. Returns the application bytes.
Outcome<std::vector<uint8_t>> read_prefixes(const std::string& name, uint64_t owner, const std::string& path);

}  // namespace executorch_openvino::delegate
