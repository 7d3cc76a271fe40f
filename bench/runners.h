// The two sides the overhead benchmark compares, each set up once so that its timed call is a single
// call: native OpenVINO (one infer request with our tensors bound once, then only ov::infer) and our
// delegate (BackendInterface::execute with a prebuilt argument span, as ExecuTorch's Method calls it).
// Both read the same input memory and compile the same IR with the same properties.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/memory_allocator.h>

#include "host_tensor.h"
#include "ir_case.h"
#include "openvino_api/objects.h"

namespace executorch_openvino::bench {

using testing::HostTensor;
using testing::IrCase;

// The device and OpenVINO properties of a case's "property" lines, split as the delegate splits its
// compile specs ("device" picks the device, every other key is an OpenVINO property).
struct CompileSetup {
  std::string device = "CPU";
  std::vector<ov::Property> properties;
};
CompileSetup compile_setup(const IrCase& ir_case);

class NativeRunner {
 public:
  // Throws std::runtime_error, with OpenVINO's message, when any step fails.
  NativeRunner(ov::Runtime& runtime, const IrCase& ir_case, const std::vector<HostTensor*>& inputs,
               const std::vector<HostTensor*>& outputs);
  NativeRunner(const NativeRunner&) = delete;
  NativeRunner& operator=(const NativeRunner&) = delete;

  // The timed call: nothing but inference on the request whose tensors were bound at construction.
  bool run() {
    Status done = ov::infer(runtime_, request_.get());
    if (!done.ok()) failure_ = done.failure().message;
    return done.ok();
  }
  const std::string& failure() const { return failure_; }

 private:
  ov::Runtime& runtime_;
  // Declared first so it is destroyed last: the compiled model may read weights from it in place.
  std::vector<uint8_t> blob_;
  ov::ModelPtr model_;
  ov::CompiledModelPtr compiled_;
  ov::InferRequestPtr request_;
  std::vector<ov::TensorPtr> tensors_;
  std::string failure_;
};

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
