#include "delegate/execution/partition_handle.h"

#include <array>
#include <cstring>
#include <new>
#include <string>

#include <executorch/runtime/core/event_tracer_hooks_delegate.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/platform/platform.h>

#include "delegate/execution/input_bounds.h"
#include "delegate/execution/saved_prefixes.h"
#include "openvino_state/state_abi.h"

namespace executorch_openvino::delegate {

using executorch::runtime::EValue;
using executorch::runtime::EventTracer;
using executorch::runtime::Span;

namespace {

// Named by the exporter (state_abi.h; "!" sorts first: OpenVINO reports a port's first name in sort order).
constexpr const char* kCachePositionInput = EOV_CACHE_POSITION_INPUT;
constexpr const char* kEncoderStatesInput = EOV_ENCODER_STATES_INPUT;

}  // namespace

Outcome<PartitionHandle*> PartitionHandle::create(void* storage, openvino_api::Runtime& runtime,
                                                  std::shared_ptr<const CompiledModel> compiled,
                                                  std::optional<blob::InputArguments> arguments,
                                                  std::vector<blob::InputBound> bounds) {
  constexpr const char* kNotOurs = ": the blob is corrupt or was not written by executorch_openvino; re-export the model";
  const size_t fed = compiled->paged ? compiled->paged->plan : compiled->inputs.size();
  if (arguments && arguments->of_ir_input.size() != fed) {
    return Failure{FailureKind::kInvalidBlob, "the delegate blob maps " +
                                                  std::to_string(arguments->of_ir_input.size()) +
                                                  " call inputs to an IR of " + std::to_string(fed) + " inputs" +
                                                  kNotOurs};
  }
  if (!bounds.empty() && bounds.back().input >= fed) {  // inputs increase
    return Failure{FailureKind::kInvalidBlob, "the delegate blob bounds input " +
                                                  std::to_string(bounds.back().input) + " of an IR of " +
                                                  std::to_string(fed) + " inputs" + kNotOurs};
  }
  Outcome<openvino_api::InferRequestPtr> request = openvino_api::create_infer_request(runtime, compiled->model.get());
  if (!request.ok()) return request.failure();
  auto* handle =
      new (storage) PartitionHandle(runtime, std::move(compiled), std::move(arguments), std::move(bounds), fed);
  handle->request_ = std::move(request).value();
  Outcome<std::unique_ptr<Conversation>> conversation =
      choose_conversation(runtime, *handle->compiled_, handle->inputs_, handle->request_.get());
  if (!conversation.ok()) {
    handle->~PartitionHandle();
    return conversation.failure();
  }
  handle->conversation_ = std::move(conversation).value();
  if (handle->encoder_states_input_) {
    const openvino_api::ProcessHelper& helper = openvino_api::process_helper(runtime);
    handle->encoder_caches_ = std::make_unique<EncoderCaches>(helper.library, helper.why_not);
  }
  if (handle->keeps_prefixes()) register_handle(handle);
  return handle;
}

PartitionHandle::PartitionHandle(openvino_api::Runtime& runtime, std::shared_ptr<const CompiledModel> compiled,
                                 std::optional<blob::InputArguments> arguments,
                                 std::vector<blob::InputBound> bounds, size_t fed_inputs)
    : runtime_(runtime),
      compiled_(std::move(compiled)),
      call_inputs_(arguments ? arguments->call_inputs : fed_inputs),
      fed_inputs_(fed_inputs),
      rearranges_(arguments.has_value()),
      arranged_(rearranges_ ? fed_inputs + compiled_->outputs.size() : 0),
      request_(nullptr, {}),
      input_bindings_(fed_inputs),
      scalar_bindings_(fed_inputs),
      output_bindings_(compiled_->outputs.size()),
      bounds_(std::move(bounds)) {
  if (arguments) inputs_.of_ir_input = std::move(arguments->of_ir_input);
  for (size_t i = 0; i < fed_inputs_; ++i) {
    if (compiled_->inputs[i].name == kCachePositionInput) inputs_.position = i;
    if (compiled_->inputs[i].name == kEncoderStatesInput) encoder_states_input_ = i;
  }
  for (const openvino_api::PortInfo& port : compiled_->outputs) {
    output_is_dynamic_.push_back(!port.is_static());
    has_dynamic_outputs_ = has_dynamic_outputs_ || !port.is_static();
  }
}

PartitionHandle::~PartitionHandle() {
  if (conversation_ && conversation_->keeps_prefixes()) unregister_handle(this);
  // Tensors and the request before what was bound to it (a paged model's caches, with the saved
  // prefixes), then the compiled model (released last, with its weights, by the shared pointer once
  // no other partition uses it).
  input_bindings_.clear();
  scalar_bindings_.clear();
  output_bindings_.clear();
  request_.reset();
  conversation_.reset();
  compiled_.reset();
}

Status PartitionHandle::execute(Span<EValue*> args, EventTracer* tracer) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t inputs = fed_inputs_;
  const size_t outputs = compiled_->outputs.size();
  if (args.size() != call_inputs_ + outputs) {
    return Failure{FailureKind::kInvalidArgument,
                   "expected " + std::to_string(call_inputs_) + " inputs and " + std::to_string(outputs) +
                       " outputs (" + std::to_string(call_inputs_ + outputs) + " arguments), got " +
                       std::to_string(args.size())};
  }
  if (rearranges_) {
    // From here on `args` is as the IR takes it: the inputs it reads, then the outputs.
    for (size_t i = 0; i < inputs; ++i) arranged_[i] = args[inputs_.of_ir_input[i]];
    for (size_t i = 0; i < outputs; ++i) arranged_[inputs + i] = args[call_inputs_ + i];
    args = Span<EValue*>(arranged_.data(), arranged_.size());
  }
  // Check everything before binding anything, so a bad call leaves the request as it was.
  bool all_bound = true;
  bool has_scalars = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool is_input = i < inputs;
    const size_t index = is_input ? i : i - inputs;
    const char* role = is_input ? "input" : "output";
    const EValue* value = args[i];
    if (is_input && value != nullptr && (value->isInt() || value->isDouble() || value->isBool())) {
      if (Status checked = check_scalar(*value, compiled_->inputs[index], inputs_.number(index)); !checked.ok()) {
        return checked;
      }
      has_scalars = true;
      continue;
    }
    if (value == nullptr || !value->isTensor()) {
      return Failure{FailureKind::kInvalidArgument, std::string(role) + " " +
                                                        std::to_string(is_input ? inputs_.number(index) : index) +
                                                        ": expected a tensor, got another kind of value"};
    }
    if (!is_input && output_is_dynamic_[index]) continue;  // resized after inference
    // A tensor identical to the one bound last call was checked then (the usual steady state).
    const TensorBinding& binding = is_input ? input_bindings_[index] : output_bindings_[index];
    if (binding.matches(value->toTensor())) continue;
    all_bound = false;
    const openvino_api::PortInfo& port = is_input ? compiled_->inputs[index] : compiled_->outputs[index];
    if (Status checked = check_tensor(value->toTensor(), port, role, is_input ? inputs_.number(index) : index);
        !checked.ok()) {
      return checked;
    }
  }
  if (Status in_bounds = check_bounds(args); !in_bounds.ok()) return in_bounds;
  Outcome<Conversation::Before> before = conversation_->before_call(args, request_.get());
  if (!before.ok()) return before.failure();
  if (before.value() == Conversation::Before::kNewRequest) {
    if (Status renewed = renew_request(); !renewed.ok()) return renewed;
    all_bound = false;
  }
  if (encoder_caches_ && args[*encoder_states_input_]->isTensor()) {
    if (Status followed = encoder_caches_->before_call(args[*encoder_states_input_]->toTensor(),
                                                       inputs_.number(*encoder_states_input_), request_.get());
        !followed.ok()) {
      return followed;
    }
  }
  // Steady state (ExecuTorch's memory plan hands over the same buffers every call): nothing to bind.
  if (!all_bound) {
    if (Status bound = bind_all(args); !bound.ok()) return bound;
  }
  for (size_t i = 0; has_scalars && i < inputs; ++i) {
    if (args[i]->isTensor()) continue;
    if (Status set = scalar_bindings_[i].set(runtime_, request_.get(), i, *args[i], compiled_->inputs[i].type);
        !set.ok()) {
      return set;
    }
  }
  const et_timestamp_t start = tracer != nullptr ? et_pal_current_ticks() : 0;
  const Status inferred = infer(tracer);
  if (encoder_caches_) encoder_caches_->after_call(inferred);
  if (Status answered = conversation_->after_call(inferred, request_.get()); !answered.ok()) return answered;
  compiled_->weights.after_call();
  if (tracer != nullptr && compiled_->profiling) record_layers(tracer, start);
  return has_dynamic_outputs_ ? copy_dynamic_outputs(args) : ok_status();
}

