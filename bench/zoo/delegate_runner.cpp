#include "delegate_runner.h"

#include <stdexcept>

#include "program_runner.h"

namespace executorch_openvino::bench {

using executorch::runtime::BackendInitContext;
using executorch::runtime::CompileSpec;

DelegateRunner::DelegateRunner(executorch::runtime::BackendInterface* backend, std::vector<uint8_t> blob,
                               const std::vector<std::pair<std::string, std::string>>& specs,
                               const std::vector<DelegateArgument>& inputs, const std::vector<DelegateArgument>& outputs)
    : backend_(backend),
      blob_(std::move(blob)),
      // No free function: blob_ owns the bytes; the delegate only tells us when it is done with them.
      processed_(blob_.data(), blob_.size(), nullptr),
      arena_(64 * 1024),
      allocator_(static_cast<uint32_t>(arena_.size()), arena_.data()) {
  // CompileSpecs point into our own copies, which stay put for the runner's life.
  spec_values_.reserve(2 * specs.size());
  for (const auto& [key, value] : specs) {
    spec_values_.push_back(key);
    spec_values_.push_back(value);
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    std::string& value = spec_values_[2 * i + 1];
    specs_.push_back(CompileSpec{spec_values_[2 * i].c_str(), {value.data(), value.size()}});
  }
  BackendInitContext init_context(&allocator_);
  auto handle = backend_->init(init_context, &processed_,
                               executorch::runtime::ArrayRef<CompileSpec>(specs_.data(), specs_.size()));
  if (!handle.ok()) throw std::runtime_error("delegate: init failed: " + ours_last_error());
  handle_ = handle.get();

  // Inputs then outputs, built once so the timed call does not copy or allocate anything on our side.
  for (const auto* group : {&inputs, &outputs}) {
    for (const DelegateArgument& argument : *group) {
      tensors_.push_back(executorch::extension::make_tensor_ptr(
          std::vector<executorch::aten::SizesType>(argument.sizes.begin(), argument.sizes.end()), argument.data,
          argument.type, executorch::aten::Device(executorch::aten::DeviceType::CPU),
          executorch::aten::TensorShapeDynamism::STATIC));
    }
  }
  values_.reserve(tensors_.size());
  for (const auto& tensor : tensors_) values_.emplace_back(*tensor);
  for (auto& value : values_) arg_storage_.push_back(&value);
  args_ = executorch::runtime::Span<executorch::runtime::EValue*>(arg_storage_.data(), arg_storage_.size());
}

DelegateRunner::~DelegateRunner() {
  if (handle_ != nullptr) backend_->destroy(handle_);
  processed_.Free();  // as the Method does after destroy(); a no-op if the delegate freed it already
}

}  // namespace executorch_openvino::bench
