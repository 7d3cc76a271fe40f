// A test case written by tests/fixtures/make_ir_cases.py: a delegate blob, the compile specs, the
// inputs and the outputs NumPy computed for them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "host_tensor.h"

namespace executorch_openvino::testing {

struct TensorFile {
  ScalarType type;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> bytes;
};

struct IrCase {
  std::string name;
  std::vector<uint8_t> blob;
  std::vector<std::pair<std::string, std::string>> specs;
  std::vector<TensorFile> inputs;
  std::vector<TensorFile> expected_outputs;
};

// The folder of generated cases (from the EXECUTORCH_OPENVINO_IR_CASES environment variable).
std::filesystem::path ir_cases_dir();
IrCase load_ir_case(const std::string& name);
std::vector<uint8_t> read_file(const std::filesystem::path& path);

}  // namespace executorch_openvino::testing
