// Every OpenVINO object the delegate holds, owned by RAII handles, and every call it makes on them.
// Each call returns an Outcome whose failure says what we were doing and what OpenVINO said.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/outcome.h"
#include "openvino_api/element_type.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino::openvino_api {

// Frees one kind of OpenVINO object through the runtime's own free function.
template <typename T>
struct Deleter {
  void (*free_fn)(T*) = nullptr;
  void operator()(T* object) const {
    if (object != nullptr && free_fn != nullptr) free_fn(object);
  }
};
template <typename T>
using Owned = std::unique_ptr<T, Deleter<T>>;

using ModelPtr = Owned<ov_model>;
using CompiledModelPtr = Owned<ov_compiled_model>;
using InferRequestPtr = Owned<ov_infer_request>;
using TensorPtr = Owned<ov_tensor>;

// One input or output of a compiled model.
struct PortInfo {
  std::string name;
  ElementType type;
  std::vector<Dimension> dims;  // per dimension: min == max when static; max == -1 when unbounded
  bool is_static() const;
  std::string shape_text() const;  // "[1,3,224,224]", "[1..8,16]", "[?,16]"
};

struct Property {
  std::string key;
  std::string value;
};

// Reads IR from memory. `weights` may be null when the model has no constants; otherwise the model
// refers to that memory (no copy) for as long as it, or anything compiled from it, lives.
Outcome<ModelPtr> read_model(Runtime& runtime, const char* xml, size_t xml_size, const void* weights,
                             size_t weights_size);

Outcome<CompiledModelPtr> compile_model(Runtime& runtime, const ov_model* model, const std::string& device,
                                        const std::vector<Property>& properties);

// A model exported by compiled_model.export_model() for `device`, with `properties` in effect
// (export does not keep them all: the CPU plugin imports in bf16 unless told f32). The compiled
// model may keep pointing into `content` (measured with 2026.4's CPU plugin): the caller keeps it
// alive for as long as the compiled model lives.
Outcome<CompiledModelPtr> import_model(Runtime& runtime, const void* content, size_t size, const std::string& device,
                                       const std::vector<Property>& properties);

// Writes `compiled` to the file `path` (UTF-8) in the form import_model reads. The C API exports to a
// file only, not to memory.
Status export_model(Runtime& runtime, const ov_compiled_model* compiled, const std::string& path);

// A device's property on the shared core, as OpenVINO prints it: what a compilation without it takes.
Outcome<std::string> device_property(Runtime& runtime, const std::string& device, const std::string& key);

// A property of a compiled model, as OpenVINO prints it ("LATENCY", "4", "f32").
Outcome<std::string> compiled_model_property(Runtime& runtime, const ov_compiled_model* compiled,
                                             const std::string& key);

Outcome<std::vector<PortInfo>> input_ports(Runtime& runtime, const ov_compiled_model* compiled);
Outcome<std::vector<PortInfo>> output_ports(Runtime& runtime, const ov_compiled_model* compiled);

Outcome<InferRequestPtr> create_infer_request(Runtime& runtime, const ov_compiled_model* compiled);

// A tensor over memory the caller owns; no copy. `data` may be null only when a dimension is zero.
Outcome<TensorPtr> wrap_host_memory(Runtime& runtime, ElementType type, const int64_t* dims, size_t rank,
                                    void* data);

Status set_input(Runtime& runtime, ov_infer_request* request, size_t index, const ov_tensor* tensor);
Status set_output(Runtime& runtime, ov_infer_request* request, size_t index, const ov_tensor* tensor);
Status infer(Runtime& runtime, ov_infer_request* request);

// An output the request allocated itself (outputs of dynamic shape): its shape and memory, valid
// while `tensor` lives and the request is not run again.
struct OutputView {
  TensorPtr tensor;
  std::vector<int64_t> dims;
  const void* data = nullptr;
  size_t byte_size = 0;
};
Outcome<OutputView> output_tensor(Runtime& runtime, ov_infer_request* request, size_t index);

// One executed layer of the last inference (profiling must be enabled at compile time).
struct LayerProfile {
  std::string name;
  std::string node_type;
  std::string exec_type;
  int64_t real_time_us = 0;
};
Outcome<std::vector<LayerProfile>> profiling_info(Runtime& runtime, ov_infer_request* request);

}  // namespace executorch_openvino::openvino_api
