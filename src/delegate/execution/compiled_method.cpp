#include "delegate/execution/compiled_method.h"

#include <array>
#include <cstring>
#include <new>
#include <string>

#include <executorch/runtime/core/event_tracer_hooks_delegate.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/platform/platform.h>

#include "delegate/execution/input_bounds.h"
#include "delegate/conversation/saved_states.h"
#include "openvino_api/helper_library.h"
#include "openvino_state/state_abi.h"

namespace executorch_openvino::delegate {

using executorch::runtime::EValue;
using executorch::runtime::EventTracer;
using executorch::runtime::Span;

namespace {

// Named by the exporter (state_abi.h; "!" sorts first: OpenVINO reports a port's first name in sort order).
constexpr const char* kCachePositionInput = EOV_CACHE_POSITION_INPUT;
constexpr const char* kGrownVariablePrefix = EOV_GROWN_CACHE_PREFIX;
constexpr const char* kLengthVariable = EOV_GROWN_LENGTH_VARIABLE;
constexpr int kSequenceAxis = 2;  // of a grown cache: [batch, heads, positions, width]

// The first position a call writes: an Int scalar, or the first element of an integer tensor.
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

}  // namespace

Outcome<CompiledMethod*> CompiledMethod::create(void* storage, openvino_api::Runtime& runtime,
                                                std::shared_ptr<const CompiledModel> compiled,
                                                std::optional<blob::InputArguments> arguments,
                                                std::vector<blob::InputBound> bounds) {
  constexpr const char* kNotOurs = ": the blob is corrupt or was not written by executorch_openvino; re-export the model";
  Outcome<std::optional<PagedLayout>> layout = paged_layout(*compiled);
  if (!layout.ok()) return layout.failure();
  const size_t fed = layout.value() ? layout.value()->first_cache : compiled->inputs.size();
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
  std::unique_ptr<PagedCaches> paged;
  if (layout.value()) {
    Outcome<std::unique_ptr<PagedCaches>> caches = PagedCaches::create(runtime, *compiled, *layout.value());
    if (!caches.ok()) return caches.failure();
    paged = std::move(caches).value();
    if (Status bound = paged->bind(runtime, request.value().get()); !bound.ok()) return bound.failure();
  }
  auto* method =
      new (storage) CompiledMethod(runtime, std::move(compiled), std::move(arguments), std::move(bounds), fed);
  method->request_ = std::move(request).value();
  if (paged) {
    method->paged_layout_ = layout.value();
    method->paged_ = std::move(paged);
    register_method(method);
    return method;
  }
  // Programs exported before their caches counted their length keep the behaviour they had.
  const openvino_api::HelperLibrary* control = method->position_input_ ? openvino_api::process_helper(runtime).library : nullptr;
  if (control != nullptr && control->read_int(method->request_.get(), kLengthVariable).ok()) {
    method->state_ = control;
    register_method(method);
  }
  return method;
}

CompiledMethod::CompiledMethod(openvino_api::Runtime& runtime, std::shared_ptr<const CompiledModel> compiled,
                               std::optional<blob::InputArguments> arguments,
                               std::vector<blob::InputBound> bounds, size_t fed_inputs)
    : runtime_(runtime),
      compiled_(std::move(compiled)),
      call_inputs_(arguments ? arguments->call_inputs : fed_inputs),
      fed_inputs_(fed_inputs),
      rearranges_(arguments.has_value()),
      ir_input_arguments_(arguments ? std::move(arguments->of_ir_input) : std::vector<uint32_t>{}),
      arranged_(rearranges_ ? fed_inputs + compiled_->outputs.size() : 0),
      request_(nullptr, {}),
      input_bindings_(fed_inputs),
      scalar_bindings_(fed_inputs),
      output_bindings_(compiled_->outputs.size()),
      bounds_(std::move(bounds)) {
  for (size_t i = 0; i < fed_inputs_; ++i) {
    if (compiled_->inputs[i].name == kCachePositionInput) position_input_ = i;
  }
  for (const openvino_api::PortInfo& port : compiled_->outputs) {
    output_is_dynamic_.push_back(!port.is_static());
    has_dynamic_outputs_ = has_dynamic_outputs_ || !port.is_static();
  }
}

CompiledMethod::~CompiledMethod() {
  if (controls_state()) unregister_method(this);
  saved_.clear();  // snapshots before the helper's request they were taken from
  // Tensors and the request before the compiled model (released last, with its weights, by the
  // shared pointer once no other method uses it).
  input_bindings_.clear();
  scalar_bindings_.clear();
  output_bindings_.clear();
  request_.reset();
  compiled_.reset();
}

Status CompiledMethod::execute(Span<EValue*> args, EventTracer* tracer) {
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
    for (size_t i = 0; i < inputs; ++i) arranged_[i] = args[ir_input_arguments_[i]];
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
      if (Status checked = check_scalar(*value, compiled_->inputs[index], call_input(index)); !checked.ok()) {
        return checked;
      }
      has_scalars = true;
      continue;
    }
    if (value == nullptr || !value->isTensor()) {
      return Failure{FailureKind::kInvalidArgument, std::string(role) + " " +
                                                        std::to_string(is_input ? call_input(index) : index) +
                                                        ": expected a tensor, got another kind of value"};
    }
    if (!is_input && output_is_dynamic_[index]) continue;  // resized after inference
    // A tensor identical to the one bound last call was checked then (the usual steady state).
    const TensorBinding& binding = is_input ? input_bindings_[index] : output_bindings_[index];
    if (binding.matches(value->toTensor())) continue;
    all_bound = false;
    const openvino_api::PortInfo& port = is_input ? compiled_->inputs[index] : compiled_->outputs[index];
    if (Status checked = check_tensor(value->toTensor(), port, role, is_input ? call_input(index) : index);
        !checked.ok()) {
      return checked;
    }
  }
  if (Status in_bounds = check_bounds(args); !in_bounds.ok()) return in_bounds;
  Outcome<bool> started = prepare_conversation(args);
  if (!started.ok()) return started.failure();
  if (started.value()) all_bound = false;  // a new request: everything is bound anew
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

  state_written_ = true;  // even a failed inference may have written part of the state
  if (tracer == nullptr) {
    Status done = openvino_api::infer(runtime_, request_.get());
    if (Status answered = checked_answer(done); !answered.ok()) return answered;
  } else {
    const et_timestamp_t start = et_pal_current_ticks();
    auto entry = executorch::runtime::event_tracer_start_profiling_delegate(
        tracer, "OpenVINO inference", executorch::runtime::kUnsetDelegateDebugIntId);
    Status done = openvino_api::infer(runtime_, request_.get());
    executorch::runtime::event_tracer_end_profiling_delegate(tracer, entry);
    if (Status answered = checked_answer(done); !answered.ok()) return answered;
    if (compiled_->profiling) record_layers(tracer, start);
  }
  return has_dynamic_outputs_ ? copy_dynamic_outputs(args) : ok_status();
}

