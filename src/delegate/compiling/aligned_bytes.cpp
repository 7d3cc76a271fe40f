#include "delegate/compiling/aligned_bytes.h"

#include <cstring>
#include <new>

namespace executorch_openvino::delegate {

void AlignedBytes::Free::operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(kAlignment)); }

AlignedBytes AlignedBytes::allocate(size_t size) {
  AlignedBytes bytes;
  if (size == 0) return bytes;
  bytes.data.reset(static_cast<uint8_t*>(::operator new[](size, std::align_val_t(kAlignment))));
  bytes.size = size;
  return bytes;
}

AlignedBytes AlignedBytes::copy_of(const uint8_t* source, size_t size) {
  AlignedBytes bytes = allocate(size);
  if (size != 0) std::memcpy(bytes.data.get(), source, size);
  return bytes;
}

}  // namespace executorch_openvino::delegate
