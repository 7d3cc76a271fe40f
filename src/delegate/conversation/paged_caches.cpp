#include "delegate/conversation/paged_caches.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/causal_mask.h"

namespace executorch_openvino::delegate {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;

Status check_causal_mask(const Tensor& mask, int64_t position) {
  if (mask.scalar_type() != ScalarType::Bool || mask.dim() != 2) {
    return Failure{FailureKind::kInvalidArgument, "the attention mask must be a boolean [positions, context] tensor"};
  }
  return check_causal_mask(mask.const_data_ptr<bool>(), mask.size(0), mask.size(1), position);
}

Status check_causal_mask(const bool* values, int64_t rows, int64_t columns, int64_t position) {
  if (position + rows > columns) {
    return Failure{FailureKind::kInvalidArgument,
                   "positions " + std::to_string(position) + " to " + std::to_string(position + rows - 1) +
                       " do not fit the context of " + std::to_string(columns)};
  }
  if (std::optional<MaskCell> wrong = first_non_causal_cell(values, rows, columns, position)) {
    return Failure{FailureKind::kInvalidArgument,
                   "the attention mask is not causal at row " + std::to_string(wrong->row) + ", column " +
                       std::to_string(wrong->column) + " (the call's first position is " + std::to_string(position) +
                       "): with attention=paged the delegate computes causal attention only, so it refuses the "
                       "call rather than ignore the mask; load with attention=grown for other masks"};
  }
  return ok_status();
}

Outcome<std::vector<PagedCaches::Cache>> PagedCaches::allocate(openvino_api::Runtime& runtime,
                                                                const std::vector<openvino_api::PortInfo>& inputs,
                                                                const PagedLayout& layout, size_t slots) {
  std::vector<Cache> caches;
  for (size_t i = layout.first_cache; i < inputs.size(); ++i) {
    const openvino_api::PortInfo& port = inputs[i];
    std::vector<int64_t> dims = {layout.blocks * static_cast<int64_t>(slots)};
    for (size_t d = 1; d < port.dims.size(); ++d) dims.push_back(port.dims[d].max);
    size_t bytes = openvino_api::element_size(port.type);
    for (int64_t dimension : dims) bytes *= static_cast<size_t>(dimension);
    Cache cache;
    cache.input = i;
    cache.memory = AlignedBytes::allocate(bytes);
    cache.block_bytes = dims[0] > 0 ? bytes / static_cast<size_t>(dims[0]) : 0;
    Outcome<openvino_api::TensorPtr> tensor =
        openvino_api::wrap_host_memory(runtime, port.type, dims.data(), dims.size(), cache.memory.data.get());
    if (!tensor.ok()) return tensor.failure();
    cache.tensor = std::move(tensor).value();
    caches.push_back(std::move(cache));
  }
  return caches;
}

Outcome<std::unique_ptr<PagedCaches>> PagedCaches::create(openvino_api::Runtime& runtime, const CompiledModel& compiled,
                                                          const PagedLayout& layout) {
  Outcome<std::vector<Cache>> memory = allocate(runtime, compiled.inputs, layout, 1);
  if (!memory.ok()) return memory.failure();
  auto caches = std::make_unique<PagedCaches>();
  caches->caches_ = std::move(memory).value();
  caches->ports_ = compiled.inputs;
  caches->layout_ = layout;
  caches->blocks_ = layout.blocks;
  return caches;
}

Status PagedCaches::hold_slots(size_t slots, const std::vector<int64_t>& held, openvino_api::Runtime& runtime,
                               openvino_api::ov_infer_request* request) {
  if (slots <= slots_) return ok_status();
  if (slots > kMaxSlots)
    return Failure{FailureKind::kInvalidArgument, "a paged model's caches hold " + std::to_string(kMaxSlots) +
                                                      " sequences at most, not " + std::to_string(slots)};
  // Twice as many as before at least, so that conversations joining one by one move the caches a few
  // times, not once each (the slots never touched cost address space only).
  slots = std::max(slots, std::min(2 * slots_, kMaxSlots));
  Outcome<std::vector<Cache>> memory = allocate(runtime, ports_, layout_, slots);
  if (!memory.ok()) return memory.failure();
  std::vector<Cache> grown = std::move(memory).value();
  // Only what each slot holds is copied: the pages past it stay untouched, hence not resident.
  for (size_t i = 0; i < caches_.size(); ++i) {
    const size_t slot_bytes = static_cast<size_t>(blocks_) * caches_[i].block_bytes;
    for (size_t s = 0; s < slots_ && s < held.size(); ++s) {
      const size_t used = static_cast<size_t>((held[s] + kPagedBlockSize - 1) / kPagedBlockSize) * caches_[i].block_bytes;
      std::memcpy(grown[i].memory.data.get() + s * slot_bytes, caches_[i].memory.data.get() + s * slot_bytes,
                  std::min(used, slot_bytes));
    }
  }
  std::swap(caches_, grown);
  const size_t before = slots_;
  slots_ = slots;
  if (Status bound = bind(runtime, request); !bound.ok()) {
    std::swap(caches_, grown);
    slots_ = before;
    (void)bind(runtime, request);
    return bound;
  }
  return ok_status();
}

Status PagedCaches::bind(openvino_api::Runtime& runtime, openvino_api::ov_infer_request* request) const {
  for (const Cache& cache : caches_) {
    if (Status bound = openvino_api::set_input(runtime, request, cache.input, cache.tensor.get()); !bound.ok()) return bound;
  }
  return ok_status();
}

PagedCaches::Snapshot PagedCaches::take(int64_t length) const {
  Snapshot snapshot;
  const size_t blocks = static_cast<size_t>((length + kPagedBlockSize - 1) / kPagedBlockSize);
  for (const Cache& cache : caches_) {
    const size_t bytes = std::min(blocks * cache.block_bytes, cache.memory.size);
    snapshot.blocks.emplace_back(cache.memory.data.get(), cache.memory.data.get() + bytes);
  }
  return snapshot;
}

Status PagedCaches::check(const std::vector<std::vector<uint8_t>>& blocks_of, int64_t length) const {
  if (blocks_of.size() != caches_.size())
    return Failure{FailureKind::kInvalidArgument, "the state holds " + std::to_string(blocks_of.size()) +
                                                      " caches and this program has " + std::to_string(caches_.size())};
  const size_t blocks = static_cast<size_t>((length + kPagedBlockSize - 1) / kPagedBlockSize);
  for (size_t i = 0; i < caches_.size(); ++i) {
    const size_t bytes = std::min(blocks * caches_[i].block_bytes, caches_[i].memory.size);
    if (blocks_of[i].size() != bytes)
      return Failure{FailureKind::kInvalidArgument,
                     "cache " + std::to_string(i) + " of the state holds " + std::to_string(blocks_of[i].size()) +
                         " bytes for " + std::to_string(length) + " positions; this program's takes " +
                         std::to_string(bytes) + " (another precision, or past the context)"};
  }
  return ok_status();
}

std::string PagedCaches::form() const {
  std::string sizes;
  for (const Cache& cache : caches_) {
    const std::string size = std::to_string(cache.block_bytes);
    if (sizes.find(size) == std::string::npos) sizes += (sizes.empty() ? "" : "/") + size;
  }
  return "paged, " + std::to_string(caches_.size()) + " caches, blocks of " + std::to_string(kPagedBlockSize) +
         " positions in " + sizes + " bytes";
}

void PagedCaches::restore(const Snapshot& snapshot) {
  for (size_t i = 0; i < caches_.size() && i < snapshot.blocks.size(); ++i) {
    std::memcpy(caches_[i].memory.data.get(), snapshot.blocks[i].data(), snapshot.blocks[i].size());
  }
}

}  // namespace executorch_openvino::delegate