Status PartitionHandle::infer(EventTracer* tracer) {
  if (tracer == nullptr) return openvino_api::infer(runtime_, request_.get());
  auto entry = executorch::runtime::event_tracer_start_profiling_delegate(
      tracer, "OpenVINO inference", executorch::runtime::kUnsetDelegateDebugIntId);
  Status done = openvino_api::infer(runtime_, request_.get());
  executorch::runtime::event_tracer_end_profiling_delegate(tracer, entry);
  return done;
}

Status PartitionHandle::renew_request() {
  Outcome<openvino_api::InferRequestPtr> fresh = openvino_api::create_infer_request(runtime_, compiled_->model.get());
  if (!fresh.ok()) return fresh.failure();
  // Bindings belong to the old request: forget them all before it goes.
  for (TensorBinding& binding : input_bindings_) binding.reset();
  for (TensorBinding& binding : output_bindings_) binding.reset();
  for (ScalarBinding& binding : scalar_bindings_) binding.reset();
  request_ = std::move(fresh).value();
  if (encoder_caches_) encoder_caches_->bind();
  return conversation_->bind(request_.get());
}

Status PartitionHandle::save_prefix(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  return conversation_->save_prefix(name, request_.get());
}

Status PartitionHandle::restore_prefix(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  Status restored = conversation_->restore_prefix(name, request_.get());
  // The prefix's cross-attention caches were computed from states no copy here describes.
  if (restored.ok() && encoder_caches_) encoder_caches_->forget();
  return restored;
}

