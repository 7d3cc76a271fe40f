// The handle ExecuTorch holds for one delegated partition of a loaded method: a (possibly shared)
// compiled model, this partition's own infer request, the bindings of ExecuTorch's arguments to it,
// and what its calls do to a language model's caches (delegate/conversation/). Executes one call at a
// time (a mutex guards the request); different partitions run concurrently.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/event_tracer.h>
#include <executorch/runtime/core/span.h>

#include "blob/delegate_blob.h"
#include "common/outcome.h"
#include "delegate/compiling/compiled_model.h"
#include "delegate/conversation/conversation.h"
#include "delegate/conversation/encoder_caches.h"
#include "delegate/execution/scalar_binding.h"
#include "delegate/execution/tensor_binding.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino::delegate {

class PartitionHandle {
 public:
  // `arguments`: which call inputs the IR reads (the blob's; none: all of them, in order). `bounds`:
  // the values IR inputs may take (the blob's); a call holding another is refused.
  static Outcome<PartitionHandle*> create(void* storage, openvino_api::Runtime& runtime,
                                          std::shared_ptr<const CompiledModel> compiled,
                                          std::optional<blob::InputArguments> arguments = std::nullopt,
                                          std::vector<blob::InputBound> bounds = {});
  ~PartitionHandle();
  PartitionHandle(const PartitionHandle&) = delete;
  PartitionHandle& operator=(const PartitionHandle&) = delete;

  // `args` holds the inputs, then the outputs, as ExecuTorch passes them to a delegate: tensors, and
  // scalars (Int, Double, Bool: symbolic sizes and values computed outside) for rank-0 inputs; inputs
  // the IR does not read are passed over. With an event tracer, the inference is recorded as a
  // delegate event, and OpenVINO's per-layer times too when the model was compiled with profiling on.
  Status execute(executorch::runtime::Span<executorch::runtime::EValue*> args,
                 executorch::runtime::EventTracer* tracer);

  size_t input_count() const { return call_inputs_; }  // of the call; the IR may read fewer
  size_t output_count() const { return compiled_->outputs.size(); }
  const CompiledModel& compiled() const { return *compiled_; }

  // Saved prefixes (delegate/execution/saved_prefixes.h), each under the handle's lock: whether this
  // partition's conversation keeps them, and Conversation's save, restore, forget and lookup.
  bool keeps_prefixes() const { return conversation_->keeps_prefixes(); }
  Status save_prefix(const std::string& name);
  Status restore_prefix(const std::string& name);
  bool forget_prefix(const std::string& name);
  bool has_prefix(const std::string& name);
  // For state files (saved_prefixes.h): a saved prefix as bytes, the check of bytes read back, their
  // installation under a name, and the form of the caches in words.
  Outcome<Conversation::PrefixImage> prefix_image(const std::string& name);
  Status check_image(int64_t length, const std::vector<std::vector<uint8_t>>& parts);
  Status install_prefix(const std::string& name, Conversation::PrefixImage image);
  std::string cache_form();

 private:
  PartitionHandle(openvino_api::Runtime& runtime, std::shared_ptr<const CompiledModel> compiled,
                  std::optional<blob::InputArguments> arguments, std::vector<blob::InputBound> bounds,
                  size_t fed_inputs);
  Status bind_all(executorch::runtime::Span<executorch::runtime::EValue*> args);
  // Refuses a call whose bounded inputs hold a value outside their bounds (delegate/execution/input_bounds.h).
  Status check_bounds(executorch::runtime::Span<executorch::runtime::EValue*> args) const;
  // A new request for a new conversation (Conversation::Before::kNewRequest): everything is bound anew.
  Status renew_request();
  Status infer(executorch::runtime::EventTracer* tracer);
  // Outputs of dynamic shape are allocated by OpenVINO: resize ExecuTorch's tensor and copy.
  Status copy_dynamic_outputs(executorch::runtime::Span<executorch::runtime::EValue*> args);
  void record_layers(executorch::runtime::EventTracer* tracer, et_timestamp_t start);

  openvino_api::Runtime& runtime_;
  std::shared_ptr<const CompiledModel> compiled_;
  size_t call_inputs_;
  size_t fed_inputs_;  // IR inputs the call feeds: all but a paged model's caches
  bool rearranges_;    // false: the IR reads every call input, in order
  CallInputs inputs_;  // which call input each IR input is, and which one carries the position
  std::vector<executorch::runtime::EValue*> arranged_;  // a call's arguments as the IR takes them
  // Declared before the request, so it is destroyed after it: a paged model's caches are bound to it.
  std::unique_ptr<Conversation> conversation_;
  // A decoder whose cross-attention caches are computed once from the encoder's states: the IR input
  // carrying them, and what follows them (none for other programs).
  std::optional<size_t> encoder_states_input_;
  std::unique_ptr<EncoderCaches> encoder_caches_;
  openvino_api::InferRequestPtr request_;
  std::vector<TensorBinding> input_bindings_;
  std::vector<ScalarBinding> scalar_bindings_;  // per input; used by those a scalar feeds
  std::vector<TensorBinding> output_bindings_;
  std::vector<bool> output_is_dynamic_;
  bool has_dynamic_outputs_ = false;
  std::vector<blob::InputBound> bounds_;
  std::mutex mutex_;
};

}  // namespace executorch_openvino::delegate
