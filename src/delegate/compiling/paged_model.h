// A model whose KV caches grow, rewritten at load for OpenVINO's paged attention, and what the result
// looks like. The state helper rewrites it (src/openvino_state/paged_attention.cpp): after the
// program's own inputs come the plan (where each sequence of a call sits in the caches) and then the
// caches, which no call feeds; a causal mask and the token ids are named among the program's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "delegate/options/compile_options.h"
#include "openvino_api/objects.h"
#include "openvino_api/runtime.h"
#include "openvino_state/state_abi.h"

namespace executorch_openvino::delegate {

// Named by the rewrite (src/openvino_state/paged_attention.cpp), through the helper's interface.
inline constexpr const char* kPagedCachePrefix = EOV_PAGED_CACHE_PREFIX;
inline constexpr const char* kCausalMaskInput = EOV_PAGED_MASK_INPUT;
inline constexpr const char* kComputedMaskOutput = EOV_PAGED_MASK_OUTPUT;
inline constexpr const char* kTokensInput = EOV_PAGED_TOKENS_INPUT;
inline constexpr const char* kPlanPrefix = EOV_PAGED_PLAN_PREFIX;
// The plan's inputs, in their order among the model's: where each sequence of a call sits in the caches.
inline constexpr const char* kPlanInputs[] = {"past_lens", "subsequence_begins", "block_indices",
                                              "block_indices_begins", "max_context_len"};
inline constexpr size_t kPlanInputCount = sizeof(kPlanInputs) / sizeof(kPlanInputs[0]);
inline constexpr int32_t kPagedBlockSize = 32;  // positions a block holds: the CPU plugin's

// attention=paged, or auto for a model whose blob says its caches grow (blob section 9): the model
// rewritten in place, where the rewrite can run (the CPU, the state helper at hand, caches in f32,
// bf16 or f16). The caches' element type when it was; nothing when the model was left as exported
// (a note says why); a failure when OpenVINO's pass failed.
Outcome<std::optional<std::string>> page_attention(openvino_api::Runtime& runtime, const CompileOptions& options,
                                                   openvino_api::ov_model* model, Notes& notes);

// The properties to compile a rewritten model with: `properties`, with the cache precision the
// plugin's paged attention wants (the caches' type; the IR's own KV_CACHE_PRECISION is the grown caches').
std::vector<openvino_api::Property> paged_properties(std::vector<openvino_api::Property> properties,
                                                     const std::string& cache_type);

// Whether `port` is one of a paged model's caches.
bool is_paged_cache(const openvino_api::PortInfo& port);

// Where a paged model's own inputs are among its compiled model's inputs.
struct PagedLayout {
  size_t plan = 0;         // the plan's inputs (kPlanInputs) from here; the call feeds those before
  size_t first_cache = 0;  // the caches are the inputs from here on
  size_t mask = 0;         // the causal mask: [new positions, context], boolean; an input, or
  bool mask_computed = false;  // the compiled model's output after the program's (CompiledModel::computed_mask)
  size_t tokens = 0;       // the token ids: [1, new positions]
  int64_t blocks = 0;      // of each cache a sequence needs: enough for the mask's context
};

// Read off a compiled model's ports (`computed_mask`: its last output, when the model computes the
// mask; `outputs`: how many the program has): nullopt when its attention is not paged; a failure when
// it is, in another form than the rewrite makes (caches not last, no mask or token input).
Outcome<std::optional<PagedLayout>> paged_layout(const std::vector<openvino_api::PortInfo>& inputs,
                                                 const std::optional<openvino_api::PortInfo>& computed_mask,
                                                 size_t outputs);

}  // namespace executorch_openvino::delegate
