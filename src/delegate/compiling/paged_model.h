// What a model rewritten for paged attention looks like (src/openvino_state/paged_attention.cpp does
// the rewrite at load): its caches are inputs no call feeds, after the program's own, with a causal
// mask and the token ids beside them. Read off the compiled model's ports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/outcome.h"
#include "delegate/compiling/model_compiler.h"
#include "openvino_state/state_abi.h"

namespace executorch_openvino::delegate {

// Named by the rewrite (src/openvino_state/paged_attention.cpp), through the helper's interface.
inline constexpr const char* kPagedCachePrefix = EOV_PAGED_CACHE_PREFIX;
inline constexpr const char* kCausalMaskInput = EOV_PAGED_MASK_INPUT;
inline constexpr const char* kComputedMaskOutput = EOV_PAGED_MASK_OUTPUT;
inline constexpr const char* kTokensInput = EOV_PAGED_TOKENS_INPUT;
inline constexpr int32_t kPagedBlockSize = 32;  // positions a block holds: the CPU plugin's

// Where a paged model's own inputs are among its compiled model's inputs.
struct PagedLayout {
  size_t first_cache = 0;  // the caches are the inputs from here on; the call feeds those before
  size_t mask = 0;         // the causal mask: [new positions, context], boolean; an input, or
  bool mask_computed = false;  // the compiled model's output after the program's (CompiledModel::computed_mask)
  size_t tokens = 0;       // the token ids: [1, new positions]
  int64_t blocks = 0;      // of each cache: enough for the mask's context
};

// nullopt when the model's attention is not paged; a failure when it is, in another form than the
// rewrite makes (caches not last, no mask or token input).
Outcome<std::optional<PagedLayout>> paged_layout(const CompiledModel& compiled);

}  // namespace executorch_openvino::delegate