Outcome<bool> CompiledMethod::prepare_conversation(Span<EValue*> args) {
  if (paged_) {
    if (Status prepared = prepare_paged(args); !prepared.ok()) return prepared.failure();
    return false;
  }
  if (!position_input_) return false;
  const std::optional<int64_t> position = first_position(*args[*position_input_]);
  if (!position) return false;
  if (*position == 0) return state_written_ ? start_conversation() : Outcome<bool>(false);
  if (state_ == nullptr) return false;  // OpenVINO refuses any position but the next one
  if (!length_) {  // a failed inference left it unknown; read it again
    read_length(true);
    if (!length_) return Failure{FailureKind::kOpenVinoError, "the conversation's length cannot be read after a "
                                                              "failed call: start a new one at position 0"};
  }
  if (*position > *length_) {
    return Failure{FailureKind::kInvalidArgument,
                   "input " + std::to_string(call_input(*position_input_)) + " starts at position " +
                       std::to_string(*position) + ", past the " + std::to_string(*length_) +
                       " positions of the conversation so far: a call continues it (at " + std::to_string(*length_) +
                       "), goes back to an earlier position, or starts a new one at 0"};
  }
  if (*position < *length_) {  // a rollback: forget the positions from `position` on
    if (Status cut = state_->truncate(request_.get(), kGrownVariablePrefix, kSequenceAxis, *position); !cut.ok()) {
      return cut.failure();
    }
    length_ = *position;
  }
  return false;
}

