#include "delegate/conversation/grown_conversation.h"

#include "openvino_state/state_abi.h"

namespace executorch_openvino::delegate {
namespace {

// Named by the exporter (state_abi.h).
constexpr const char* kGrownVariablePrefix = EOV_GROWN_VARIABLE_PREFIX;
constexpr const char* kLengthVariable = EOV_LENGTH_VARIABLE;
constexpr int kSequenceAxis = 2;  // of a grown cache: [batch, heads, positions, width]

// What a refused or failed call of a program with grown caches means.
constexpr const char* kGrowsWith = "\n(this program's KV caches grow with the conversation: ";

}  // namespace

Status GrownConversation::bind(openvino_api::ov_infer_request* request) {
  written_ = false;
  length_ = 0;
  return ok_status();
}

Outcome<Conversation::Before> GrownConversation::before_call(Arguments args,
                                                             openvino_api::ov_infer_request* request) {
  const std::optional<int64_t> position = first_position(*args[*inputs_.position]);
  if (!position) return Before::kSameRequest;
  if (*position == 0) {
    if (!written_) return Before::kSameRequest;
    if (Status reset = helper_.reset(request, {}); !reset.ok()) return reset.failure();
    length_ = 0;
    written_ = false;
    return Before::kSameRequest;
  }
  if (!length_) {  // a failed inference left it unknown; read it again
    read_length(request);
    if (!length_) {
      return Failure{FailureKind::kOpenVinoError, "the conversation's length cannot be read after a "
                                                  "failed call: start a new one at position 0"};
    }
  }
  if (*position > *length_) return past_the_conversation(inputs_.number(*inputs_.position), *position, *length_);
  if (*position < *length_) {  // going back: forget the positions from `position` on
    if (Status cut = helper_.truncate(request, kGrownVariablePrefix, kSequenceAxis, *position); !cut.ok()) {
      return cut.failure();
    }
    length_ = *position;
  }
  return Before::kSameRequest;
}

Status GrownConversation::after_call(const Status& inferred, openvino_api::ov_infer_request* request) {
  written_ = true;  // even a failed inference may have written part of the caches
  read_length(request);
  if (inferred.ok()) return inferred;
  Failure failure = inferred.failure();
  failure.message += std::string(kGrowsWith) +
                     "a call continues it, goes back to an earlier position, or starts a new one at position 0)";
  return failure;
}

void GrownConversation::read_length(openvino_api::ov_infer_request* request) {
  Outcome<int64_t> length = helper_.read_int(request, kLengthVariable);
  length_ = length.ok() ? std::optional<int64_t>(length.value()) : std::nullopt;
}

Outcome<GrownConversation::Prefix> GrownConversation::take(openvino_api::ov_infer_request* request) {
  if (!length_) return Failure{FailureKind::kInvalidArgument, "the conversation's length is unknown after a failed call"};
  Outcome<openvino_api::HelperLibrary::Snapshot> taken = helper_.snapshot(request);
  if (!taken.ok()) return taken.failure();
  return Prefix{std::move(taken).value(), *length_};
}

Status GrownConversation::put_back(const Prefix& prefix, openvino_api::ov_infer_request* request) {
  if (Status restored = helper_.restore(request, prefix.content); !restored.ok()) return restored;
  length_ = prefix.length;
  written_ = true;
  return ok_status();
}

std::unique_ptr<Conversation> grown_conversation(const openvino_api::Runtime& runtime, const CallInputs& inputs,
                                                openvino_api::ov_infer_request* request) {
  const openvino_api::ProcessHelper& helper = openvino_api::process_helper(runtime);
  // Programs exported before their caches counted their positions keep the behaviour they had.
  if (helper.library != nullptr && helper.library->read_int(request, kLengthVariable).ok()) {
    return std::make_unique<GrownConversation>(*helper.library, inputs);
  }
  return std::make_unique<GrownConversationWithoutHelper>(inputs, helper.why_not);
}

Status GrownConversationWithoutHelper::bind(openvino_api::ov_infer_request* request) {
  written_ = false;
  return ok_status();
}

Outcome<Conversation::Before> GrownConversationWithoutHelper::before_call(Arguments args,
                                                                          openvino_api::ov_infer_request* request) {
  const std::optional<int64_t> position = first_position(*args[*inputs_.position]);
  // Any other position is OpenVINO's to refuse (after_call says why).
  return position == 0 && written_ ? Before::kNewRequest : Before::kSameRequest;
}

Status GrownConversationWithoutHelper::after_call(const Status& inferred, openvino_api::ov_infer_request* request) {
  written_ = true;
  if (inferred.ok()) return inferred;
  Failure failure = inferred.failure();
  failure.message += std::string(kGrowsWith) +
                     "a call must continue it, at the position after the tokens given so far, or start a new one "
                     "at position 0; OpenVINO refuses any other position rather than compute with a cache that "
                     "does not hold it, and going back needs the state helper: " + why_not_ + ")";
  return failure;
}

}  // namespace executorch_openvino::delegate
