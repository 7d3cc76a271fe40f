// Drives our backend exactly as ExecuTorch's Method does: looks it up in the registry, calls
// init() with a FreeableBuffer and compile specs, execute() with EValues, destroy() at the end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/memory_allocator.h>

#include "host_tensor.h"

namespace executorch_openvino::testing {

using executorch::runtime::Error;

// Our backend from ExecuTorch's registry (the library registered it when it was loaded).
executorch::runtime::BackendInterface* registered_backend();

class DelegateHarness {
 public:
  DelegateHarness();
  ~DelegateHarness();
  DelegateHarness(const DelegateHarness&) = delete;
  DelegateHarness& operator=(const DelegateHarness&) = delete;

  // `load_options` are ExecuTorch's runtime_specs for our backend (Module::load's options map).
  Error init(std::vector<uint8_t> blob, const std::vector<std::pair<std::string, std::string>>& specs = {},
             const std::vector<executorch::runtime::BackendOption>& load_options = {});
  Error execute_traced(const std::vector<HostTensor*>& args, executorch::runtime::EventTracer* tracer);
  Error execute(const std::vector<HostTensor*>& args);
  Error execute_values(const std::vector<executorch::runtime::EValue*>& args);
  void destroy();
  // The named data the next init() sees (BackendInitContext::get_named_data_map()); null: none.
  void use_named_data(const executorch::runtime::NamedDataMap* map) { named_data_ = map; }

  // Whether the backend released the blob, and whether the blob's bytes were overwritten on release
  // (they are, to catch anything still reading them).
  bool blob_freed() const { return blob_freed_; }
  executorch::runtime::DelegateHandle* handle() const { return handle_; }

 private:
  static void free_blob(void* context, void* data, size_t size);

  executorch::runtime::BackendInterface* backend_;
  std::vector<uint8_t> blob_;
  bool blob_freed_ = false;
  std::optional<executorch::runtime::FreeableBuffer> processed_;
  std::vector<std::string> spec_storage_;
  std::vector<executorch::runtime::CompileSpec> specs_;
  std::vector<executorch::runtime::BackendOption> load_options_;
  std::vector<uint8_t> arena_;
  executorch::runtime::MemoryAllocator allocator_;
  executorch::runtime::DelegateHandle* handle_ = nullptr;
  const executorch::runtime::NamedDataMap* named_data_ = nullptr;
};

}  // namespace executorch_openvino::testing
