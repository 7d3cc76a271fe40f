// The state behind one delegate handle: a compiled model, its infer request, and the bindings of
// ExecuTorch's tensors to it. Executes one call at a time (a mutex guards the request).
#pragma once

#include <mutex>
#include <vector>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/span.h>

#include "common/outcome.h"
#include "delegate/model_compiler.h"
#include "delegate/tensor_binding.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino::delegate {

class CompiledMethod {
 public:
  // `processed` holds the blob the compiled model may still point into (OpenVINO's CPU plugin uses
  // some constants in place); it is freed when this object is, right after the compiled model.
  static Outcome<CompiledMethod*> create(void* storage, ov::Runtime& runtime, CompiledModel compiled,
                                         executorch::runtime::FreeableBuffer* processed);
  ~CompiledMethod();
  CompiledMethod(const CompiledMethod&) = delete;
  CompiledMethod& operator=(const CompiledMethod&) = delete;

  // `args` holds the inputs, then the outputs, as ExecuTorch passes them to a delegate.
  Status execute(executorch::runtime::Span<executorch::runtime::EValue*> args);

  size_t input_count() const { return compiled_.inputs.size(); }
  size_t output_count() const { return compiled_.outputs.size(); }

 private:
  CompiledMethod(ov::Runtime& runtime, CompiledModel compiled, executorch::runtime::FreeableBuffer* processed);
  Status bind_all(executorch::runtime::Span<executorch::runtime::EValue*> args);

  ov::Runtime& runtime_;
  CompiledModel compiled_;
  ov::InferRequestPtr request_;
  std::vector<TensorBinding> input_bindings_;
  std::vector<TensorBinding> output_bindings_;
  executorch::runtime::FreeableBuffer* processed_;
  std::mutex mutex_;
};

}  // namespace executorch_openvino::delegate
