// DelegateRunner (delegate_runner.h): our backend driven through BackendInterface, as ExecuTorch's Method
// drives it. Apart from bench/common/runners.cpp so that bench_zoo_cpp, which opens the delegate library itself,
// can use NativeRunner without linking it.
#include <stdexcept>

#include <executorch_openvino/backend.h>

#include "delegate_runner.h"

namespace executorch_openvino::bench {

using executorch::runtime::BackendInitContext;
using executorch::runtime::CompileSpec;

DelegateRunner::DelegateRunner(executorch::runtime::BackendInterface* backend, const IrCase& ir_case,
                               const std::vector<HostTensor*>& inputs, const std::vector<HostTensor*>& outputs)
    : backend_(backend),
      blob_(ir_case.blob),
      // No free function: blob_ owns the bytes; the delegate only tells us when it is done with them.
      processed_(blob_.data(), blob_.size(), nullptr),
      arena_(64 * 1024),
      allocator_(static_cast<uint32_t>(arena_.size()), arena_.data()) {
  // CompileSpecs point into our own copies, which stay put for the runner's life.
  spec_values_.reserve(2 * ir_case.specs.size());
  for (const auto& [key, value] : ir_case.specs) {
    spec_values_.push_back(key);
    spec_values_.push_back(value);
  }
  for (size_t i = 0; i < ir_case.specs.size(); ++i) {
    std::string& value = spec_values_[2 * i + 1];
    specs_.push_back(CompileSpec{spec_values_[2 * i].c_str(), {value.data(), value.size()}});
  }
  BackendInitContext init_context(&allocator_);
  auto handle = backend_->init(init_context, &processed_,
                               executorch::runtime::ArrayRef<CompileSpec>(specs_.data(), specs_.size()));
  if (!handle.ok()) throw std::runtime_error(ir_case.name + " (delegate): init failed: " + failure());
  handle_ = handle.get();

  // Inputs then outputs, as ExecuTorch lays out a delegate call's arguments; built once so the timed
  // call does not copy or allocate anything on our side.
  for (HostTensor* tensor : inputs) arg_storage_.push_back(tensor->value());
  for (HostTensor* tensor : outputs) arg_storage_.push_back(tensor->value());
  args_ = executorch::runtime::Span<executorch::runtime::EValue*>(arg_storage_.data(), arg_storage_.size());
}

DelegateRunner::~DelegateRunner() {
  if (handle_ != nullptr) backend_->destroy(handle_);
  processed_.Free();  // as the Method does after destroy(); a no-op if the delegate freed it already
}

std::string DelegateRunner::failure() const { return executorch_openvino_last_error(); }

}  // namespace executorch_openvino::bench
