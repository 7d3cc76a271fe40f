// The OpenVINO runtime's version, parsed from ov_get_openvino_version()'s build number
// ("2026.4.1-22982-e213a147257-releases/2026/4"), and the range this delegate supports.
#pragma once

#include <optional>
#include <string>
#include <tuple>

namespace executorch_openvino::openvino_api {

struct RuntimeVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;

  friend bool operator<(const RuntimeVersion& a, const RuntimeVersion& b) {
    return std::tie(a.major, a.minor, a.patch) < std::tie(b.major, b.minor, b.patch);
  }
  friend bool operator==(const RuntimeVersion& a, const RuntimeVersion& b) {
    return std::tie(a.major, a.minor, a.patch) == std::tie(b.major, b.minor, b.patch);
  }
  std::string to_string() const;
};

// Lowest supported release, and the first release we refuse because we have not seen its C API.
inline constexpr RuntimeVersion kOldestSupported{2024, 2, 0};
inline constexpr RuntimeVersion kFirstUnsupported{2027, 0, 0};

std::optional<RuntimeVersion> parse_build_number(const std::string& build_number);
bool is_supported(const RuntimeVersion& version);
std::string supported_range_text();  // ">= 2024.2.0 and < 2027.0.0"

}  // namespace executorch_openvino::openvino_api
