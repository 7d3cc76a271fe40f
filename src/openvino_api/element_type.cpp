#include "openvino_api/element_type.h"

namespace executorch_openvino::openvino_api {
namespace {

// Indexed by ElementType: boolean, bf16, f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64.
// 2024.2 to 2025.0: undefined=0, dynamic=1, then boolean=2 ... with u2/u3/u6 before u8.
constexpr int kCodes2024_2[kElementTypeCount] = {2, 3, 4, 5, 6, 8, 9, 10, 11, 17, 18, 19, 20};
// 2025.1 onwards (2026.x unchanged): dynamic=0, boolean=1 ...
constexpr int kCodes2025_1[kElementTypeCount] = {1, 2, 3, 4, 5, 7, 8, 9, 10, 16, 17, 18, 19};

}  // namespace

size_t element_size(ElementType type) {
  switch (type) {
    case ElementType::kBoolean:
    case ElementType::kI8:
    case ElementType::kU8:
      return 1;
    case ElementType::kBF16:
    case ElementType::kF16:
    case ElementType::kI16:
    case ElementType::kU16:
      return 2;
    case ElementType::kF32:
    case ElementType::kI32:
    case ElementType::kU32:
      return 4;
    case ElementType::kF64:
    case ElementType::kI64:
    case ElementType::kU64:
      return 8;
  }
  return 0;
}

const char* element_type_name(ElementType type) {
  switch (type) {
    case ElementType::kBoolean: return "boolean";
    case ElementType::kBF16: return "bf16";
    case ElementType::kF16: return "f16";
    case ElementType::kF32: return "f32";
    case ElementType::kF64: return "f64";
    case ElementType::kI8: return "i8";
    case ElementType::kI16: return "i16";
    case ElementType::kI32: return "i32";
    case ElementType::kI64: return "i64";
    case ElementType::kU8: return "u8";
    case ElementType::kU16: return "u16";
    case ElementType::kU32: return "u32";
    case ElementType::kU64: return "u64";
  }
  return "unknown";
}

ElementCodes::ElementCodes(const char* name, const int (&codes)[kElementTypeCount]) : name_(name) {
  for (int i = 0; i < kElementTypeCount; ++i) codes_[i] = codes[i];
}

std::optional<ElementCodes> ElementCodes::for_version(const RuntimeVersion& version) {
  if (version < RuntimeVersion{2024, 2, 0}) return std::nullopt;
  if (version < RuntimeVersion{2025, 1, 0}) return ElementCodes("2024.2-2025.0", kCodes2024_2);
  return ElementCodes("2025.1+", kCodes2025_1);
}

std::optional<ElementType> ElementCodes::type(ElementTypeCode code) const {
  for (int i = 0; i < kElementTypeCount; ++i) {
    if (codes_[i] == code) return static_cast<ElementType>(i);
  }
  return std::nullopt;
}

}  // namespace executorch_openvino::openvino_api
