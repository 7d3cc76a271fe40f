// Public interface of libexecutorch_openvino for C and C++ callers.
//
// Linking the library (or loading it) registers the backend with ExecuTorch's runtime under
// EXECUTORCH_OPENVINO_BACKEND_ID; programs lowered with executorch_openvino's partitioner name it.
#pragma once

#if defined(_WIN32)
#define EXECUTORCH_OPENVINO_API __declspec(dllimport)
#else
#define EXECUTORCH_OPENVINO_API __attribute__((visibility("default")))
#endif
#if defined(EXECUTORCH_OPENVINO_BUILDING_LIBRARY) && defined(_WIN32)
#undef EXECUTORCH_OPENVINO_API
#define EXECUTORCH_OPENVINO_API __declspec(dllexport)
#endif

// The backend id under which the delegate registers. Distinct from "OpenvinoBackend", the id of
// ExecuTorch's own OpenVINO delegate, so both can live in one process.
#define EXECUTORCH_OPENVINO_BACKEND_ID "ExecutorchOpenvinoBackend"

// Compile spec keys (set at export time by the Python partitioner).
//   "device": OpenVINO device to compile for ("CPU", "GPU", "NPU", "AUTO", ...). Default "CPU".
//   Any key made of upper-case letters, digits and '_' (e.g. "INFERENCE_PRECISION_HINT",
//   "PERFORMANCE_HINT", "NUM_STREAMS") is passed to OpenVINO's compile_model as a property.
#define EXECUTORCH_OPENVINO_SPEC_DEVICE "device"

#ifdef __cplusplus
extern "C" {
#endif

// The backend id, for callers that load the library at run time (the Python package compares it).
EXECUTORCH_OPENVINO_API const char* executorch_openvino_backend_id(void);

// Whether registration into ExecuTorch's backend registry succeeded when the library was loaded.
// Returns 0 on success, otherwise the ExecuTorch error code register_backend returned.
EXECUTORCH_OPENVINO_API int executorch_openvino_registration_status(void);

// The full text of the last error the delegate reported on the calling thread (ExecuTorch's log
// truncates long lines), or "" when there was none. Valid until the thread's next delegate call.
EXECUTORCH_OPENVINO_API const char* executorch_openvino_last_error(void);

#ifdef __cplusplus
}  // extern "C"
#endif
