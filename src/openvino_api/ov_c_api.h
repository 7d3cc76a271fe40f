// Our own declarations of the part of OpenVINO's C API (openvino/c/*.h) that we call. We never
// include OpenVINO's headers: the library is opened at run time, and these types are what its
// exported functions take. Checked against the headers of the pinned release by
// tests/cpp/openvino_api/declarations_match_headers_test.cpp, which compiles both side by side.
//
// Element types are plain ints here on purpose: their numbering changed between releases, so the
// meaning of a code is decided at run time by element_type.h, never by an enum in this file.
#pragma once

#include <cstddef>
#include <cstdint>

namespace executorch_openvino::openvino_api {

// Opaque handles; only ever used through pointers the library hands out.
struct ov_core;
struct ov_model;
struct ov_compiled_model;
struct ov_infer_request;
struct ov_tensor;
struct ov_output_const_port;

// Layouts that cross the boundary by value or are filled in by the library.
struct Shape {  // ov_shape_t
  int64_t rank;
  int64_t* dims;
};
struct Dimension {  // ov_dimension_t; max == -1 means unbounded
  int64_t min;
  int64_t max;
};
struct PartialShape {  // ov_partial_shape_t; rank is a Dimension, dynamic when rank.max == -1
  Dimension rank;
  Dimension* dims;
};
struct Version {  // ov_version_t
  const char* build_number;
  const char* description;
};
struct AvailableDevices {  // ov_available_devices_t
  char** devices;
  size_t size;
};
struct ProfilingInfo {  // ov_profiling_info_t
  int status;           // 0 not run, 1 optimized out, 2 executed
  int64_t real_time;    // microseconds
  int64_t cpu_time;     // microseconds
  const char* node_name;
  const char* exec_type;
  const char* node_type;
};
struct ProfilingInfoList {  // ov_profiling_info_list_t
  ProfilingInfo* infos;
  size_t size;
};

// ov_status_e. Unchanged from 2022.1 through 2026.4.
enum StatusCode : int {
  kOk = 0,
  kGeneralError = -1,
  kNotImplemented = -2,
  kNetworkNotLoaded = -3,
  kParameterMismatch = -4,
  kNotFound = -5,
  kOutOfBounds = -6,
  kUnexpected = -7,
  kRequestBusy = -8,
  kResultNotReady = -9,
  kNotAllocated = -10,
  kInferNotStarted = -11,
  kNetworkNotRead = -12,
  kInferCancelled = -13,
  kInvalidCParam = -14,
  kUnknownCError = -15,
  kNotImplementCMethod = -16,
  kUnknownException = -17,
};

// ov_element_type_e as passed across the boundary: a distinct int-sized type whose values are
// given meaning only by element_type.h.
enum ElementTypeCode : int {};

// Function types, one per symbol we resolve. Names match the exported C symbols.
extern "C" {
using ov_get_openvino_version_fn = StatusCode (*)(Version*);
using ov_version_free_fn = void (*)(Version*);
using ov_get_error_info_fn = const char* (*)(StatusCode);
using ov_get_last_err_msg_fn = const char* (*)();
using ov_free_fn = void (*)(const char*);

using ov_core_create_fn = StatusCode (*)(ov_core**);
using ov_core_free_fn = void (*)(ov_core*);
using ov_core_get_available_devices_fn = StatusCode (*)(const ov_core*, AvailableDevices*);
using ov_available_devices_free_fn = void (*)(AvailableDevices*);
using ov_core_read_model_from_memory_buffer_fn =
    StatusCode (*)(const ov_core*, const char* xml, size_t xml_size, const ov_tensor* weights, ov_model**);
// Variadic: followed by `property_args_size` C strings (key, value, key, value, ...).
using ov_core_compile_model_fn = StatusCode (*)(const ov_core*, const ov_model*, const char* device,
                                                size_t property_args_size, ov_compiled_model**, ...);
using ov_model_free_fn = void (*)(ov_model*);
// Variadic: reads exactly one key and one value (later arguments are ignored).
using ov_core_set_property_fn = StatusCode (*)(const ov_core*, const char* device, ...);
using ov_core_get_property_fn = StatusCode (*)(const ov_core*, const char* device, const char* key, char** value);
using ov_core_import_model_fn = StatusCode (*)(const ov_core*, const char* content, size_t content_size,
                                               const char* device, ov_compiled_model**);

using ov_compiled_model_inputs_size_fn = StatusCode (*)(const ov_compiled_model*, size_t*);
using ov_compiled_model_outputs_size_fn = StatusCode (*)(const ov_compiled_model*, size_t*);
using ov_compiled_model_input_by_index_fn =
    StatusCode (*)(const ov_compiled_model*, size_t, ov_output_const_port**);
using ov_compiled_model_output_by_index_fn =
    StatusCode (*)(const ov_compiled_model*, size_t, ov_output_const_port**);
using ov_compiled_model_create_infer_request_fn = StatusCode (*)(const ov_compiled_model*, ov_infer_request**);
using ov_compiled_model_free_fn = void (*)(ov_compiled_model*);
using ov_compiled_model_get_property_fn = StatusCode (*)(const ov_compiled_model*, const char* key, char** value);
using ov_compiled_model_export_model_fn = StatusCode (*)(const ov_compiled_model*, const char* export_model_path);

using ov_output_const_port_free_fn = void (*)(ov_output_const_port*);
using ov_port_get_element_type_fn = StatusCode (*)(const ov_output_const_port*, ElementTypeCode*);
using ov_port_get_partial_shape_fn = StatusCode (*)(const ov_output_const_port*, PartialShape*);
using ov_port_get_any_name_fn = StatusCode (*)(const ov_output_const_port*, char**);
using ov_partial_shape_free_fn = void (*)(PartialShape*);

using ov_infer_request_set_input_tensor_by_index_fn = StatusCode (*)(ov_infer_request*, size_t, const ov_tensor*);
using ov_infer_request_set_output_tensor_by_index_fn = StatusCode (*)(ov_infer_request*, size_t, const ov_tensor*);
using ov_infer_request_infer_fn = StatusCode (*)(ov_infer_request*);
using ov_infer_request_free_fn = void (*)(ov_infer_request*);
using ov_infer_request_get_output_tensor_by_index_fn = StatusCode (*)(const ov_infer_request*, size_t, ov_tensor**);
using ov_infer_request_get_profiling_info_fn = StatusCode (*)(const ov_infer_request*, ProfilingInfoList*);
using ov_profiling_info_list_free_fn = void (*)(ProfilingInfoList*);

using ov_tensor_create_fn = StatusCode (*)(ElementTypeCode, Shape, ov_tensor**);
using ov_tensor_create_from_host_ptr_fn = StatusCode (*)(ElementTypeCode, Shape, void*, ov_tensor**);
using ov_tensor_get_byte_size_fn = StatusCode (*)(const ov_tensor*, size_t*);
using ov_tensor_free_fn = void (*)(ov_tensor*);
using ov_tensor_get_shape_fn = StatusCode (*)(const ov_tensor*, Shape*);
using ov_tensor_data_fn = StatusCode (*)(const ov_tensor*, void**);
using ov_shape_free_fn = StatusCode (*)(Shape*);
}

}  // namespace executorch_openvino::openvino_api
