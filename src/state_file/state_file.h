// A conversation's state in a file: the saved prefix of every partition of one loaded program (the
// KV caches' blocks up to the positions held), what identifies the program and the form of its
// caches, and the application's own bytes (the generation engine's tokens). Only bytes here: the
// delegate fills and installs it (delegate/execution/saved_prefixes.h). A file is read whole and
// checked (magic, version, sizes, CRC-32) before anything in it is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/outcome.h"

namespace executorch_openvino::state_file {

inline constexpr char kMagic[8] = {'E', 'O', 'V', 'S', 'T', 'A', 'T', 'E'};
inline constexpr uint32_t kVersion = 1;

struct PartitionState {
  uint64_t program = 0;  // the program's identity (its compiled model's content and options, hashed)
  std::string form;      // how its caches are laid out, in words: compared, and named in refusals
  int64_t length = 0;    // positions held
  std::vector<std::vector<uint8_t>> parts;  // each cache's bytes
};

struct StateFile {
  std::vector<PartitionState> partitions;
  std::vector<uint8_t> application;  // the caller's own bytes, kept as given
};

std::vector<uint8_t> encode(const StateFile& state);

// Refuses (kInvalidArgument, naming what is wrong) anything that is not a whole state file of this
// version: another magic, a size past the end (a truncated file), a CRC that does not match.
Outcome<StateFile> decode(const uint8_t* data, size_t size);

}  // namespace executorch_openvino::state_file