Status CompiledMethod::prepare_paged(Span<EValue*> args) {
  const std::optional<int64_t> position = position_input_ ? first_position(*args[*position_input_]) : std::nullopt;
  const EValue& tokens = *args[paged_layout_->tokens];
  const EValue* mask = paged_layout_->mask_computed ? nullptr : args[paged_layout_->mask];
  if (!position || !tokens.isTensor() || (mask != nullptr && !mask->isTensor())) {
    return Failure{FailureKind::kInvalidArgument, "a call of a paged model gives its first position, tokens and mask"};
  }
  const int64_t count = tokens.toTensor().dim() > 0 ? tokens.toTensor().size(tokens.toTensor().dim() - 1) : 1;
  if (mask != nullptr && (mask->toTensor().dim() != 2 || mask->toTensor().size(0) != count)) {
    return Failure{FailureKind::kInvalidArgument, "input " + std::to_string(call_input(paged_layout_->mask)) +
                                                      ", the attention mask, does not have a row for each of the " +
                                                      std::to_string(count) + " tokens"};
  }
  const int64_t held = length_.value_or(0);
  if (*position < 0 || *position > held) {
    return Failure{FailureKind::kInvalidArgument,
                   "input " + std::to_string(call_input(*position_input_)) + " starts at position " +
                       std::to_string(*position) + ", past the " + std::to_string(held) +
                       " positions of the conversation so far: a call continues it (at " + std::to_string(held) +
                       "), goes back to an earlier position, or starts a new one at 0"};
  }
  if (mask != nullptr) {
    if (Status causal = check_causal_mask(mask->toTensor(), *position); !causal.ok()) return causal;
  }
  paged_start_ = *position;
  paged_end_ = *position + count;
  return ok_status();
}

Status CompiledMethod::checked_answer(const Status& inferred) {
  if (!inferred.ok()) {
    read_length(false);
    return explain_failed_inference(inferred);
  }
  // A mask the model computed is known only now: one that is not causal fails the call as an
  // inference that failed would (the positions before it are kept).
  Status causal = paged_ && paged_layout_->mask_computed ? check_computed_mask() : ok_status();
  read_length(causal.ok());
  return causal;
}

Status CompiledMethod::check_computed_mask() {
  Outcome<openvino_api::OutputView> mask = openvino_api::output_tensor(runtime_, request_.get(), paged_layout_->mask);
  if (!mask.ok()) return mask.failure();
  const openvino_api::OutputView& view = mask.value();
  const int64_t rows = paged_end_ - paged_start_;
  if (view.dims.size() != 2 || view.dims[0] != rows || view.byte_size != static_cast<size_t>(rows * view.dims[1])) {
    return Failure{FailureKind::kInvalidArgument, "the attention mask the model computed does not have a row for each "
                                                  "of the call's " + std::to_string(rows) + " tokens"};
  }
  return check_causal_mask(static_cast<const bool*>(view.data), rows, view.dims[1], paged_start_);
}

Outcome<bool> CompiledMethod::start_conversation() {
  if (state_ != nullptr) {
    if (Status reset = state_->reset(request_.get(), {}); !reset.ok()) return reset.failure();
    length_ = 0;
    state_written_ = false;
    return false;
  }
  Outcome<openvino_api::InferRequestPtr> fresh = openvino_api::create_infer_request(runtime_, compiled_->model.get());
  if (!fresh.ok()) return fresh.failure();
  // Bindings belong to the old request: forget them all before it goes.
  for (TensorBinding& binding : input_bindings_) binding.reset();
  for (TensorBinding& binding : output_bindings_) binding.reset();
  for (ScalarBinding& binding : scalar_bindings_) binding.reset();
  request_ = std::move(fresh).value();
  state_written_ = false;
  return true;
}

