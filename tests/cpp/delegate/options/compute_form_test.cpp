// The CPU's activation group for compressed weights (src/delegate/options/compute_form.h): what
// dynamic_quantization=auto gives each weights spec, and how the option's words and a program's own
// group size resolve. python/executorch_openvino/container/compile_specs.py writes the rule again for
// export; tests/python/container/test_load_time_properties.py holds the two equal.
#include <gtest/gtest.h>

#include <string>

#include "delegate/options/compute_form.h"

namespace executorch_openvino::delegate {
namespace {

const std::string* group_of(const CompileOptions& options) {
  for (const openvino_api::Property& property : options.properties) {
    if (property.key == kDynamicQuantization) return &property.value;
  }
  return nullptr;
}

CompileOptions program(const std::string& device, const std::string& weights, const char* asked = nullptr) {
  CompileOptions options;
  options.device = device;
  options.weights = weights;
  if (asked != nullptr) options.properties.push_back({kDynamicQuantization, asked});
  return options;
}

// Guards the table: a version that left int8 at OpenVINO's 32, or gave int4 (whose own groups are
// usually 32 to 128) the wider group, under which a step at Qwen2.5-0.5B's shape took 1.07x the time.
TEST(ComputeFormTest, TheActivationGroupFollowsTheWeights) {
  EXPECT_EQ(activation_group_for("int8:0"), 128);
  EXPECT_EQ(activation_group_for("int8_sym:0"), 128);
  EXPECT_EQ(activation_group_for("int4:128"), 0);
  EXPECT_EQ(activation_group_for("int4_asym:64"), 0);
  EXPECT_EQ(activation_group_for("int4:-1"), 0);
  EXPECT_EQ(activation_group_for(""), 0);
  EXPECT_EQ(activation_group_for("fp16"), 0);
}

TEST(ComputeFormTest, AutoSetsTheGroupOnTheCpuOnly) {
  CompileOptions cpu = program("CPU", "int8:0");
  resolve_compute_form(cpu);
  ASSERT_NE(group_of(cpu), nullptr);
  EXPECT_EQ(*group_of(cpu), "128");

  CompileOptions one_cpu = program("CPU.0", "int8_sym:0", kAutoComputeForm);
  resolve_compute_form(one_cpu);
  ASSERT_NE(group_of(one_cpu), nullptr);
  EXPECT_EQ(*group_of(one_cpu), "128");
  CompileOptions int4 = program("CPU", "int4:128", kAutoComputeForm);
  resolve_compute_form(int4);
  EXPECT_EQ(group_of(int4), nullptr);

  for (const char* device : {"GPU", "NPU", "AUTO", "HETERO:GPU,CPU"}) {
    CompileOptions other = program(device, "int8:0", kAutoComputeForm);
    resolve_compute_form(other);
    EXPECT_EQ(group_of(other), nullptr) << device;  // never the "auto" word passed on to OpenVINO
  }
  CompileOptions uncompressed = program("CPU", "", kAutoComputeForm);
  resolve_compute_form(uncompressed);
  EXPECT_EQ(group_of(uncompressed), nullptr);
}

TEST(ComputeFormTest, OnLeavesOpenvinoItsDefaultAndNumbersAreKept) {
  CompileOptions on = program("CPU", "int8:0", kDeviceComputeForm);
  resolve_compute_form(on);
  EXPECT_EQ(group_of(on), nullptr);

  for (const char* asked : {"0", "32", "256"}) {
    CompileOptions kept = program("CPU", "int8:0", asked);
    resolve_compute_form(kept);
    ASSERT_NE(group_of(kept), nullptr);
    EXPECT_EQ(*group_of(kept), asked);
    EXPECT_EQ(kept.properties.size(), 1u);
  }
}

}  // namespace
}  // namespace executorch_openvino::delegate