bool PartitionHandle::has_prefix(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  return conversation_->has_prefix(name);
}

bool PartitionHandle::forget_prefix(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  return conversation_->forget_prefix(name);
}

Outcome<Conversation::PrefixImage> PartitionHandle::prefix_image(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  return conversation_->prefix_image(name);
}

Status PartitionHandle::check_image(int64_t length, const std::vector<std::vector<uint8_t>>& parts) {
  std::lock_guard<std::mutex> lock(mutex_);
  return conversation_->check_image(length, parts);
}

Status PartitionHandle::install_prefix(const std::string& name, Conversation::PrefixImage image) {
  std::lock_guard<std::mutex> lock(mutex_);
  return conversation_->install_prefix(name, std::move(image));
}

std::string PartitionHandle::cache_form() {
  std::lock_guard<std::mutex> lock(mutex_);
  return conversation_->cache_form();
}

Status PartitionHandle::check_bounds(Span<EValue*> args) const {
  for (const blob::InputBound& bound : bounds_) {
    const std::optional<std::string> outside = first_out_of_bounds(*args[bound.input], bound);
    if (!outside) continue;
    const std::string range = "[" + std::to_string(bound.low) + ", " + std::to_string(bound.high) + ")";
    if (inputs_.position == bound.input) {
      return Failure{FailureKind::kInvalidArgument,
                     "input " + std::to_string(inputs_.number(bound.input)) + " holds the position " + *outside +
                         ", outside " + range + ": past the context of " + std::to_string(bound.high) +
                         " positions this program was exported with (its KV caches, or a table the model indexes "
                         "by position); start a new conversation at "
                         "position 0, or export with a longer context where the model allows one"};
    }
    return Failure{FailureKind::kInvalidArgument,
                   "input " + std::to_string(inputs_.number(bound.input)) + " holds " + *outside + ", outside " + range +
                       ": the model indexes a dimension of " + std::to_string(bound.high) +
                       " entries with it (eager PyTorch raises IndexError; a language model's token id past its "
                       "vocabulary, or a position past its context, is such an index), so the call is refused "
                       "rather than computed"};
  }
  return ok_status();
}

