// Public interface of libexecutorch_openvino for C and C++ callers.
//
// Linking the library (or loading it) registers the backend with ExecuTorch's runtime under
// EXECUTORCH_OPENVINO_BACKEND_ID; programs lowered with executorch_openvino's partitioner name it.
#pragma once

#include <stddef.h>
#include <stdint.h>

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
//   "device": OpenVINO device to compile for ("CPU", "GPU", "NPU", "AUTO", ...). Default "CPU";
//     overridden at load time by executorch_openvino_set_option("device", ...), the environment
//     (EXECUTORCH_OPENVINO_DEVICE) and load-time options for our backend id (runtime_specs).
//   "compress_to_fp16": "1" when the exporter stored the weights as fp16 (informational).
//   "precompile": devices the exporter embedded compiled models for, comma-separated
//     (informational; the models are in the delegate blob).
//   "static_caches": "1" when the exporter kept KV caches static instead of growing them
//     (informational; the IR is what it is).
//   "weights": how the exporter compressed the weights with NNCF, e.g. "int4:128"; chooses the CPU's
//     default compute form for them (the "dynamic_quantization" option).
//   "precision": "exact" (INFERENCE_PRECISION_HINT=f32: eager fp32's results) or "fast" (the
//     device's own default: bf16 or f16 where the hardware has it, else f32); overridden at load
//     time by the "precision" and "inference_precision" options.
//   Any key made of upper-case letters, digits and '_' (e.g. "INFERENCE_PRECISION_HINT",
//   "PERFORMANCE_HINT", "NUM_STREAMS") is passed to OpenVINO's compile_model as a property.
#define EXECUTORCH_OPENVINO_SPEC_DEVICE "device"
#define EXECUTORCH_OPENVINO_SPEC_COMPRESS_TO_FP16 "compress_to_fp16"
#define EXECUTORCH_OPENVINO_SPEC_PRECOMPILE "precompile"
#define EXECUTORCH_OPENVINO_SPEC_STATIC_CACHES "static_caches"
#define EXECUTORCH_OPENVINO_SPEC_PRECISION "precision"
#define EXECUTORCH_OPENVINO_SPEC_WEIGHTS "weights"

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

// Clears the calling thread's last error.
EXECUTORCH_OPENVINO_API void executorch_openvino_clear_last_error(void);

// The OpenVINO C library (file or folder) to open when OPENVINO_LIB_PATH is unset; the variable,
// when set, wins. Takes effect at the next load attempt while no runtime is loaded yet. NULL or ""
// clears it.
EXECUTORCH_OPENVINO_API void executorch_openvino_set_default_runtime_path(const char* path);

// Loads the OpenVINO runtime if needed and describes it, one "key=value" line each: configured
// (the path in effect), loaded (0/1), library, version, devices (comma-separated), cores_created
// (OpenVINO cores made so far: one per process once anything was compiled), error (when
// loading failed; may span lines, always last). Valid until the thread's next call.
EXECUTORCH_OPENVINO_API const char* executorch_openvino_describe_runtime(void);

// Loads the OpenVINO runtime and the state helper (libexecutorch_openvino_state, which conversation
// rollback, saved prefixes and paged attention need) if needed and describes the helper, one
// "key=value" line each: built_for (the OpenVINO release the helper was built against; empty where
// none was built, as on Windows), runtime (the release loaded), path (the helper file tried: beside
// this library, or EXECUTORCH_OPENVINO_STATE_LIBRARY), loaded (0/1), works (0/1: a one-variable model
// compiled on the CPU, run once, its variable read back, snapshotted and reset through the helper),
// error (when either is 0; may span lines, always last). Valid until the thread's next call.
EXECUTORCH_OPENVINO_API const char* executorch_openvino_describe_state_helper(void);

// Process-wide defaults for programs loaded from now on, by option key: device, performance_hint,
// num_threads, num_streams, precision (exact or fast), inference_precision, cache_dir, enable_mmap,
// enable_profiling, attention (auto, grown or paged). They
// override the program's compile specs and the environment (EXECUTORCH_OPENVINO_<KEY>), and are
// overridden by load-time options (runtime_specs for our backend id). An empty or NULL value
// removes the key. Returns 0, or the ExecuTorch error code (InvalidArgument for an unknown key or
// a bad value; executorch_openvino_last_error() says which).
EXECUTORCH_OPENVINO_API int executorch_openvino_set_option(const char* key, const char* value);

// Conversation state of programs whose KV caches grow with the conversation (every program an LLM
// export lowers with executorch_openvino; Linux, where the state helper libexecutorch_openvino_state
// is built). Such a program's method starts a new conversation at position 0, continues at the
// position after the last one given, and goes back when a call starts at an earlier position (the
// positions from there on are forgotten: regenerate an answer, edit the last turn).
//
// save_state keeps the state of every such loaded method under `name` (a later save of the same
// name replaces it); restore_state sets it back in every method that holds one (a method loaded
// after the save is left as it is), so the next call continues at the saved position (a system
// prompt computed once, reused by every conversation that starts with it). Each method keeps its
// own copy, of the size of its KV caches at that point. Return 0, or the ExecuTorch error
// code (InvalidArgument when no such method is loaded or nothing is saved under `name`; see
// executorch_openvino_last_error()). forget_state frees the copies and returns how many there were.
EXECUTORCH_OPENVINO_API int executorch_openvino_save_state(const char* name);
EXECUTORCH_OPENVINO_API int executorch_openvino_restore_state(const char* name);
EXECUTORCH_OPENVINO_API int executorch_openvino_forget_state(const char* name);

