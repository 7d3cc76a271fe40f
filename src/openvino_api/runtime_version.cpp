#include "openvino_api/runtime_version.h"

#include <cctype>

namespace executorch_openvino::openvino_api {

std::string RuntimeVersion::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<RuntimeVersion> parse_build_number(const std::string& build_number) {
  // Leading "YYYY.M.P"; the patch may be missing in custom builds.
  int parts[3] = {0, 0, 0};
  int count = 0;
  size_t pos = 0;
  while (count < 3 && pos < build_number.size() && std::isdigit(static_cast<unsigned char>(build_number[pos]))) {
    long value = 0;
    while (pos < build_number.size() && std::isdigit(static_cast<unsigned char>(build_number[pos]))) {
      value = value * 10 + (build_number[pos] - '0');
      if (value > 1000000) return std::nullopt;
      ++pos;
    }
    parts[count++] = static_cast<int>(value);
    if (pos < build_number.size() && build_number[pos] == '.') {
      ++pos;
    } else {
      break;
    }
  }
  if (count < 2) return std::nullopt;
  return RuntimeVersion{parts[0], parts[1], parts[2]};
}

bool is_supported(const RuntimeVersion& version) {
  return !(version < kOldestSupported) && version < kFirstUnsupported;
}

std::string supported_range_text() {
  return ">= " + kOldestSupported.to_string() + " and < " + kFirstUnsupported.to_string();
}

}  // namespace executorch_openvino::openvino_api
