// The C interface of libexecutorch_openvino_state, the helper that reaches what OpenVINO's C API does
// not offer: variable state (reset, truncate, snapshot, restore) and rewriting a model in memory
// (paged attention). The helper is
// built against the OpenVINO wheel's C++ headers and links libopenvino; the delegate opens it at
// run time (dlopen) and calls these functions with its C-API infer request, so the delegate
// itself keeps no link dependency on OpenVINO and no C++ type crosses the boundary.
//
// Every function returns 0 on success; otherwise it writes why (OpenVINO's message included) into
// `error` (at most error_size bytes, always terminated) and returns non-zero. No exception leaves.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define EOV_STATE_API __declspec(dllexport)
#else
#define EOV_STATE_API __attribute__((visibility("default")))
#endif

// The interface's version: the delegate refuses a helper of another.
#define EOV_STATE_ABI_VERSION 4

typedef struct ov_infer_request ov_infer_request_t;  // OpenVINO's C-API handles
typedef struct ov_model ov_model_t;
typedef struct eov_state_snapshot eov_state_snapshot;

EOV_STATE_API int eov_state_abi_version(void);

// Resets the variables named (all of them when count is 0) to their initial values.
EOV_STATE_API int eov_state_reset(ov_infer_request_t* request, const char* const* names, size_t count, char* error,
                    size_t error_size);

// Resets every variable whose name begins with `prefix` (a decoder's cross-attention caches, whose
// initializers then compute them anew from the encoder's states). None is an error.
EOV_STATE_API int eov_state_reset_prefix(ov_infer_request_t* request, const char* prefix, char* error,
                                         size_t error_size);

// Cuts dimension `axis` of every variable whose name begins with `prefix` to `length` (rolls the
// grown KV caches back to their first `length` positions). No such variable, or one shorter than
// `length`, is an error, and nothing is changed then.
EOV_STATE_API int eov_state_truncate(ov_infer_request_t* request, const char* prefix, int axis, int64_t length,
                                     char* error, size_t error_size);

// The first element of the integer variable `name` (a counter the model keeps, such as the length
// of its grown caches), without touching the large ones.
EOV_STATE_API int eov_state_read_int(ov_infer_request_t* request, const char* name, int64_t* value, char* error,
                                     size_t error_size);

// A deep copy of every variable's value, for restore() into this or another request of the same
// compiled model (a system prompt's state, reused by later conversations).
EOV_STATE_API int eov_state_snapshot_take(ov_infer_request_t* request, eov_state_snapshot** snapshot, char* error,
                            size_t error_size);
EOV_STATE_API int eov_state_snapshot_restore(ov_infer_request_t* request, const eov_state_snapshot* snapshot, char* error,
                               size_t error_size);
EOV_STATE_API void eov_state_snapshot_free(eov_state_snapshot* snapshot);

// eov_state_page_attention's results: rewritten; left as it was (`error` says why: not a model it
// applies to, or one OpenVINO's pass could not rewrite); failed (no model or options; the model is
// left as it was).
#define EOV_STATE_OK 0
#define EOV_STATE_FAILED 1
#define EOV_STATE_LEFT 2

// The names the exporter gives a model whose KV caches grow (python/executorch_openvino/ir_passes/
// grown_cache.py: EOV_GROWN_VARIABLE_PREFIX begins the caches' variables, EOV_LENGTH_VARIABLE counts
// their positions, EOV_CACHE_POSITION_INPUT gives the first position a call writes), and the names the
// rewrite gives a paged model's own inputs and output, which the delegate looks for (EOV_PAGED_CACHE_PREFIX,
// then the pass's name, begins the caches; EOV_PAGED_MASK_INPUT or, when the model computes the mask, the
// last output EOV_PAGED_MASK_OUTPUT; EOV_PAGED_TOKENS_INPUT; EOV_PAGED_PLAN_PREFIX, then the pass's name,
// begins the inputs that place the call's sequences in the caches). Written once, in Python
// (python/executorch_openvino/container/ir_names.py); the build makes this header of them (cmake/IrNames.cmake).
#include "openvino_state/ir_names.h"

typedef struct eov_paging {
  const char* cache_type;  // the caches' element type: "f32", "bf16", "f16"
  int32_t block_size;      // positions a cache block holds
} eov_paging;

// Rewrites, in memory, a model whose KV caches grow (python/executorch_openvino/ir_passes/grown_cache.py)
// so that OpenVINO's paged attention reads and writes them, before it is compiled
// (src/openvino_state/paged_attention.cpp says what the result looks like).
EOV_STATE_API int eov_state_page_attention(ov_model_t* model, const eov_paging* options, char* error,
                                           size_t error_size);

#ifdef __cplusplus
}
#endif
