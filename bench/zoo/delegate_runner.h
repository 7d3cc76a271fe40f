// Our delegate driven through ExecuTorch's BackendInterface alone, as ExecuTorch's Method drives it
// (init on the blob and its compile specs, then execute with a prebuilt argument span), minus the
// Method: what the delegate itself adds to native OpenVINO's call (bench_zoo_cpp's delegate variant).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/memory_allocator.h>

namespace executorch_openvino::bench {

// A tensor over memory the caller owns: one argument of the delegate call.
struct DelegateArgument {
  executorch::aten::ScalarType type;
  std::vector<int32_t> sizes;
  void* data;
};

class DelegateRunner {
 public:
  // Throws std::runtime_error, with the delegate's last error, when init fails. `inputs` then
  // `outputs` are the delegate call's arguments, as ExecuTorch lays them out.
  DelegateRunner(executorch::runtime::BackendInterface* backend, std::vector<uint8_t> blob,
                 const std::vector<std::pair<std::string, std::string>>& specs,
                 const std::vector<DelegateArgument>& inputs, const std::vector<DelegateArgument>& outputs);
  ~DelegateRunner();
  // Not movable either: the delegate keeps the address of processed_ until destroy().
  DelegateRunner(const DelegateRunner&) = delete;
  DelegateRunner& operator=(const DelegateRunner&) = delete;

  // The timed call, exactly what ExecuTorch's Method does per delegate call, minus the Method.
  bool run() { return backend_->execute(context_, handle_, args_) == executorch::runtime::Error::Ok; }

 private:
  executorch::runtime::BackendInterface* backend_;
  std::vector<uint8_t> blob_;
  executorch::runtime::FreeableBuffer processed_;
  std::vector<std::string> spec_values_;
  std::vector<executorch::runtime::CompileSpec> specs_;
  std::vector<uint8_t> arena_;
  executorch::runtime::MemoryAllocator allocator_;
  executorch::runtime::DelegateHandle* handle_ = nullptr;
  std::vector<executorch::extension::TensorPtr> tensors_;
  std::vector<executorch::runtime::EValue> values_;
  std::vector<executorch::runtime::EValue*> arg_storage_;
  executorch::runtime::Span<executorch::runtime::EValue*> args_;
  executorch::runtime::BackendExecutionContext context_;
};

}  // namespace executorch_openvino::bench
