#include "delegate/conversation/paged_conversation.h"

#include <algorithm>

#include "delegate/conversation/call_sequences.h"

namespace executorch_openvino::delegate {

using executorch::runtime::EValue;

Outcome<std::unique_ptr<PagedConversation>> PagedConversation::create(openvino_api::Runtime& runtime,
                                                                      const CompiledModel& compiled,
                                                                      const PagedLayout& layout,
                                                                      const CallInputs& inputs) {
  Outcome<std::unique_ptr<PagedCaches>> caches = PagedCaches::create(runtime, compiled, layout);
  if (!caches.ok()) return caches.failure();
  return std::unique_ptr<PagedConversation>(
      new PagedConversation(runtime, layout, inputs, std::move(caches).value()));
}

Status PagedConversation::bind(openvino_api::ov_infer_request* request) { return caches_->bind(runtime_, request); }

namespace {

// Every position a call gives: an Int scalar, or an integer tensor's elements.
std::optional<std::vector<int64_t>> positions_of(const EValue& value) {
  if (value.isInt()) return std::vector<int64_t>{value.toInt()};
  if (!value.isTensor()) return std::nullopt;
  const executorch::aten::Tensor& tensor = value.toTensor();
  std::vector<int64_t> positions(static_cast<size_t>(tensor.numel()));
  for (size_t i = 0; i < positions.size(); ++i) {
    switch (tensor.scalar_type()) {
      case executorch::aten::ScalarType::Long: positions[i] = tensor.const_data_ptr<int64_t>()[i]; break;
      case executorch::aten::ScalarType::Int: positions[i] = tensor.const_data_ptr<int32_t>()[i]; break;
      default: return std::nullopt;
    }
  }
  if (positions.empty()) return std::nullopt;
  return positions;
}

Failure invalid(std::string message) { return Failure{FailureKind::kInvalidArgument, std::move(message)}; }

}  // namespace

Outcome<Conversation::Before> PagedConversation::before_call(Arguments args, openvino_api::ov_infer_request* request) {
  std::vector<CallSequence> sequences = take_call_sequences();
  const std::optional<std::vector<int64_t>> positions =
      inputs_.position ? positions_of(*args[*inputs_.position]) : std::nullopt;
  const EValue& tokens = *args[layout_.tokens];
  const EValue* mask = layout_.mask_computed ? nullptr : args[layout_.mask];
  if (!positions || !tokens.isTensor() || (mask != nullptr && !mask->isTensor())) {
    return invalid("a call of a paged model gives its first position, tokens and mask");
  }
  const int64_t count = tokens.toTensor().dim() > 0 ? tokens.toTensor().size(tokens.toTensor().dim() - 1) : 1;
  if (mask != nullptr && (mask->toTensor().dim() != 2 || mask->toTensor().size(0) != count)) {
    return invalid("input " + std::to_string(inputs_.number(layout_.mask)) +
                   ", the attention mask, does not have a row for each of the " + std::to_string(count) + " tokens");
  }
  const bool per_token = static_cast<int64_t>(positions->size()) == count;
  if (sequences.empty()) sequences.push_back({0, count});
  if (sequences.size() > 1 && (!per_token || mask != nullptr)) {
    return invalid("a call of several sequences needs a program that gives each token's position and computes "
                   "its mask (a Hugging Face program's cache_position); this one gives the first position only");
  }
  int64_t total = 0, slots = 0;
  for (const CallSequence& sequence : sequences) {
    if (sequence.count <= 0 || sequence.slot < 0 || sequence.slot >= static_cast<int64_t>(PagedCaches::kMaxSlots))
      return invalid("a call's sequence has " + std::to_string(sequence.count) + " tokens in slot " +
                     std::to_string(sequence.slot) + " (slots 0 to " + std::to_string(PagedCaches::kMaxSlots - 1) +
                     ", one token at least)");
    total += sequence.count;
    slots = std::max(slots, sequence.slot + 1);
  }
  if (total != count)
    return invalid("the call's sequences hold " + std::to_string(total) + " tokens and the call gives " +
                   std::to_string(count));
  if (Status grown = caches_->hold_slots(static_cast<size_t>(slots), held_, runtime_, request); !grown.ok())
    return grown.failure();
  if (held_.size() < static_cast<size_t>(slots)) held_.resize(static_cast<size_t>(slots), 0);

  running_.clear();
  const int64_t room = caches_->slot_blocks() * kPagedBlockSize;
  int64_t offset = 0;
  for (const CallSequence& sequence : sequences) {
    // The positions after a sequence's first are the model's to check: its mask (below, or after the
    // call when it computes it) is causal only when they follow on.
    const int64_t start = (*positions)[per_token ? offset : 0];
    if (std::any_of(running_.begin(), running_.end(), [&](const Running& r) { return r.slot == sequence.slot; }))
      return invalid("two sequences of the call are in slot " + std::to_string(sequence.slot));
    const int64_t held = held_[static_cast<size_t>(sequence.slot)];
    if (start < 0 || start > held) return past_the_conversation(inputs_.number(*inputs_.position), start, held);
    if (start + sequence.count > room)
      return invalid("positions " + std::to_string(start) + " to " + std::to_string(start + sequence.count - 1) +
                     " do not fit the context of " + std::to_string(room));
    running_.push_back({sequence.slot, start, start + sequence.count});
    offset += sequence.count;
  }
  if (mask != nullptr) {
    if (Status causal = check_causal_mask(mask->toTensor(), running_.front().start); !causal.ok())
      return causal.failure();
  }
  if (Status fed = feed_plan(request); !fed.ok()) return fed.failure();
  return Before::kSameRequest;
}

Status PagedConversation::feed_plan(openvino_api::ov_infer_request* request) {
  past_.clear(), begins_.assign(1, 0), block_table_.clear(), table_begins_.assign(1, 0);
  max_context_ = 0;
  for (const Running& sequence : running_) {
    past_.push_back(static_cast<int32_t>(sequence.start));
    begins_.push_back(begins_.back() + static_cast<int32_t>(sequence.end - sequence.start));
    const int64_t first = sequence.slot * caches_->slot_blocks();
    const int64_t blocks = (sequence.end + kPagedBlockSize - 1) / kPagedBlockSize;
    for (int64_t b = 0; b < blocks; ++b) block_table_.push_back(static_cast<int32_t>(first + b));
    table_begins_.push_back(static_cast<int32_t>(block_table_.size()));
    max_context_ = std::max(max_context_, static_cast<int32_t>(sequence.end));
  }
  std::vector<int32_t>* vectors[] = {&past_, &begins_, &block_table_, &table_begins_};
  plan_tensors_.resize(kPlanInputCount);
  for (size_t i = 0; i < kPlanInputCount; ++i) {
    const int64_t size = i < 4 ? static_cast<int64_t>(vectors[i]->size()) : 0;
    int32_t* data = i < 4 ? vectors[i]->data() : &max_context_;
    // A tensor over the same memory and length already holds this call's values: a decode step makes
    // new tensors only when a sequence enters another block.
    PlanTensor& bound = plan_tensors_[i];
    if (bound.tensor && bound.data == data && bound.size == size && bound.request == request) continue;
    Outcome<openvino_api::TensorPtr> tensor =
        openvino_api::wrap_host_memory(runtime_, openvino_api::ElementType::kI32, &size, i < 4 ? 1 : 0, data);
    if (!tensor.ok()) return tensor.failure();
    bound = PlanTensor{};  // set again below, or left empty when the call refuses it
    if (Status set = openvino_api::set_input(runtime_, request, layout_.plan + i, tensor.value().get()); !set.ok())
      return set;
    bound = PlanTensor{std::move(tensor).value(), data, size, request};
  }
  return ok_status();
}

Status PagedConversation::after_call(const Status& inferred, openvino_api::ov_infer_request* request) {
  // A mask the model computed is known only now: one that is not causal fails the call as an
  // inference that failed would.
  const Status answered = inferred.ok() && layout_.mask_computed ? check_computed_mask(request) : inferred;
  // What the call wrote counts once it succeeded; a failed one may have written part of its
  // positions, never those before it.
  for (const Running& sequence : running_) {
    int64_t& held = held_[static_cast<size_t>(sequence.slot)];
    held = answered.ok() ? sequence.end : std::min(held, sequence.start);
  }
  return answered;
}

Status PagedConversation::check_computed_mask(openvino_api::ov_infer_request* request) const {
  Outcome<openvino_api::OutputView> mask = openvino_api::output_tensor(runtime_, request, layout_.mask);
  if (!mask.ok()) return mask.failure();
  const openvino_api::OutputView& view = mask.value();
  int64_t rows = 0;
  for (const Running& sequence : running_) rows += sequence.end - sequence.start;
  if (view.dims.size() != 2 || view.dims[0] != rows || view.byte_size != static_cast<size_t>(rows * view.dims[1])) {
    return invalid("the attention mask the model computed does not have a row for each of the call's " +
                   std::to_string(rows) + " tokens");
  }
  // Each sequence's rows, causal from its own first position.
  const bool* values = static_cast<const bool*>(view.data);
  for (const Running& sequence : running_) {
    const int64_t count = sequence.end - sequence.start;
    if (Status causal = check_causal_mask(values, count, view.dims[1], sequence.start); !causal.ok()) return causal;
    values += count * view.dims[1];
  }
  return ok_status();
}

Outcome<PagedConversation::Prefix> PagedConversation::take(openvino_api::ov_infer_request* request) {
  return Prefix{caches_->take(held_[0]), held_[0]};
}

Status PagedConversation::put_back(const Prefix& prefix, openvino_api::ov_infer_request* request) {
  caches_->restore(prefix.content);
  held_[0] = prefix.length;
  return ok_status();
}

Outcome<Conversation::PrefixImage> PagedConversation::image_of(const Prefix& prefix) const {
  return PrefixImage{prefix.length, prefix.content.blocks};
}

Status PagedConversation::check_image(int64_t length, const std::vector<std::vector<uint8_t>>& parts) const {
  if (length < 0 || length > layout_.blocks * kPagedBlockSize)
    return Failure{FailureKind::kInvalidArgument, "the state holds " + std::to_string(length) +
                                                      " positions, past this program's caches"};
  return caches_->check(parts, length);
}

Outcome<PagedConversation::Prefix> PagedConversation::from_image(PrefixImage image) const {
  if (Status fits = check_image(image.length, image.parts); !fits.ok()) return fits.failure();
  return Prefix{PagedCaches::Snapshot{std::move(image.parts)}, image.length};
}

}  // namespace executorch_openvino::delegate
