#include "delegate/conversation/conversation.h"

#include "delegate/conversation/grown_conversation.h"
#include "delegate/conversation/paged_conversation.h"

namespace executorch_openvino::delegate {

using executorch::runtime::EValue;

namespace {

// A model without the position input: a call does nothing to its caches. A model that keeps static
// caches as OpenVINO state (exported with grow_caches=False) writes them where its inputs say.
class StatelessConversation final : public Conversation {
 public:
  Outcome<Before> before_call(Arguments, openvino_api::ov_infer_request*) override { return Before::kSameRequest; }
  Status after_call(const Status& inferred, openvino_api::ov_infer_request*) override { return inferred; }
};

}  // namespace

Status Conversation::save_prefix(const std::string& name, openvino_api::ov_infer_request*) {
  return Failure{FailureKind::kInvalidArgument, "this program keeps no conversation to save as '" + name + "'"};
}

Status Conversation::restore_prefix(const std::string& name, openvino_api::ov_infer_request*) {
  return no_prefix_saved_as(name);
}

Outcome<Conversation::PrefixImage> Conversation::prefix_image(const std::string& name) const {
  return no_prefix_saved_as(name);
}

Status Conversation::install_prefix(const std::string&, PrefixImage) { return no_state_files(); }

Outcome<std::unique_ptr<Conversation>> choose_conversation(openvino_api::Runtime& runtime,
                                                           const CompiledModel& compiled, const CallInputs& inputs,
                                                           openvino_api::ov_infer_request* request) {
  std::unique_ptr<Conversation> chosen;
  if (compiled.paged) {
    Outcome<std::unique_ptr<PagedConversation>> made =
        PagedConversation::create(runtime, compiled, *compiled.paged, inputs);
    if (!made.ok()) return made.failure();
    chosen = std::move(made).value();
  } else if (inputs.position) {
    chosen = grown_conversation(runtime, inputs, request);
  } else {
    chosen = std::make_unique<StatelessConversation>();
  }
  if (Status bound = chosen->bind(request); !bound.ok()) return bound.failure();
  return chosen;
}

Failure no_prefix_saved_as(const std::string& name) {
  return Failure{FailureKind::kInvalidArgument, "no state saved as '" + name + "'"};
}

Failure no_state_files() {
  return Failure{FailureKind::kInvalidArgument,
                 "state files need the caches paged (attention=paged, the default on the CPU): grown caches "
                 "live in OpenVINO's variables, which this release does not write to or read from a file"};
}

std::optional<int64_t> first_position(const EValue& value) {
  if (value.isInt()) return value.toInt();
  if (!value.isTensor()) return std::nullopt;
  const executorch::aten::Tensor& tensor = value.toTensor();
  if (tensor.numel() < 1) return std::nullopt;
  switch (tensor.scalar_type()) {
    case executorch::aten::ScalarType::Long: return tensor.const_data_ptr<int64_t>()[0];
    case executorch::aten::ScalarType::Int: return tensor.const_data_ptr<int32_t>()[0];
    default: return std::nullopt;
  }
}

Failure past_the_conversation(size_t call_input, int64_t position, int64_t held) {
  return Failure{FailureKind::kInvalidArgument,
                 "input " + std::to_string(call_input) + " starts at position " + std::to_string(position) +
                     ", past the " + std::to_string(held) +
                     " positions of the conversation so far: a call continues it (at " + std::to_string(held) +
                     "), goes back to an earlier position, or starts a new one at 0"};
}

}  // namespace executorch_openvino::delegate