void CompiledMethod::read_length(bool succeeded) {
  if (paged_) {
    // What the call wrote counts once it succeeded; a failed one may have written part of its
    // positions, never those before it.
    length_ = succeeded ? paged_end_ : std::min(length_.value_or(0), paged_start_);
    return;
  }
  if (state_ == nullptr) return;
  Outcome<int64_t> length = state_->read_int(request_.get(), kLengthVariable);
  length_ = length.ok() ? std::optional<int64_t>(length.value()) : std::nullopt;
}

Status CompiledMethod::save_state(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!length_) return Failure{FailureKind::kInvalidArgument, "the conversation's length is unknown after a failed call"};
  if (paged_) {
    saved_.insert_or_assign(name, SavedState{std::nullopt, paged_->take(*length_), *length_});
    return ok_status();
  }
  Outcome<openvino_api::HelperLibrary::Snapshot> taken = state_->snapshot(request_.get());
  if (!taken.ok()) return taken.failure();
  saved_.insert_or_assign(name, SavedState{std::move(taken).value(), {}, *length_});
  return ok_status();
}

Status CompiledMethod::restore_state(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = saved_.find(name);
  if (found == saved_.end()) return Failure{FailureKind::kInvalidArgument, "no state saved as '" + name + "'"};
  if (paged_) {
    paged_->restore(found->second.blocks);
  } else if (Status restored = state_->restore(request_.get(), *found->second.snapshot); !restored.ok()) {
    return restored;
  }
  length_ = found->second.length;
  state_written_ = true;
  return ok_status();
}

bool CompiledMethod::has_saved_state(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  return saved_.count(name) > 0;
}

bool CompiledMethod::forget_state(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  return saved_.erase(name) > 0;
}

Status CompiledMethod::check_bounds(Span<EValue*> args) const {
  for (const blob::InputBound& bound : bounds_) {
    const std::optional<std::string> outside = first_out_of_bounds(*args[bound.input], bound);
    if (!outside) continue;
    const std::string range = "[" + std::to_string(bound.low) + ", " + std::to_string(bound.high) + ")";
    if (position_input_ == bound.input) {
      return Failure{FailureKind::kInvalidArgument,
                     "input " + std::to_string(call_input(bound.input)) + " holds the position " + *outside +
                         ", outside " + range + ": past the context of " + std::to_string(bound.high) +
                         " positions this program was exported with (its KV caches, or a table the model indexes "
                         "by position); start a new conversation at "
                         "position 0, or export with a longer context where the model allows one"};
    }
    return Failure{FailureKind::kInvalidArgument,
                   "input " + std::to_string(call_input(bound.input)) + " holds " + *outside + ", outside " + range +
                       ": the model indexes a dimension of " + std::to_string(bound.high) +
                       " entries with it (eager PyTorch raises IndexError; a language model's token id past its "
                       "vocabulary, or a position past its context, is such an index), so the call is refused "
                       "rather than computed"};
  }
  return ok_status();
}

Status CompiledMethod::explain_failed_inference(const Status& failed) const {
  if (!position_input_ || paged_) return failed;
  Failure failure = failed.failure();
  failure.message +=
      state_ != nullptr
          ? "\n(this program's KV caches grow with the conversation: a call continues it, goes back to an "
            "earlier position, or starts a new one at position 0)"
          : "\n(this program's KV caches grow with the conversation: a call must continue it, at the position "
            "after the tokens given so far, or start a new one at position 0; OpenVINO refuses any other "
            "position rather than compute with a cache that does not hold it, and going back needs the state "
            "helper: " + openvino_api::process_helper(runtime_).why_not + ")";
  return failure;
}

Status CompiledMethod::bind_all(Span<EValue*> args) {
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

Status CompiledMethod::copy_dynamic_outputs(Span<EValue*> args) {
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

void CompiledMethod::record_layers(EventTracer* tracer, et_timestamp_t start) {
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
