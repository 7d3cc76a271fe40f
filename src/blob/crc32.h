// CRC-32 (the zlib / PNG polynomial), so Python writers can use zlib.crc32 for the same value.
#pragma once

#include <cstddef>
#include <cstdint>

namespace executorch_openvino::blob {

// Continues `crc` (0 to start) over `size` bytes at `data`.
uint32_t crc32(const void* data, size_t size, uint32_t crc = 0);

}  // namespace executorch_openvino::blob
