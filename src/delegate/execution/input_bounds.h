// The values an IR input may take (blob section 8): an index into a dimension of static size, or a
// position in the context a KV cache was exported with. OpenVINO computes with any value (its Gather
// gives zeros for an index past the end; a KV cache grows past its context), where eager PyTorch
// raises an IndexError, so the delegate refuses a call holding a value outside before the inference.
#pragma once

#include <optional>
#include <string>

#include <executorch/runtime/core/evalue.h>

#include "blob/delegate_blob.h"

namespace executorch_openvino::delegate {

// The first value of `value` (an integer tensor, or an Int) outside `bound`, said as "96" or "4100 at
// element 3"; nullopt when every value is inside (or `value` holds no integers).
std::optional<std::string> first_out_of_bounds(const executorch::runtime::EValue& value,
                                               const blob::InputBound& bound);

}  // namespace executorch_openvino::delegate
