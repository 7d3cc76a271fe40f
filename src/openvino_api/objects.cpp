#include "openvino_api/objects.h"

#include <mutex>
#include <shared_mutex>

namespace executorch_openvino::openvino_api {
namespace {

// Variadic compile_model takes its properties as separate C-string arguments. One call site with a
// fixed number of slots covers every count; OpenVINO reads only `property_args_size` of them.
constexpr size_t kMaxCompileProperties = 16;

Outcome<PortInfo> describe_port(Runtime& runtime, const ov_output_const_port* port, const std::string& what) {
  const SymbolTable& api = runtime.api();
  PortInfo info;

  char* name = nullptr;
  if (api.ov_port_get_any_name(port, &name) == kOk && name != nullptr) {
    info.name = name;
    api.ov_free(name);
  }

  ElementTypeCode code{};
  StatusCode status = api.ov_port_get_element_type(port, &code);
  if (status != kOk) return runtime.failure(status, "reading the element type of " + what);
  std::optional<ElementType> type = runtime.element_codes().type(code);
  if (!type) {
    return Failure{FailureKind::kInvalidBlob,
                   what + " has OpenVINO element type code " + std::to_string(code) + ", which the delegate does not exchange"};
  }
  info.type = *type;

  PartialShape shape{{0, 0}, nullptr};
  status = api.ov_port_get_partial_shape(port, &shape);
  if (status != kOk) return runtime.failure(status, "reading the shape of " + what);
  const bool dynamic_rank = shape.rank.min != shape.rank.max || shape.rank.max < 0;
  if (!dynamic_rank) info.dims.assign(shape.dims, shape.dims + shape.rank.max);
  api.ov_partial_shape_free(&shape);
  if (dynamic_rank) {
    return Failure{FailureKind::kInvalidBlob, what + " has a dynamic rank, which the delegate does not support"};
  }
  return info;
}

Outcome<std::vector<PortInfo>> ports(Runtime& runtime, const ov_compiled_model* compiled, bool inputs) {
  const SymbolTable& api = runtime.api();
  const char* kind = inputs ? "input" : "output";
  size_t count = 0;
  StatusCode status = inputs ? api.ov_compiled_model_inputs_size(compiled, &count)
                             : api.ov_compiled_model_outputs_size(compiled, &count);
  if (status != kOk) return runtime.failure(status, std::string("counting the compiled model's ") + kind + "s");

  std::vector<PortInfo> result;
  result.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const std::string what = std::string(kind) + " " + std::to_string(i);
    ov_output_const_port* raw = nullptr;
    status = inputs ? api.ov_compiled_model_input_by_index(compiled, i, &raw)
                    : api.ov_compiled_model_output_by_index(compiled, i, &raw);
    if (status != kOk) return runtime.failure(status, "getting " + what);
    Owned<ov_output_const_port> port(raw, {api.ov_output_const_port_free});
    Outcome<PortInfo> info = describe_port(runtime, port.get(), what);
    if (!info.ok()) return info.failure();
    result.push_back(std::move(info).value());
  }
  return result;
}

}  // namespace

bool PortInfo::is_static() const {
  for (const Dimension& d : dims) {
    if (d.min != d.max || d.max < 0) return false;
  }
  return true;
}

std::string PortInfo::shape_text() const {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ",";
    const Dimension& d = dims[i];
    if (d.min == d.max && d.max >= 0) {
      text += std::to_string(d.max);
    } else if (d.max < 0 && d.min <= 0) {
      text += "?";
    } else {
      text += std::to_string(d.min) + ".." + (d.max < 0 ? std::string("inf") : std::to_string(d.max));
    }
  }
  return text + "]";
}

Outcome<ModelPtr> read_model(Runtime& runtime, const char* xml, size_t xml_size, const void* weights,
                             size_t weights_size) {
  const SymbolTable& api = runtime.api();
  Outcome<ov_core*> core = runtime.core();
  if (!core.ok()) return core.failure();

  TensorPtr weights_tensor(nullptr, {api.ov_tensor_free});
  if (weights_size > 0) {
    // u8 of shape [1, N] over the weights, as OpenVINO's own C tests pass a .bin from memory.
    int64_t dims[2] = {1, static_cast<int64_t>(weights_size)};
    Outcome<TensorPtr> wrapped =
        wrap_host_memory(runtime, ElementType::kU8, dims, 2, const_cast<void*>(weights));
    if (!wrapped.ok()) return wrapped.failure();
    weights_tensor = std::move(wrapped).value();
  }
  ov_model* model = nullptr;
  StatusCode status =
      api.ov_core_read_model_from_memory_buffer(core.value(), xml, xml_size, weights_tensor.get(), &model);
  if (status != kOk) return runtime.failure(status, "reading the IR model", FailureKind::kInvalidBlob);
  return ModelPtr(model, {api.ov_model_free});
}