Status PartitionHandle::bind_all(Span<EValue*> args) {
  const size_t inputs = fed_inputs_;
  for (size_t i = 0; i < inputs; ++i) {
    if (!args[i]->isTensor()) continue;  // a scalar, written after binding
    Status bound = input_bindings_[i].bind(runtime_, request_.get(), true, i, args[i]->toTensor(),
                                           compiled_->inputs[i].type);
    if (!bound.ok()) return bound;
  }
  for (size_t i = 0; i < compiled_->outputs.size(); ++i) {
    if (output_is_dynamic_[i]) continue;
    Status bound = output_bindings_[i].bind(runtime_, request_.get(), false, i, args[inputs + i]->toTensor(),
                                            compiled_->outputs[i].type);
    if (!bound.ok()) return bound;
  }
  return ok_status();
}

Status PartitionHandle::copy_dynamic_outputs(Span<EValue*> args) {
  const size_t inputs = fed_inputs_;
  for (size_t i = 0; i < compiled_->outputs.size(); ++i) {
    if (!output_is_dynamic_[i]) continue;
    Outcome<openvino_api::OutputView> produced = openvino_api::output_tensor(runtime_, request_.get(), i);
    if (!produced.ok()) return produced.failure();
    const openvino_api::OutputView& view = produced.value();
    executorch::aten::Tensor target = args[inputs + i]->toTensor();
    std::array<executorch::aten::SizesType, TensorBinding::kMaxRank> sizes{};
    if (view.dims.size() > sizes.size() || view.dims.size() != static_cast<size_t>(target.dim())) {
      return Failure{FailureKind::kInvalidArgument, "output " + std::to_string(i) + " has rank " +
                                                        std::to_string(view.dims.size()) + " but ExecuTorch's tensor has rank " +
                                                        std::to_string(target.dim())};
    }
    for (size_t d = 0; d < view.dims.size(); ++d) sizes[d] = static_cast<executorch::aten::SizesType>(view.dims[d]);
    executorch::runtime::Error resized =
        executorch::runtime::resize_tensor(target, {sizes.data(), view.dims.size()});
    if (resized != executorch::runtime::Error::Ok || target.nbytes() != view.byte_size) {
      std::string shape = "[";
      for (size_t d = 0; d < view.dims.size(); ++d) shape += (d ? "," : "") + std::to_string(view.dims[d]);
      return Failure{FailureKind::kInvalidArgument,
                     "output " + std::to_string(i) + " came out with shape " + shape +
                         "], which does not fit the memory ExecuTorch planned for it (its upper bound)"};
    }
    if (view.byte_size > 0) std::memcpy(target.mutable_data_ptr(), view.data, view.byte_size);
  }
  return ok_status();
}

void PartitionHandle::record_layers(EventTracer* tracer, et_timestamp_t start) {
  Outcome<std::vector<openvino_api::LayerProfile>> layers = openvino_api::profiling_info(runtime_, request_.get());
  if (!layers.ok()) return;  // profiling is best effort; the inference itself succeeded
  // OpenVINO reports durations, not start times: lay the layers end to end from the call's start.
  const et_tick_ratio_t ratio = et_pal_ticks_to_ns_multiplier();
  et_timestamp_t cursor = start;
  for (const openvino_api::LayerProfile& layer : layers.value()) {
    const et_timestamp_t ticks =
        static_cast<et_timestamp_t>(layer.real_time_us) * 1000 * ratio.denominator / ratio.numerator;
    const std::string metadata = layer.node_type + ":" + layer.exec_type;
    executorch::runtime::event_tracer_log_profiling_delegate(tracer, layer.name.c_str(),
                                                             executorch::runtime::kUnsetDelegateDebugIntId, cursor,
                                                             cursor + ticks, metadata.data(), metadata.size());
    cursor += ticks;
  }
}

}  // namespace executorch_openvino::delegate
