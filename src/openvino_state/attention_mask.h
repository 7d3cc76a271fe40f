// Which mask a model's attentions read, and whether it is a causal mask: what the paged-attention
// rewrite (paged_attention.cpp) must know before it drops the mask, since paged attention is causal
// and reads none. Both functions throw Left when the answer is "not a mask paged attention computes".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <openvino/core/model.hpp>
#include <openvino/op/parameter.hpp>

#include "openvino_state/left.h"

namespace executorch_openvino::openvino_state {

// Where the attentions' mask comes from: one input of the model (given), or one boolean value it
// computes (computed: the last along the way with the whole context as its last dimension, before
// the grown rewrite's cut). Reached through the nodes that only select, reshape or convert a mask
// (the cut and its boolean-to-additive Select included).
struct MaskOrigin {
  std::shared_ptr<ov::op::v0::Parameter> given;
  ov::Output<ov::Node> computed;

  bool operator==(const MaskOrigin& other) const;
};

// Every attention's mask, the same for all of them; `attentions` receives how many there are.
MaskOrigin the_mask(const ov::Model& model, size_t* attentions);

// That the computed mask depends on the call's position and tokens (the model's parameters at these
// indices) alone, and is causal where sampled: at the first position, the middle of the context and
// its last position, with as many tokens as a call there may carry. Evaluated on a copy of the mask's
// own nodes (OpenVINO's reference evaluation, no device); the delegate still checks every call's.
void prove_causal(const ov::Model& model, int64_t position_index, int64_t tokens_index);

}  // namespace executorch_openvino::openvino_state
