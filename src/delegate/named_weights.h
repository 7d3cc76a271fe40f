// Weights a program keeps in ExecuTorch's named data (a .ptd file, or the .pte's own data segment)
// instead of in our blob: fetched by the key the blob records, and checked against its size and
// CRC-32 before OpenVINO reads them, so a .ptd from another export is refused, never computed with.
#pragma once

#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/named_data_map.h>

#include "blob/delegate_blob.h"
#include "common/outcome.h"

namespace executorch_openvino::delegate {

// `map` is the method's (BackendInitContext::get_named_data_map(); null when the program was
// loaded without data).
Outcome<executorch::runtime::FreeableBuffer> fetch_named_weights(const executorch::runtime::NamedDataMap* map,
                                                                 const blob::NamedWeights& weights);

}  // namespace executorch_openvino::delegate
