// KV caches that grow with the conversation (python/executorch_openvino/ir_passes/grown_cache.py): OpenVINO
// variables that hold the positions written so far, one more variable counting them, and an input
// giving the first position a call writes. Position 0 starts a new conversation.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "delegate/conversation/conversation.h"
#include "openvino_api/helper_library.h"

namespace executorch_openvino::delegate {

// With the state helper: position 0 resets the caches; a call starting before their end cuts them
// back to its position (going back: the last turn edited or regenerated); one starting past it is
// refused. Prefixes are snapshots of every variable.
class GrownConversation final : public KeepsPrefixes<openvino_api::HelperLibrary::Snapshot> {
 public:
  GrownConversation(const openvino_api::HelperLibrary& helper, const CallInputs& inputs)
      : helper_(helper), inputs_(inputs) {}

  Status bind(openvino_api::ov_infer_request* request) override;
  Outcome<Before> before_call(Arguments args, openvino_api::ov_infer_request* request) override;
  Status after_call(const Status& inferred, openvino_api::ov_infer_request* request) override;

 private:
  Outcome<Prefix> take(openvino_api::ov_infer_request* request) override;
  Status put_back(const Prefix& prefix, openvino_api::ov_infer_request* request) override;
  // How many positions the caches hold, read from the model's counter (unknown when it cannot be).
  void read_length(openvino_api::ov_infer_request* request);

  const openvino_api::HelperLibrary& helper_;
  const CallInputs& inputs_;
  bool written_ = false;           // an inference ran on the request since the caches were last empty
  std::optional<int64_t> length_ = 0;  // positions the caches hold; nullopt: unknown after a failed call
};

// Without the helper (not built here, not found, another OpenVINO release; or a program exported
// before its caches counted their length): OpenVINO's C API cannot reset a variable, so a new
// conversation takes a new infer request, and OpenVINO itself refuses a call at any position but
// the next one (the failure then says why). No going back, no prefixes.
class GrownConversationWithoutHelper final : public Conversation {
 public:
  // `why_not`: why the helper is not at hand, for the explanation of a refused call.
  GrownConversationWithoutHelper(const CallInputs& inputs, std::string why_not)
      : inputs_(inputs), why_not_(std::move(why_not)) {}

  Status bind(openvino_api::ov_infer_request* request) override;
  Outcome<Before> before_call(Arguments args, openvino_api::ov_infer_request* request) override;
  Status after_call(const Status& inferred, openvino_api::ov_infer_request* request) override;

 private:
  const CallInputs& inputs_;
  std::string why_not_;
  bool written_ = false;  // an inference ran on the request
};

// The form for a partition with grown caches whose request is `request`: with the process's helper
// where it is at hand and the program counts its positions, else without.
std::unique_ptr<Conversation> grown_conversation(const openvino_api::Runtime& runtime, const CallInputs& inputs,
                                                openvino_api::ov_infer_request* request);

}  // namespace executorch_openvino::delegate