Outcome<CompiledModelPtr> compile_model(Runtime& runtime, const ov_model* model, const std::string& device,
                                        const std::vector<Property>& properties) {
  const SymbolTable& api = runtime.api();
  Outcome<ov_core*> core = runtime.core();
  if (!core.ok()) return core.failure();
  if (properties.size() > kMaxCompileProperties) {
    return Failure{FailureKind::kInvalidArgument, "at most " + std::to_string(kMaxCompileProperties) +
                                                      " OpenVINO properties can be set per model, got " +
                                                      std::to_string(properties.size())};
  }
  const char* args[2 * kMaxCompileProperties] = {};
  for (size_t i = 0; i < properties.size(); ++i) {
    args[2 * i] = properties[i].key.c_str();
    args[2 * i + 1] = properties[i].value.c_str();
  }
  ov_compiled_model* compiled = nullptr;
  std::shared_lock<std::shared_mutex> shared(runtime.core_settings_mutex());
  StatusCode status = api.ov_core_compile_model(
      core.value(), model, device.c_str(), 2 * properties.size(), &compiled, args[0], args[1], args[2], args[3],
      args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], args[12], args[13], args[14],
      args[15], args[16], args[17], args[18], args[19], args[20], args[21], args[22], args[23], args[24], args[25],
      args[26], args[27], args[28], args[29], args[30], args[31]);
  static_assert(2 * kMaxCompileProperties == 32, "the call above passes exactly 32 property slots");
  if (status != kOk) return runtime.failure(status, "compiling the model for device " + device);
  return CompiledModelPtr(compiled, {api.ov_compiled_model_free});
}

Outcome<CompiledModelPtr> import_model(Runtime& runtime, const void* content, size_t size, const std::string& device,
                                       const std::vector<Property>& properties) {
  const SymbolTable& api = runtime.api();
  Outcome<ov_core*> core = runtime.core();
  if (!core.ok()) return core.failure();
  std::unique_lock<std::shared_mutex> exclusive(runtime.core_settings_mutex());
  // Set each property for the device, remembering what it was, and put everything back after.
  std::vector<Property> previous;
  auto restore = [&] {
    for (const Property& p : previous) api.ov_core_set_property(core.value(), device.c_str(), p.key.c_str(), p.value.c_str(), nullptr);
  };
  for (const Property& property : properties) {
    char* old = nullptr;
    if (api.ov_core_get_property(core.value(), device.c_str(), property.key.c_str(), &old) == kOk && old != nullptr) {
      previous.push_back({property.key, old});
      api.ov_free(old);
    }
    StatusCode status = api.ov_core_set_property(core.value(), device.c_str(), property.key.c_str(),
                                                 property.value.c_str(), nullptr);
    if (status != kOk) {
      restore();
      return runtime.failure(status, "setting " + property.key + "=" + property.value + " for importing on " + device);
    }
  }
  ov_compiled_model* compiled = nullptr;
  StatusCode status =
      api.ov_core_import_model(core.value(), static_cast<const char*>(content), size, device.c_str(), &compiled);
  restore();
  if (status != kOk) return runtime.failure(status, "importing the precompiled model for device " + device);
  return CompiledModelPtr(compiled, {api.ov_compiled_model_free});
}

Status export_model(Runtime& runtime, const ov_compiled_model* compiled, const std::string& path) {
  StatusCode status = runtime.api().ov_compiled_model_export_model(compiled, path.c_str());
  if (status != kOk) return runtime.failure(status, "exporting the compiled model to " + path);
  return ok_status();
}

Outcome<std::string> device_property(Runtime& runtime, const std::string& device, const std::string& key) {
  Outcome<ov_core*> core = runtime.core();
  if (!core.ok()) return core.failure();
  char* value = nullptr;
  StatusCode status;
  {
    std::shared_lock<std::shared_mutex> shared(runtime.core_settings_mutex());  // not mid-import
    status = runtime.api().ov_core_get_property(core.value(), device.c_str(), key.c_str(), &value);
  }
  if (status != kOk) return runtime.failure(status, "reading device " + device + "'s property " + key);
  std::string text = value == nullptr ? "" : value;
  if (value != nullptr) runtime.api().ov_free(value);
  return text;
}

Outcome<std::string> compiled_model_property(Runtime& runtime, const ov_compiled_model* compiled,
                                             const std::string& key) {
  char* value = nullptr;
  StatusCode status = runtime.api().ov_compiled_model_get_property(compiled, key.c_str(), &value);
  if (status != kOk) return runtime.failure(status, "reading the compiled model's property " + key);
  std::string text = value == nullptr ? "" : value;
  if (value != nullptr) runtime.api().ov_free(value);
  return text;
}

