// The memory of a paged model's KV caches (paged_conversation.h says what a call does with them), and
// the check of a call's causal mask. The caches are inputs of the compiled model that no call feeds:
// each partition allocates its own, for the whole context, and keeps them bound; a saved prefix is a
// copy of the blocks it fills. Paged attention is causal and reads no mask, so every call's mask is
// checked instead of ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/core/exec_aten/exec_aten.h>

#include "common/outcome.h"
#include "delegate/compiling/aligned_bytes.h"
#include "delegate/compiling/compiled_model.h"
#include "openvino_api/objects.h"

namespace executorch_openvino::delegate {

// Whether `mask` ([rows, context], boolean) is causal for a call whose first new position is
// `position`: row i attends to positions 0 .. position + i and to none after. The failure says where
// it is not.
Status check_causal_mask(const executorch::aten::Tensor& mask, int64_t position);
// The same of `rows` x `columns` booleans (a mask the model computed, read from its output).
Status check_causal_mask(const bool* values, int64_t rows, int64_t columns, int64_t position);

class PagedCaches {
 public:
  // Memory for every cache input of `compiled` (shapes from its ports), not yet touched: the pages
  // a conversation never reaches are never resident.
  static Outcome<std::unique_ptr<PagedCaches>> create(openvino_api::Runtime& runtime, const CompiledModel& compiled,
                                                      const PagedLayout& layout);
  // Binds every cache to `request` (once per request).
  Status bind(openvino_api::Runtime& runtime, openvino_api::ov_infer_request* request) const;

  // The blocks that hold the first `length` positions of every cache.
  struct Snapshot {
    std::vector<std::vector<uint8_t>> blocks;
  };
  Snapshot take(int64_t length) const;
  void restore(const Snapshot& snapshot);
  // A snapshot of `length` positions read from elsewhere (a state file): refused, naming the
  // difference, unless it has a part per cache of the size take(length) gives.
  Status check(const std::vector<std::vector<uint8_t>>& blocks, int64_t length) const;
  // The caches in words: how many, and their bytes per block.
  std::string form() const;

 private:
  struct Cache {
    size_t input = 0;
    AlignedBytes memory;
    size_t block_bytes = 0;
    openvino_api::TensorPtr tensor;
  };
  std::vector<Cache> caches_;
};

}  // namespace executorch_openvino::delegate
