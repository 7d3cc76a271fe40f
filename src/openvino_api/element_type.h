// OpenVINO element types, and the per-release numbering of ov_element_type_e. The C enum was
// renumbered in 2024.2 (u2/u3/u6/string inserted) and again in 2025.1 (undefined merged into
// dynamic, everything after shifted down by one), so the codes are chosen from the runtime's
// version and then verified against the runtime itself (see verify_element_codes in runtime.cpp).
#pragma once

#include <cstddef>
#include <optional>

#include "openvino_api/ov_c_api.h"
#include "openvino_api/runtime_version.h"

namespace executorch_openvino::openvino_api {

// The element types the delegate exchanges with OpenVINO. Our own order, not OpenVINO's.
enum class ElementType {
  kBoolean,
  kBF16,
  kF16,
  kF32,
  kF64,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
};
inline constexpr int kElementTypeCount = 13;

size_t element_size(ElementType type);
const char* element_type_name(ElementType type);  // OpenVINO's spelling: "f32", "i64", "boolean"

// Codes of one numbering of ov_element_type_e.
class ElementCodes {
 public:
  // The numbering used by `version`, or nullopt for releases we do not know.
  static std::optional<ElementCodes> for_version(const RuntimeVersion& version);

  ElementTypeCode code(ElementType type) const { return static_cast<ElementTypeCode>(codes_[static_cast<int>(type)]); }
  std::optional<ElementType> type(ElementTypeCode code) const;
  const char* numbering_name() const { return name_; }

 private:
  ElementCodes(const char* name, const int (&codes)[kElementTypeCount]);
  const char* name_;
  int codes_[kElementTypeCount];
};

}  // namespace executorch_openvino::openvino_api
