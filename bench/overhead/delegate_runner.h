// Our delegate's side of the overhead benchmark: BackendInterface::execute with a prebuilt argument
// span, as ExecuTorch's Method calls it, reading the same input memory and compiling the same IR with
// the same properties as the native side (NativeRunner, bench/common/runners.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/memory_allocator.h>

#include "runners.h"

namespace executorch_openvino::bench {

class DelegateRunner {
 public:
  // Throws std::runtime_error, with the delegate's last error, when init fails.
  DelegateRunner(executorch::runtime::BackendInterface* backend, const IrCase& ir_case,
                 const std::vector<HostTensor*>& inputs, const std::vector<HostTensor*>& outputs);
  ~DelegateRunner();
  // Not movable either: the delegate keeps the address of processed_ until destroy().
  DelegateRunner(const DelegateRunner&) = delete;
  DelegateRunner& operator=(const DelegateRunner&) = delete;

  // The timed call, exactly what ExecuTorch's Method does per delegate call, minus the Method.
  bool run() { return backend_->execute(context_, handle_, args_) == executorch::runtime::Error::Ok; }
  std::string failure() const;  // the delegate's last error on this thread

 private:
  executorch::runtime::BackendInterface* backend_;
  std::vector<uint8_t> blob_;
  executorch::runtime::FreeableBuffer processed_;
  std::vector<std::string> spec_values_;
  std::vector<executorch::runtime::CompileSpec> specs_;
  std::vector<uint8_t> arena_;
  executorch::runtime::MemoryAllocator allocator_;
  executorch::runtime::DelegateHandle* handle_ = nullptr;
  std::vector<executorch::runtime::EValue*> arg_storage_;
  executorch::runtime::Span<executorch::runtime::EValue*> args_;
  executorch::runtime::BackendExecutionContext context_;
};

}  // namespace executorch_openvino::bench
