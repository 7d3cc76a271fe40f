// A stand-in for libopenvino_c, for faults the real runtime cannot produce: a library missing a
// symbol, a runtime of an unsupported version, a runtime whose element types do not match the
// numbering chosen for its version. It exports every symbol name the delegate resolves; all but
// the few the loader calls while checking the runtime only return GENERAL_ERROR. Optional symbols
// are left out (the runtime must cope with their absence).
//
// Build-time knobs (compile definitions):
//   STAND_IN_VERSION="..."        the build number ov_get_openvino_version reports
//   <symbol>=stand_in_omitted     renames that symbol, so the library does not export it
//   STAND_IN_WRONG_BYTE_SIZES     tensors report twice their real byte size

#include <cstdint>
#include <cstdlib>

#include "openvino_api/symbol_table.h"

#ifndef STAND_IN_VERSION
#define STAND_IN_VERSION "2026.4.1-stand-in"
#endif

// Functions implemented below are renamed out of the way of the generic stubs.
#define ov_get_openvino_version stand_in_generic_version
#define ov_version_free stand_in_generic_version_free
#define ov_tensor_create_from_host_ptr stand_in_generic_create
#define ov_tensor_get_byte_size stand_in_generic_byte_size
#define ov_tensor_free stand_in_generic_tensor_free

#define STAND_IN_STUB(name) \
  extern "C" int name() { return -1; }
EXECUTORCH_OPENVINO_REQUIRED_SYMBOLS(STAND_IN_STUB)

#undef ov_get_openvino_version
#undef ov_version_free
#undef ov_tensor_create_from_host_ptr
#undef ov_tensor_get_byte_size
#undef ov_tensor_free

namespace openvino_api = executorch_openvino::openvino_api;

namespace {
struct StandInTensor {
  int element_code;
  int64_t elements;
};

// Element sizes by the 2025.1+ numbering (boolean=1 ... u64=19).
size_t element_bytes(int code) {
  switch (code) {
    case 1: case 7: case 16: return 1;   // boolean, i8, u8
    case 2: case 3: case 8: case 17: return 2;  // bf16, f16, i16, u16
    case 4: case 9: case 18: return 4;   // f32, i32, u32
    case 5: case 10: case 19: return 8;  // f64, i64, u64
    default: return 0;
  }
}
}  // namespace

extern "C" {

int ov_get_openvino_version(openvino_api::Version* version) {
  version->build_number = STAND_IN_VERSION;
  version->description = "stand-in";
  return 0;
}

void ov_version_free(openvino_api::Version* version) { version->build_number = nullptr; }

int ov_tensor_create_from_host_ptr(int type, openvino_api::Shape shape, void* host, openvino_api::ov_tensor** tensor) {
  if (host == nullptr || tensor == nullptr) return -14;
  int64_t elements = 1;
  for (int64_t i = 0; i < shape.rank; ++i) elements *= shape.dims[i];
  *tensor = reinterpret_cast<openvino_api::ov_tensor*>(new StandInTensor{type, elements});
  return 0;
}

int ov_tensor_get_byte_size(const openvino_api::ov_tensor* tensor, size_t* size) {
  const auto* t = reinterpret_cast<const StandInTensor*>(tensor);
  *size = element_bytes(t->element_code) * static_cast<size_t>(t->elements);
#ifdef STAND_IN_WRONG_BYTE_SIZES
  *size *= 2;
#endif
  return 0;
}

void ov_tensor_free(openvino_api::ov_tensor* tensor) { delete reinterpret_cast<StandInTensor*>(tensor); }

}  // extern "C"
