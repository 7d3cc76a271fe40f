#include "ir_case.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace executorch_openvino::testing {

std::filesystem::path ir_cases_dir() {
  const char* dir = std::getenv("EXECUTORCH_OPENVINO_IR_CASES");
  if (dir == nullptr || dir[0] == '\0') throw std::runtime_error("EXECUTORCH_OPENVINO_IR_CASES is not set");
  return dir;
}

std::vector<uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

IrCase load_ir_case(const std::string& name) {
  const std::filesystem::path folder = ir_cases_dir() / name;
  IrCase result;
  result.name = name;
  result.blob = read_file(folder / "model.eovb");
  std::ifstream spec(folder / "spec.txt");
  if (!spec) throw std::runtime_error("no spec.txt in " + folder.string());
  std::string line;
  while (std::getline(spec, line)) {
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    if (kind == "property") {
      std::string key, value;
      fields >> key >> value;
      result.specs.emplace_back(key, value);
    } else if (kind == "input" || kind == "output") {
      std::string dtype, dims, file;
      fields >> dtype >> dims >> file;
      TensorFile tensor{scalar_type_from_name(dtype), {}, read_file(folder / file)};
      if (dims != "-") {
        std::istringstream parts(dims);
        std::string part;
        while (std::getline(parts, part, ',')) tensor.sizes.push_back(std::stoi(part));
      }
      (kind == "input" ? result.inputs : result.expected_outputs).push_back(std::move(tensor));
    }
  }
  return result;
}

}  // namespace executorch_openvino::testing
