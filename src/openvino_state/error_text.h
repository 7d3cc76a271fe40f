// How the helper's functions hand back why they failed: into the caller's buffer, truncated to fit and
// always terminated (state_abi.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

namespace executorch_openvino::openvino_state {

inline void write_error(const std::string& message, char* error, size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  const size_t n = std::min(message.size(), error_size - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

}  // namespace executorch_openvino::openvino_state
