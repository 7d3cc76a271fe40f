// A fast 64-bit hash for recognising content (blob sections, cache keys, cached model files). It
// finds accidental differences, not deliberate ones: nothing here is a security boundary.
#pragma once

#include <cstddef>
#include <cstdint>

namespace executorch_openvino::delegate {

// Different seeds give independent hashes of the same bytes.
uint64_t content_hash(const void* data, size_t size, uint64_t seed = 0);

}  // namespace executorch_openvino::delegate
