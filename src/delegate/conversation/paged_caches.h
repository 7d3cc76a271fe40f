// The memory of a paged model's KV caches (paged_conversation.h says what a call does with them), and
// the check of a call's causal mask. The caches are inputs of the compiled model that no call feeds:
// each partition allocates its own and keeps them bound. They hold slots, each a sequence's whole
// context in blocks of its own (slot s: blocks s * blocks .. ); slot 0 is the partition's own
// conversation, and the others come when a call first carries that many sequences. A saved prefix is
// a copy of the blocks slot 0 fills. Paged attention is causal and reads no mask, so every call's mask is
// checked instead of ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch_openvino/backend.h>  // EXECUTORCH_OPENVINO_MAX_SLOTS

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
  // Binds every cache to `request` (once per request, and again after more slots came).
  Status bind(openvino_api::Runtime& runtime, openvino_api::ov_infer_request* request) const;
  // Room for `slots` sequences (at most kMaxSlots): the caches move to memory that holds them (twice
  // the slots held so far at least), with the first held[s] positions of each slot s kept; then bound
  // to `request`. Nothing changes on failure.
  static constexpr size_t kMaxSlots = EXECUTORCH_OPENVINO_MAX_SLOTS;
  Status hold_slots(size_t slots, const std::vector<int64_t>& held, openvino_api::Runtime& runtime,
                    openvino_api::ov_infer_request* request);
  size_t slots() const { return slots_; }
  int64_t slot_blocks() const { return blocks_; }

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
  // The memory of `slots` slots of every cache (tensors over it, shapes from the ports).
  static Outcome<std::vector<Cache>> allocate(openvino_api::Runtime& runtime,
                                              const std::vector<openvino_api::PortInfo>& inputs,
                                              const PagedLayout& layout, size_t slots);
  std::vector<Cache> caches_;
  std::vector<openvino_api::PortInfo> ports_;  // the caches', for allocating more slots
  PagedLayout layout_;
  int64_t blocks_ = 0;  // a slot's
  size_t slots_ = 1;
};

}  // namespace executorch_openvino::delegate
