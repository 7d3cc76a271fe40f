// Paths the test environment provides (see support/test_main.cpp and tests/cpp/CMakeLists.txt).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace executorch_openvino::testing {

inline std::filesystem::path env_path(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') {
    throw std::runtime_error(std::string(name) + " is not set by the test environment");
  }
  return value;
}

}  // namespace executorch_openvino::testing
