// A decoder's cross-attention caches, computed from the encoder's states by OpenVINO state
// initializers (python/executorch_openvino/ir_passes/encoder_caches.py): an initializer runs only
// after its variable is reset, so the caches are computed once per utterance and read as they are by
// every later step. They are right only while a call brings the states they were computed from; eager
// PyTorch recomputes them every call. This keeps a copy of the states the caches hold and resets the
// caches' variables (the state helper's reset by prefix) when a call brings others, so every call
// computes what eager's would.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <executorch/runtime/core/evalue.h>

#include "common/outcome.h"
#include "openvino_api/helper_library.h"
#include "openvino_api/objects.h"

namespace executorch_openvino::delegate {

// The calling thread's next call brings the states of the call before, or not any more
// (executorch_openvino_promise_same_encoder_states): before_call takes the promise and trusts it.
void promise_same_encoder_states(bool promised);

class EncoderCaches {
 public:
  // `helper`: the process's state helper, null when it is not at hand (`why_not` says why): then the
  // caches follow new states only on a new request (a new conversation), and a call that brings other
  // states in the middle of one is refused.
  EncoderCaches(const openvino_api::HelperLibrary* helper, std::string why_not)
      : helper_(helper), why_not_(std::move(why_not)) {}

  // A new request: its caches are computed at its first call, from that call's states.
  void bind() { held_ = Held::kNothing; }
  // The caches hold what no copy here describes (a prefix put back, a failed inference): the next
  // call computes them anew.
  void forget() { held_ = Held::kUnknown; }

  // Before the inference of a call bringing `states` (call input `call_input`, for messages):
  // resets the caches when they were computed from other states.
  Status before_call(const executorch::aten::Tensor& states, size_t call_input,
                     openvino_api::ov_infer_request* request);
  // After it: a failed inference may have left the caches half written.
  void after_call(const Status& inferred) {
    if (!inferred.ok()) forget();
  }

 private:
  enum class Held {
    kNothing,  // nothing written: the next call computes them
    kStates,   // computed from `states_`
    kUnknown,  // written from states no copy describes
  };
  const openvino_api::HelperLibrary* helper_;
  std::string why_not_;
  Held held_ = Held::kNothing;
  std::vector<uint8_t> states_;
};

}  // namespace executorch_openvino::delegate
