#include "delegate/conversation/paged_conversation.h"

#include <algorithm>

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

Outcome<Conversation::Before> PagedConversation::before_call(Arguments args, openvino_api::ov_infer_request* request) {
  const std::optional<int64_t> position = inputs_.position ? first_position(*args[*inputs_.position]) : std::nullopt;
  const EValue& tokens = *args[layout_.tokens];
  const EValue* mask = layout_.mask_computed ? nullptr : args[layout_.mask];
  if (!position || !tokens.isTensor() || (mask != nullptr && !mask->isTensor())) {
    return Failure{FailureKind::kInvalidArgument, "a call of a paged model gives its first position, tokens and mask"};
  }
  const int64_t count = tokens.toTensor().dim() > 0 ? tokens.toTensor().size(tokens.toTensor().dim() - 1) : 1;
  if (mask != nullptr && (mask->toTensor().dim() != 2 || mask->toTensor().size(0) != count)) {
    return Failure{FailureKind::kInvalidArgument, "input " + std::to_string(inputs_.number(layout_.mask)) +
                                                      ", the attention mask, does not have a row for each of the " +
                                                      std::to_string(count) + " tokens"};
  }
  if (*position < 0 || *position > held_) {
    return past_the_conversation(inputs_.number(*inputs_.position), *position, held_);
  }
  if (mask != nullptr) {
    if (Status causal = check_causal_mask(mask->toTensor(), *position); !causal.ok()) return causal.failure();
  }
  start_ = *position;
  end_ = *position + count;
  return Before::kSameRequest;
}

Status PagedConversation::after_call(const Status& inferred, openvino_api::ov_infer_request* request) {
  // A mask the model computed is known only now: one that is not causal fails the call as an
  // inference that failed would.
  const Status answered = inferred.ok() && layout_.mask_computed ? check_computed_mask(request) : inferred;
  // What the call wrote counts once it succeeded; a failed one may have written part of its
  // positions, never those before it.
  held_ = answered.ok() ? end_ : std::min(held_, start_);
  return answered;
}

Status PagedConversation::check_computed_mask(openvino_api::ov_infer_request* request) const {
  Outcome<openvino_api::OutputView> mask = openvino_api::output_tensor(runtime_, request, layout_.mask);
  if (!mask.ok()) return mask.failure();
  const openvino_api::OutputView& view = mask.value();
  const int64_t rows = end_ - start_;
  if (view.dims.size() != 2 || view.dims[0] != rows || view.byte_size != static_cast<size_t>(rows * view.dims[1])) {
    return Failure{FailureKind::kInvalidArgument, "the attention mask the model computed does not have a row for each "
                                                  "of the call's " + std::to_string(rows) + " tokens"};
  }
  return check_causal_mask(static_cast<const bool*>(view.data), rows, view.dims[1], start_);
}

Outcome<PagedConversation::Prefix> PagedConversation::take(openvino_api::ov_infer_request* request) {
  return Prefix{caches_->take(held_), held_};
}

Status PagedConversation::put_back(const Prefix& prefix, openvino_api::ov_infer_request* request) {
  caches_->restore(prefix.content);
  held_ = prefix.length;
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
