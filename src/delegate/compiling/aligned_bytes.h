// Heap memory aligned for OpenVINO's kernels, for bytes a compiled model may keep reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace executorch_openvino::delegate {

struct AlignedBytes {
  static constexpr size_t kAlignment = 64;
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t[], Free> data;
  size_t size = 0;

  // `size` uninitialised bytes (none for 0); throws std::bad_alloc like new.
  static AlignedBytes allocate(size_t size);
  static AlignedBytes copy_of(const uint8_t* source, size_t size);
};

}  // namespace executorch_openvino::delegate
