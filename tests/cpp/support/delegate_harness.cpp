#include "delegate_harness.h"

#include <cstring>
#include <stdexcept>

#include <executorch/runtime/platform/runtime.h>
#include <executorch_openvino/backend.h>

namespace executorch_openvino::testing {

using executorch::runtime::BackendExecutionContext;
using executorch::runtime::BackendInitContext;
using executorch::runtime::CompileSpec;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Span;

executorch::runtime::BackendInterface* registered_backend() {
  executorch::runtime::runtime_init();
  return executorch::runtime::get_backend_class(EXECUTORCH_OPENVINO_BACKEND_ID);
}

DelegateHarness::DelegateHarness()
    : backend_(registered_backend()), arena_(64 * 1024), allocator_(static_cast<uint32_t>(arena_.size()), arena_.data()) {
  if (backend_ == nullptr) throw std::runtime_error("backend " EXECUTORCH_OPENVINO_BACKEND_ID " is not registered");
}

DelegateHarness::~DelegateHarness() { destroy(); }

void DelegateHarness::free_blob(void* context, void* data, size_t size) {
  auto* self = static_cast<DelegateHarness*>(context);
  std::memset(data, 0xAB, size);
  self->blob_freed_ = true;
}

Error DelegateHarness::init(std::vector<uint8_t> blob, const std::vector<std::pair<std::string, std::string>>& specs,
                            const std::vector<executorch::runtime::BackendOption>& load_options) {
  destroy();
  load_options_ = load_options;
  blob_ = std::move(blob);
  blob_freed_ = false;
  processed_.emplace(blob_.data(), blob_.size(), &DelegateHarness::free_blob, this);
  spec_storage_.clear();
  specs_.clear();
  spec_storage_.reserve(specs.size() * 2);
  for (const auto& [key, value] : specs) {
    spec_storage_.push_back(key);
    spec_storage_.push_back(value);
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    std::string& value = spec_storage_[2 * i + 1];
    specs_.push_back(CompileSpec{spec_storage_[2 * i].c_str(), {value.data(), value.size()}});
  }
  allocator_.reset();
  BackendInitContext context(&allocator_, nullptr, nullptr, named_data_,
                             Span<const executorch::runtime::BackendOption>(load_options_.data(), load_options_.size()));
  auto handle = backend_->init(context, &*processed_,
                               executorch::runtime::ArrayRef<CompileSpec>(specs_.data(), specs_.size()));
  if (!handle.ok()) {
    processed_->Free();  // as ExecuTorch's Method does when init fails
    return handle.error();
  }
  handle_ = handle.get();
  return Error::Ok;
}

Error DelegateHarness::execute_values(const std::vector<EValue*>& args) {
  BackendExecutionContext context;
  std::vector<EValue*> copy = args;
  return backend_->execute(context, handle_, Span<EValue*>(copy.data(), copy.size()));
}

Error DelegateHarness::execute_traced(const std::vector<HostTensor*>& args, executorch::runtime::EventTracer* tracer) {
  std::vector<EValue*> values;
  for (HostTensor* tensor : args) values.push_back(tensor->value());
  BackendExecutionContext context(tracer);
  return backend_->execute(context, handle_, Span<EValue*>(values.data(), values.size()));
}

Error DelegateHarness::execute(const std::vector<HostTensor*>& args) {
  std::vector<EValue*> values;
  for (HostTensor* tensor : args) values.push_back(tensor->value());
  return execute_values(values);
}

void DelegateHarness::destroy() {
  if (handle_ != nullptr) {
    backend_->destroy(handle_);
    handle_ = nullptr;
  }
  if (processed_) processed_->Free();  // the Method frees its segment after destroy(), as here
}

}  // namespace executorch_openvino::testing