// The same for one program's methods only. Methods loaded on this thread after set_load_owner(owner)
// belong to `owner` (any value but 0, which ends it); the *_of calls act on that owner's methods
// alone, so that several programs in one process (a server's sessions, each its own load) keep their
// states apart. Owner 0 in the *_of calls means every method, as the calls above.
EXECUTORCH_OPENVINO_API void executorch_openvino_set_load_owner(uint64_t owner);
EXECUTORCH_OPENVINO_API int executorch_openvino_save_state_of(uint64_t owner, const char* name);
EXECUTORCH_OPENVINO_API int executorch_openvino_restore_state_of(uint64_t owner, const char* name);
EXECUTORCH_OPENVINO_API int executorch_openvino_forget_state_of(uint64_t owner, const char* name);

// Slots a method's paged caches hold at most: slot 0 and 63 more (executorch_openvino_set_sequences).
#define EXECUTORCH_OPENVINO_MAX_SLOTS 64

// Several conversations in one call (continuous batching). The calling thread's next call of a method
// whose attention runs paged carries `count` sequences, their tokens one after another in the call's
// tokens: sequence i has counts[i] of them and continues its own caches, slot slots[i] (0 to 63; slot 0
// is the one every call without this uses, the only one saved states and state files cover). The call
// gives each token's position (a Hugging Face program's cache_position), and its logits must have a
// row for each token. The call consumes the plan; count 0 clears it. The call refuses a plan that does
// not fit it (the reason in executorch_openvino_last_error()).
EXECUTORCH_OPENVINO_API void executorch_openvino_set_sequences(const int64_t* slots, const int64_t* counts,
                                                               size_t count);

// The calling thread's next call of a decoder that computes its cross-attention caches once from
// the encoder's states (a Whisper program's text_decoder) brings the states the method's call before
// it brought, unchanged: the delegate does not compare them with those its caches were computed from
// (3 MB a step at whisper-base). For a caller that holds the states itself (the generation engine's
// speech programs). The call consumes the promise, and `promised` 0 takes it back (after a call that
// failed before the delegate saw it). A promise that is not kept gives wrong results.
EXECUTORCH_OPENVINO_API void executorch_openvino_promise_same_encoder_states(int promised);

// State files: the state saved as `name` by the owner's methods written to `path` with `size`
// bytes of the caller's own (`data`, may be NULL when size is 0), and read back in another process
// into a state saved as `name` (then restore_state_of sets it in). Reading refuses, naming why and
// changing nothing, a file that is truncated or damaged, or written by another program or with other
// options (device, precision, attention); `data` receives at most `capacity` of the caller's bytes and
// `*size` their whole count (call again with room for them when larger). Paged caches only (the
// CPU's default); grown caches are refused. 0, or the ExecuTorch error code.
EXECUTORCH_OPENVINO_API int executorch_openvino_write_state(uint64_t owner, const char* name, const char* path,
                                                            const void* data, size_t size);
EXECUTORCH_OPENVINO_API int executorch_openvino_read_state(uint64_t owner, const char* name, const char* path,
                                                           void* data, size_t capacity, size_t* size);

// The value a load would take for `key` from executorch_openvino_set_option or the environment,
// "" when neither sets it (or the key is unknown). Valid until the thread's next call.
EXECUTORCH_OPENVINO_API const char* executorch_openvino_get_option(const char* key);

// The option keys, comma-separated.
EXECUTORCH_OPENVINO_API const char* executorch_openvino_option_keys(void);

// One line per compiled model alive in the process: device, source (ir / precompiled), how many
// loaded methods share it, and the properties OpenVINO reports for it (EXECUTION_DEVICES,
// PERFORMANCE_HINT, INFERENCE_NUM_THREADS, NUM_STREAMS, INFERENCE_PRECISION_HINT, PERF_COUNT).
// Valid until the thread's next call.
EXECUTORCH_OPENVINO_API const char* executorch_openvino_describe_compiled_models(void);

// 1 when the library also registered under "OpenvinoBackend", ExecuTorch's own OpenVINO delegate's
// id (it does when the name was free as it loaded), so programs made by that delegate's
// partitioner run here; 0 when another library holds the name.
EXECUTORCH_OPENVINO_API int executorch_openvino_registered_upstream_name(void);

// The file of the library whose backend is registered under `backend_id` in this process's
// registry, "" when none is. Valid until the thread's next call.
EXECUTORCH_OPENVINO_API const char* executorch_openvino_backend_library(const char* backend_id);

#ifdef __cplusplus
}  // extern "C"
#endif
