// The OpenVINO C functions we use, resolved by name from the opened library.
#pragma once

#include "common/outcome.h"
#include "loader/dynamic_library.h"
#include "openvino_api/ov_c_api.h"

namespace executorch_openvino::openvino_api {

// X(name) for every required symbol; a library missing any one of them is refused, naming it.
#define EXECUTORCH_OPENVINO_REQUIRED_SYMBOLS(X)   \
  X(ov_get_openvino_version)                      \
  X(ov_version_free)                              \
  X(ov_get_error_info)                            \
  X(ov_free)                                      \
  X(ov_core_create)                               \
  X(ov_core_free)                                 \
  X(ov_core_get_available_devices)                \
  X(ov_available_devices_free)                    \
  X(ov_core_read_model_from_memory_buffer)        \
  X(ov_core_compile_model)                        \
  X(ov_model_free)                                \
  X(ov_compiled_model_inputs_size)                \
  X(ov_compiled_model_outputs_size)               \
  X(ov_compiled_model_input_by_index)             \
  X(ov_compiled_model_output_by_index)            \
  X(ov_compiled_model_create_infer_request)       \
  X(ov_compiled_model_free)                       \
  X(ov_output_const_port_free)                    \
  X(ov_port_get_element_type)                     \
  X(ov_port_get_partial_shape)                    \
  X(ov_port_get_any_name)                         \
  X(ov_partial_shape_free)                        \
  X(ov_infer_request_set_input_tensor_by_index)   \
  X(ov_infer_request_set_output_tensor_by_index)  \
  X(ov_infer_request_infer)                       \
  X(ov_infer_request_free)                        \
  X(ov_tensor_create)                             \
  X(ov_tensor_create_from_host_ptr)               \
  X(ov_tensor_get_byte_size)                      \
  X(ov_tensor_free)                               \
  X(ov_core_import_model)                         \
  X(ov_core_set_property)                         \
  X(ov_core_get_property)                         \
  X(ov_compiled_model_get_property)               \
  X(ov_compiled_model_export_model)               \
  X(ov_infer_request_get_output_tensor_by_index)  \
  X(ov_infer_request_get_profiling_info)          \
  X(ov_profiling_info_list_free)                  \
  X(ov_tensor_get_shape)                          \
  X(ov_tensor_data)                               \
  X(ov_shape_free)

// Symbols that older or trimmed builds may lack; nullptr when absent.
#define EXECUTORCH_OPENVINO_OPTIONAL_SYMBOLS(X) X(ov_get_last_err_msg)

struct SymbolTable {
#define EXECUTORCH_OPENVINO_DECLARE_SYMBOL(name) name##_fn name = nullptr;
  EXECUTORCH_OPENVINO_REQUIRED_SYMBOLS(EXECUTORCH_OPENVINO_DECLARE_SYMBOL)
  EXECUTORCH_OPENVINO_OPTIONAL_SYMBOLS(EXECUTORCH_OPENVINO_DECLARE_SYMBOL)
#undef EXECUTORCH_OPENVINO_DECLARE_SYMBOL
};

// Resolves every symbol; fails naming the first required symbol the library does not export.
Outcome<SymbolTable> resolve_symbols(const loader::DynamicLibrary& library);

}  // namespace executorch_openvino::openvino_api
