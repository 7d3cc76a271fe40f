// A language model whose attention runs paged (delegate/compiling/paged_model.h): its caches are the
// delegate's (paged_caches.h), bound once. A call at position p attends to the first p positions held
// and writes the next ones, so going back is a call at an earlier position and starting anew one at
// 0 (nothing is reset or copied); a call starting past the positions held is refused. Every call's
// mask must be causal: checked before the call when the call gives it, after it when the model
// computes it (one that is not then fails the call, which keeps only the positions before it).
// Prefixes are copies of the blocks they fill.
// A call is one sequence, in slot 0 of the caches, unless the thread said otherwise
// (call_sequences.h): then its tokens are several sequences', one after another, each continuing its
// own slot, and the positions the call gives (one a token) say where each one is.
#pragma once

#include <memory>
#include <string>

#include "delegate/conversation/conversation.h"
#include "delegate/conversation/paged_caches.h"

namespace executorch_openvino::delegate {

class PagedConversation final : public KeepsPrefixes<PagedCaches::Snapshot> {
 public:
  // The caches of `compiled` (laid out as `layout` says), allocated once.
  static Outcome<std::unique_ptr<PagedConversation>> create(openvino_api::Runtime& runtime,
                                                            const CompiledModel& compiled, const PagedLayout& layout,
                                                            const CallInputs& inputs);

  Status bind(openvino_api::ov_infer_request* request) override;
  Outcome<Before> before_call(Arguments args, openvino_api::ov_infer_request* request) override;
  Status after_call(const Status& inferred, openvino_api::ov_infer_request* request) override;

 private:
  PagedConversation(openvino_api::Runtime& runtime, const PagedLayout& layout, const CallInputs& inputs,
                    std::unique_ptr<PagedCaches> caches)
      : runtime_(runtime), layout_(layout), inputs_(inputs), caches_(std::move(caches)) {}
  // A copy of the blocks that hold the positions so far.
  Outcome<Prefix> take(openvino_api::ov_infer_request* request) override;
  Status put_back(const Prefix& prefix, openvino_api::ov_infer_request* request) override;
  Outcome<PrefixImage> image_of(const Prefix& prefix) const override;
  Outcome<Prefix> from_image(PrefixImage image) const override;
  std::string cache_form() const override { return caches_->form(); }
  Status check_image(int64_t length, const std::vector<std::vector<uint8_t>>& parts) const override;
  // The mask the model computed for the call that just ran (its output): it must be causal.
  Status check_computed_mask(openvino_api::ov_infer_request* request) const;

  // The plan's inputs for this call's sequences (kPlanInputs), set on `request`.
  Status feed_plan(openvino_api::ov_infer_request* request);

  struct Running {
    int64_t slot = 0;
    int64_t start = 0;  // its first position
    int64_t end = 0;    // and the positions its slot holds once the call succeeds
  };

  openvino_api::Runtime& runtime_;
  PagedLayout layout_;
  const CallInputs& inputs_;
  std::unique_ptr<PagedCaches> caches_;
  std::vector<int64_t> held_ = {0};  // positions each slot holds
  std::vector<Running> running_;     // the call being run, a sequence at a time
  // The plan's values, and the tensors over them bound to the request (made again only when the
  // memory or length under one changes).
  std::vector<int32_t> past_, begins_, block_table_, table_begins_;
  int32_t max_context_ = 0;
  struct PlanTensor {
    openvino_api::TensorPtr tensor;
    const int32_t* data = nullptr;
    int64_t size = 0;
    const openvino_api::ov_infer_request* request = nullptr;
  };
  std::vector<PlanTensor> plan_tensors_;
};

}  // namespace executorch_openvino::delegate
