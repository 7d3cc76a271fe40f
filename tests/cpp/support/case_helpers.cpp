#include "case_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <sstream>

#include <executorch_openvino/backend.h>

namespace executorch_openvino::testing {

std::string last_error() { return executorch_openvino_last_error(); }

std::vector<std::unique_ptr<HostTensor>> make_inputs(const IrCase& c) {
  std::vector<std::unique_ptr<HostTensor>> tensors;
  for (const TensorFile& f : c.inputs) tensors.push_back(std::make_unique<HostTensor>(f.type, f.sizes, f.bytes));
  return tensors;
}

std::vector<std::unique_ptr<HostTensor>> make_outputs(const IrCase& c) {
  std::vector<std::unique_ptr<HostTensor>> tensors;
  for (const TensorFile& f : c.expected_outputs) tensors.push_back(std::make_unique<HostTensor>(f.type, f.sizes));
  return tensors;
}

std::vector<HostTensor*> args_of(const std::vector<std::unique_ptr<HostTensor>>& inputs,
                                 const std::vector<std::unique_ptr<HostTensor>>& outputs) {
  std::vector<HostTensor*> args;
  for (const auto& t : inputs) args.push_back(t.get());
  for (const auto& t : outputs) args.push_back(t.get());
  return args;
}

namespace {
// Half a unit in the last place of the precision's significand, times a few roundings (inputs,
// weights, the accumulated result); f32 keeps the tight bound the reference was made for.
float rounding_allowance(const std::string& precision) {
  if (precision == "bf16") return 4 * 0x1p-8f;
  if (precision == "f16") return 4 * 0x1p-11f;
  return 0.0f;
}
}  // namespace

void expect_outputs_match(const IrCase& c, const std::vector<std::unique_ptr<HostTensor>>& outputs,
                          const std::string& precision) {
  ASSERT_EQ(outputs.size(), c.expected_outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorFile& expected = c.expected_outputs[i];
    const HostTensor& actual = *outputs[i];
    ASSERT_EQ(actual.bytes().size(), expected.bytes.size()) << "output " << i;
    if (expected.type == ScalarType::Float) {
      const size_t n = expected.bytes.size() / sizeof(float);
      std::vector<float> want(n), got(n);
      std::memcpy(want.data(), expected.bytes.data(), expected.bytes.size());
      std::memcpy(got.data(), actual.bytes().data(), actual.bytes().size());
      float largest = 0.0f;
      for (float w : want) largest = std::max(largest, std::fabs(w));
      const float allowance = rounding_allowance(precision) * largest;
      for (size_t k = 0; k < n; ++k) {
        ASSERT_NEAR(got[k], want[k], 1e-4f + 1e-5f * std::fabs(want[k]) + allowance)
            << c.name << " output " << i << "[" << k << "] at " << precision;
      }
    } else {
      EXPECT_EQ(actual.bytes(), expected.bytes) << c.name << " output " << i;
    }
  }
}

void expect_runs_correctly(DelegateHarness& harness, const IrCase& c, const std::string& precision) {
  auto inputs = make_inputs(c);
  auto outputs = make_outputs(c);
  const Error status = harness.execute(args_of(inputs, outputs));
  ASSERT_EQ(status, Error::Ok) << last_error();
  expect_outputs_match(c, outputs, precision);
}

using executorch::runtime::BackendOption;

BackendOption text_option(const char* key, const char* value) {
  BackendOption option;
  std::strncpy(option.key, key, sizeof(option.key) - 1);
  std::array<char, executorch::runtime::kMaxOptionValueLength> text{};
  std::strncpy(text.data(), value, text.size() - 1);
  option.value = text;
  return option;
}

BackendOption int_option(const char* key, int value) {
  BackendOption option;
  std::strncpy(option.key, key, sizeof(option.key) - 1);
  option.value = value;
  return option;
}

std::vector<std::map<std::string, std::string>> compiled_models() {
  std::vector<std::map<std::string, std::string>> models;
  std::istringstream lines(executorch_openvino_describe_compiled_models());
  std::string line;
  while (std::getline(lines, line)) {
    std::map<std::string, std::string> fields;
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      const size_t eq = word.find('=');
      if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
    }
    models.push_back(fields);
  }
  return models;
}

std::map<std::string, std::string> only_model() {
  auto models = compiled_models();
  EXPECT_EQ(models.size(), 1u) << executorch_openvino_describe_compiled_models();
  return models.empty() ? std::map<std::string, std::string>{} : models.front();
}

std::map<std::string, std::string> runtime_description() {
  std::map<std::string, std::string> fields;
  std::istringstream lines(executorch_openvino_describe_runtime());
  std::string line;
  while (std::getline(lines, line)) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) fields[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return fields;
}

}  // namespace executorch_openvino::testing
