// The state behind one delegate handle: a (possibly shared) compiled model, this method's own
// infer request, and the bindings of ExecuTorch's tensors to it. Executes one call at a time (a
// mutex guards the request); different methods run concurrently.
#pragma once

#include <map>
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
#include "delegate/compiling/model_compiler.h"
#include "delegate/conversation/paged_caches.h"
#include "delegate/execution/scalar_binding.h"
#include "delegate/execution/tensor_binding.h"
#include "openvino_api/helper_library.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino::delegate {

class CompiledMethod {
 public:
  // `arguments`: which call inputs the IR reads (the blob's; none: all of them, in order). `bounds`:
  // the values IR inputs may take (the blob's); a call holding another is refused.
  static Outcome<CompiledMethod*> create(void* storage, openvino_api::Runtime& runtime,
                                         std::shared_ptr<const CompiledModel> compiled,
                                         std::optional<blob::InputArguments> arguments = std::nullopt,
                                         std::vector<blob::InputBound> bounds = {});
  ~CompiledMethod();
  CompiledMethod(const CompiledMethod&) = delete;
  CompiledMethod& operator=(const CompiledMethod&) = delete;

  // `args` holds the inputs, then the outputs, as ExecuTorch passes them to a delegate: tensors, and
  // scalars (Int, Double, Bool: symbolic sizes and values computed outside) for rank-0 inputs; inputs
  // the IR does not read are passed over. With an
  // event tracer, the inference is recorded as a delegate event, and OpenVINO's per-layer times too
  // when the model was compiled with profiling on.
  Status execute(executorch::runtime::Span<executorch::runtime::EValue*> args,
                 executorch::runtime::EventTracer* tracer);

  size_t input_count() const { return call_inputs_; }  // of the call; the IR may read fewer
  size_t output_count() const { return compiled_->outputs.size(); }
  const CompiledModel& compiled() const { return *compiled_; }

  // Saved states (delegate/saved_states.h): whether this method's KV caches grow with the
  // conversation and the state helper is at hand; the state kept under `name` (replacing one of the
  // same name), set back (the next call continues at the saved length), and dropped.
  bool controls_state() const { return state_ != nullptr || paged_ != nullptr; }
  Status save_state(const std::string& name);
  Status restore_state(const std::string& name);
  bool forget_state(const std::string& name);
  bool has_saved_state(const std::string& name);

 private:
  CompiledMethod(openvino_api::Runtime& runtime, std::shared_ptr<const CompiledModel> compiled,
                 std::optional<blob::InputArguments> arguments, std::vector<blob::InputBound> bounds,
                 size_t fed_inputs);
  // The call input IR input `index` is.
  size_t call_input(size_t index) const { return rearranges_ ? ir_input_arguments_[index] : index; }
  Status bind_all(executorch::runtime::Span<executorch::runtime::EValue*> args);
  // Refuses a call whose bounded inputs hold a value outside their bounds (delegate/input_bounds.h).
  Status check_bounds(executorch::runtime::Span<executorch::runtime::EValue*> args) const;
  // Outputs of dynamic shape are allocated by OpenVINO: resize ExecuTorch's tensor and copy.
  Status copy_dynamic_outputs(executorch::runtime::Span<executorch::runtime::EValue*> args);
  void record_layers(executorch::runtime::EventTracer* tracer, et_timestamp_t start);
  // Models whose KV caches grow with the conversation (python/executorch_openvino/ir_passes/grown_cache.py)
  // name the input carrying the first position. Position 0 starts a new conversation: the state
  // helper resets the state, or without it the method takes a new infer request (OpenVINO's C API
  // cannot reset state). With the helper, a call starting before the caches' end cuts them back to
  // its position (a rollback), and one starting past it is refused.
  Status explain_failed_inference(const Status& failed) const;
  // Whether it took a new request (so everything must be bound again).
  Outcome<bool> prepare_conversation(executorch::runtime::Span<executorch::runtime::EValue*> args);
  Outcome<bool> start_conversation();
  // The same for a paged model (paged_caches.h): checks the call's position, length and mask.
  Status prepare_paged(executorch::runtime::Span<executorch::runtime::EValue*> args);
  // After an inference: its failure explained, or a paged model's computed mask checked; the length
  // held updated either way.
  Status checked_answer(const Status& inferred);
  Status check_computed_mask();
  // After an inference (even a failed one): how many positions the grown caches hold now.
  void read_length(bool succeeded);

  openvino_api::Runtime& runtime_;
  std::shared_ptr<const CompiledModel> compiled_;
  size_t call_inputs_;
  size_t fed_inputs_;                         // IR inputs the call feeds: all but a paged model's caches
  bool rearranges_;                           // false: the IR reads every call input, in order
  std::vector<uint32_t> ir_input_arguments_;  // else the call input each IR input is
  std::vector<executorch::runtime::EValue*> arranged_;  // a call's arguments as the IR takes them
  openvino_api::InferRequestPtr request_;
  std::vector<TensorBinding> input_bindings_;
  std::vector<ScalarBinding> scalar_bindings_;  // per input; used by those a scalar feeds
  std::vector<TensorBinding> output_bindings_;
  std::vector<bool> output_is_dynamic_;
  bool has_dynamic_outputs_ = false;
  std::vector<blob::InputBound> bounds_;
  std::optional<size_t> position_input_;
  bool state_written_ = false;  // an inference ran on this request since it was created
  const openvino_api::HelperLibrary* state_ = nullptr;  // the state helper, for a method whose caches grow
  std::optional<int64_t> length_ = 0;       // positions the grown caches hold; nullopt: unknown
  std::optional<PagedLayout> paged_layout_;
  std::unique_ptr<PagedCaches> paged_;      // a paged model's caches
  int64_t paged_start_ = 0;                 // the call being run: its first position
  int64_t paged_end_ = 0;                   // and the positions held once it succeeds
  struct SavedState {
    std::optional<openvino_api::HelperLibrary::Snapshot> snapshot;  // grown caches
    PagedCaches::Snapshot blocks;                         // paged ones
    int64_t length;
  };
  std::map<std::string, SavedState> saved_;
  std::mutex mutex_;
};

}  // namespace executorch_openvino::delegate
