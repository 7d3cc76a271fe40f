// What the next call of a paged model carries, when it is more than one sequence: the engine batches
// several conversations' tokens into one call (include/executorch_openvino/backend.h:
// executorch_openvino_set_sequences) and says here, on the calling thread, whose tokens are where;
// ExecuTorch's method call itself carries the tokens and their positions only.
#pragma once

#include <cstdint>
#include <vector>

namespace executorch_openvino::delegate {

struct CallSequence {
  int64_t slot = 0;   // its caches' slot (paged_caches.h)
  int64_t count = 0;  // its tokens, after those of the sequences before it
};

// Replaces the calling thread's plan for its next call (empty: none).
void set_call_sequences(std::vector<CallSequence> sequences);
// Takes it; empty when none was set (the call is one sequence, in slot 0).
std::vector<CallSequence> take_call_sequences();

}  // namespace executorch_openvino::delegate