Outcome<std::vector<PortInfo>> input_ports(Runtime& runtime, const ov_compiled_model* compiled) {
  return ports(runtime, compiled, true);
}

Outcome<std::vector<PortInfo>> output_ports(Runtime& runtime, const ov_compiled_model* compiled) {
  return ports(runtime, compiled, false);
}

Outcome<InferRequestPtr> create_infer_request(Runtime& runtime, const ov_compiled_model* compiled) {
  ov_infer_request* request = nullptr;
  StatusCode status = runtime.api().ov_compiled_model_create_infer_request(compiled, &request);
  if (status != kOk) return runtime.failure(status, "creating an infer request");
  return InferRequestPtr(request, {runtime.api().ov_infer_request_free});
}

Outcome<TensorPtr> wrap_host_memory(Runtime& runtime, ElementType type, const int64_t* dims, size_t rank,
                                    void* data) {
  // OpenVINO refuses a null host pointer even for an empty tensor, which never reads it.
  static unsigned char empty_storage[16];
  if (data == nullptr) data = empty_storage;
  ov_tensor* tensor = nullptr;
  // The runtime copies the dims array, so a pointer into the caller's storage is fine.
  Shape shape{static_cast<int64_t>(rank), const_cast<int64_t*>(dims)};
  StatusCode status =
      runtime.api().ov_tensor_create_from_host_ptr(runtime.element_codes().code(type), shape, data, &tensor);
  if (status != kOk) return runtime.failure(status, "wrapping host memory as a tensor");
  return TensorPtr(tensor, {runtime.api().ov_tensor_free});
}

Status set_input(Runtime& runtime, ov_infer_request* request, size_t index, const ov_tensor* tensor) {
  StatusCode status = runtime.api().ov_infer_request_set_input_tensor_by_index(request, index, tensor);
  if (status != kOk) return runtime.failure(status, "binding input " + std::to_string(index));
  return ok_status();
}

Status set_output(Runtime& runtime, ov_infer_request* request, size_t index, const ov_tensor* tensor) {
  StatusCode status = runtime.api().ov_infer_request_set_output_tensor_by_index(request, index, tensor);
  if (status != kOk) return runtime.failure(status, "binding output " + std::to_string(index));
  return ok_status();
}

Status infer(Runtime& runtime, ov_infer_request* request) {
  StatusCode status = runtime.api().ov_infer_request_infer(request);
  if (status != kOk) return runtime.failure(status, "running inference");
  return ok_status();
}

Outcome<OutputView> output_tensor(Runtime& runtime, ov_infer_request* request, size_t index) {
  const SymbolTable& api = runtime.api();
  const std::string what = "output " + std::to_string(index);
  ov_tensor* raw = nullptr;
  StatusCode status = api.ov_infer_request_get_output_tensor_by_index(request, index, &raw);
  if (status != kOk) return runtime.failure(status, "getting " + what);
  OutputView view;
  view.tensor = TensorPtr(raw, {api.ov_tensor_free});
  Shape shape{0, nullptr};
  status = api.ov_tensor_get_shape(raw, &shape);
  if (status != kOk) return runtime.failure(status, "reading the shape of " + what);
  view.dims.assign(shape.dims, shape.dims + shape.rank);
  api.ov_shape_free(&shape);
  status = api.ov_tensor_get_byte_size(raw, &view.byte_size);
  if (status != kOk) return runtime.failure(status, "reading the size of " + what);
  void* data = nullptr;
  if (view.byte_size > 0) {
    status = api.ov_tensor_data(raw, &data);
    if (status != kOk) return runtime.failure(status, "reading the memory of " + what);
  }
  view.data = data;
  return view;
}

Outcome<std::vector<LayerProfile>> profiling_info(Runtime& runtime, ov_infer_request* request) {
  const SymbolTable& api = runtime.api();
  ProfilingInfoList list{nullptr, 0};
  StatusCode status = api.ov_infer_request_get_profiling_info(request, &list);
  if (status != kOk) return runtime.failure(status, "reading per-layer profiling");
  std::vector<LayerProfile> layers;
  layers.reserve(list.size);
  for (size_t i = 0; i < list.size; ++i) {
    const ProfilingInfo& info = list.infos[i];
    if (info.status != 2) continue;  // not run, or optimised out
    layers.push_back({info.node_name ? info.node_name : "", info.node_type ? info.node_type : "",
                      info.exec_type ? info.exec_type : "", info.real_time});
  }
  api.ov_profiling_info_list_free(&list);
  return layers;
}

}  // namespace executorch_openvino::openvino_api
