#include "delegate/conversation/call_sequences.h"

#include <utility>

namespace executorch_openvino::delegate {

namespace {
// ExecuTorch runs a delegate's call on the thread that executes the method.
thread_local std::vector<CallSequence> next_call;
}  // namespace

void set_call_sequences(std::vector<CallSequence> sequences) { next_call = std::move(sequences); }

std::vector<CallSequence> take_call_sequences() { return std::exchange(next_call, {}); }

}  // namespace executorch_openvino::delegate
