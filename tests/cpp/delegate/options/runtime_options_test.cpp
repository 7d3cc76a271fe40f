// Choices made when a program loads rather than when it was exported: the device and options
// through their three channels and precedence, precompiled models, compiled models shared between
// methods, and inputs of dynamic shape. All against the real OpenVINO runtime.
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <executorch/runtime/backend/interface.h>
#include <executorch_openvino/backend.h>

#include "blob/delegate_blob.h"
#include "openvino_api/objects.h"
#include "openvino_api/runtime.h"
#include "case_helpers.h"
#include "delegate_harness.h"
#include "ir_case.h"
#include "scratch_path.h"

namespace executorch_openvino::testing {
namespace {

using executorch::runtime::BackendOption;

size_t created() { return std::stoul(runtime_description()["compiled_models_created"]); }
size_t reused() { return std::stoul(runtime_description()["compiled_models_reused"]); }

class RuntimeOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* key : {"device", "performance_hint", "num_threads", "num_streams", "precision",
                            "inference_precision", "cache_dir", "enable_mmap", "enable_profiling", "attention"}) {
      executorch_openvino_set_option(key, "");
      std::string variable = std::string("EXECUTORCH_OPENVINO_") + key;
      for (char& c : variable) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      ::unsetenv(variable.c_str());
    }
  }

  // Loads conv2d with `load_options`, runs it and checks the outputs; returns the init status.
  Error load_and_run(const std::vector<BackendOption>& load_options,
                     const std::vector<std::pair<std::string, std::string>>& extra_specs = {}) {
    c_ = load_ir_case("conv2d");
    // The extra specs stand for what the program's exporter wrote: they replace the case's own
    // (precision replaces its INFERENCE_PRECISION_HINT, as the exporter writes one of the two).
    auto replaced = [&](const std::string& key) {
      for (const auto& [extra, value] : extra_specs) {
        if (extra == key || (extra == "precision" && key == "INFERENCE_PRECISION_HINT")) return true;
      }
      return false;
    };
    decltype(c_.specs) specs;
    for (const auto& spec : c_.specs) {
      if (!replaced(spec.first)) specs.push_back(spec);
    }
    specs.insert(specs.end(), extra_specs.begin(), extra_specs.end());
    const Error status = harness_.init(c_.blob, specs, load_options);
    if (status != Error::Ok) return status;
    // "fast" may compute in bf16 or f16 (the CPU decides): checked to that precision's rounding.
    auto models = compiled_models();
    const std::string precision = models.size() == 1 ? models[0]["INFERENCE_PRECISION_HINT"] : "f32";
    expect_runs_correctly(harness_, c_, precision.empty() ? "f32" : precision);
    return status;
  }

  IrCase c_;
  DelegateHarness harness_;
};

// ---------------------------------------------------------------------------------------------
// Device chosen at load time

TEST_F(RuntimeOptionsTest, TheSameBlobLoadsOnCpuAndOnAutoByLoadTimeChoice) {
  ASSERT_EQ(load_and_run({text_option("device", "CPU")}), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["device"], "CPU");
  harness_.destroy();
  ASSERT_EQ(load_and_run({text_option("device", "AUTO")}), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["device"], "AUTO");
  EXPECT_EQ(only_model()["EXECUTION_DEVICES"], "CPU");  // what AUTO picked on this machine
}

TEST_F(RuntimeOptionsTest, AnAbsentDeviceFailsListingTheAvailableOnes) {
  EXPECT_EQ(load_and_run({text_option("device", "GPU")}), Error::NotSupported);
  EXPECT_NE(last_error().find("device 'GPU' is not available; available devices: CPU"), std::string::npos)
      << last_error();
  // Nothing is left behind, and the next load works.
  EXPECT_TRUE(compiled_models().empty());
  EXPECT_EQ(load_and_run({}), Error::Ok) << last_error();
}

// Each channel overrides the one below it; checked pair by pair with the device (an absent GPU
// fails the load, so which channel won is visible) and with a property read back from OpenVINO.
TEST_F(RuntimeOptionsTest, TheEnvironmentOverridesTheCompileSpec) {
  ::setenv("EXECUTORCH_OPENVINO_DEVICE", "GPU", 1);
  EXPECT_EQ(load_and_run({}), Error::NotSupported) << "the compile spec's CPU won over the environment";
  ::setenv("EXECUTORCH_OPENVINO_DEVICE", "CPU", 1);
  ::setenv("EXECUTORCH_OPENVINO_NUM_THREADS", "1", 1);
  ASSERT_EQ(load_and_run({}, {{"INFERENCE_NUM_THREADS", "2"}}), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["INFERENCE_NUM_THREADS"], "1");
}

TEST_F(RuntimeOptionsTest, SetOptionOverridesTheEnvironment) {
  ::setenv("EXECUTORCH_OPENVINO_DEVICE", "GPU", 1);
  ASSERT_EQ(executorch_openvino_set_option("device", "CPU"), 0) << last_error();
  ASSERT_EQ(load_and_run({}), Error::Ok) << last_error();
  harness_.destroy();
  ::setenv("EXECUTORCH_OPENVINO_NUM_THREADS", "2", 1);
  ASSERT_EQ(executorch_openvino_set_option("num_threads", "1"), 0) << last_error();
  ASSERT_EQ(load_and_run({}), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["INFERENCE_NUM_THREADS"], "1");
}

TEST_F(RuntimeOptionsTest, LoadTimeOptionsOverrideSetOption) {
  ASSERT_EQ(executorch_openvino_set_option("device", "CPU"), 0);
  EXPECT_EQ(load_and_run({text_option("device", "GPU")}), Error::NotSupported);
  ASSERT_EQ(executorch_openvino_set_option("num_threads", "2"), 0);
  ASSERT_EQ(load_and_run({int_option("num_threads", 1)}), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["INFERENCE_NUM_THREADS"], "1");
}

TEST_F(RuntimeOptionsTest, ExecutorchsOwnSetOptionReachesTheBackend) {
  BackendOption options[] = {text_option("device", "GPU")};
  ASSERT_EQ(executorch::runtime::set_option(EXECUTORCH_OPENVINO_BACKEND_ID, {options, 1}), Error::Ok);
  EXPECT_EQ(std::string(executorch_openvino_get_option("device")), "GPU");
  EXPECT_EQ(load_and_run({}), Error::NotSupported);

  BackendOption read[] = {text_option("device", ""), int_option("num_threads", 0)};
  ASSERT_EQ(executorch_openvino_set_option("num_threads", "1"), 0);
  ASSERT_EQ(executorch::runtime::get_option(EXECUTORCH_OPENVINO_BACKEND_ID, {read, 2}), Error::Ok);
  EXPECT_EQ(std::string(std::get<std::array<char, 256>>(read[0].value).data()), "GPU");
  EXPECT_EQ(std::get<int>(read[1].value), 1);
}

// ---------------------------------------------------------------------------------------------
// Options: read back from the compiled model; bad ones refused

TEST_F(RuntimeOptionsTest, OptionsAskedForAreWhatTheCompiledModelReports) {
  ASSERT_EQ(load_and_run({int_option("num_threads", 1), text_option("performance_hint", "throughput"),
                          text_option("inference_precision", "f32")}),
            Error::Ok)
      << last_error();
  auto model = only_model();
  EXPECT_EQ(model["INFERENCE_NUM_THREADS"], "1");
  EXPECT_EQ(model["PERFORMANCE_HINT"], "THROUGHPUT");
  EXPECT_EQ(model["INFERENCE_PRECISION_HINT"], "f32");
  harness_.destroy();
  // Streams need threads to run on: two streams on this machine's two cores.
  ASSERT_EQ(load_and_run({int_option("num_streams", 2), text_option("enable_profiling", "1")}), Error::Ok)
      << last_error();
  EXPECT_EQ(only_model()["NUM_STREAMS"], "2");
  EXPECT_EQ(only_model()["PERF_COUNT"], "YES");
}

TEST_F(RuntimeOptionsTest, DefaultsAreLatencyAndF32OnCpu) {
  ASSERT_EQ(load_and_run({}, {}), Error::Ok) << last_error();
  auto model = only_model();
  EXPECT_EQ(model["PERFORMANCE_HINT"], "LATENCY");
  EXPECT_EQ(model["INFERENCE_PRECISION_HINT"], "f32");
}

// precision: "exact" is f32; "fast" is what OpenVINO compiles with when no hint is given (bf16 or
// f16 on hardware that has it): asked of OpenVINO itself, since it depends on the CPU.
std::string device_default_precision() {
  auto runtime = openvino_api::Runtime::instance();
  if (!runtime.ok()) return "";
  auto value = openvino_api::device_property(*runtime.value(), "CPU", "INFERENCE_PRECISION_HINT");
  return value.ok() ? value.value() : "";
}

TEST_F(RuntimeOptionsTest, PrecisionExactIsF32AndFastIsTheDevicesOwnDefault) {
  const std::string fast = device_default_precision();
  ASSERT_TRUE(fast == "f32" || fast == "bf16" || fast == "f16") << "OpenVINO's CPU default: '" << fast << "'";

  ASSERT_EQ(load_and_run({text_option("precision", "exact")}), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["INFERENCE_PRECISION_HINT"], "f32");
  harness_.destroy();
  ASSERT_EQ(load_and_run({text_option("precision", "FAST")}), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["INFERENCE_PRECISION_HINT"], fast);
  harness_.destroy();
  // The program's precision=fast is overridden by a higher channel, and by inference_precision there.
  ASSERT_EQ(executorch_openvino_set_option("precision", "exact"), 0);
  ASSERT_EQ(load_and_run({}, {{"precision", "fast"}}), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["INFERENCE_PRECISION_HINT"], "f32");
  harness_.destroy();
  ASSERT_EQ(load_and_run({text_option("precision", "fast")}, {{"INFERENCE_PRECISION_HINT", "f32"}}), Error::Ok)
      << last_error();
  EXPECT_EQ(only_model()["INFERENCE_PRECISION_HINT"], fast) << "the load-time choice did not win over the program's";
  harness_.destroy();
  ASSERT_EQ(load_and_run({text_option("precision", "fast"), text_option("inference_precision", "f32")}), Error::Ok)
      << last_error();
  EXPECT_EQ(only_model()["INFERENCE_PRECISION_HINT"], "f32") << "in one channel, the explicit hint wins";
  EXPECT_EQ(std::string(executorch_openvino_get_option("precision")), "exact");
}

TEST_F(RuntimeOptionsTest, ABadPrecisionIsRefusedNamingTheTwoWords) {
  EXPECT_EQ(load_and_run({text_option("precision", "fp16")}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("option 'precision' = 'fp16': expected exact (f32, eager's results) or fast"),
            std::string::npos) << last_error();
  EXPECT_EQ(executorch_openvino_set_option("precision", "quick"), static_cast<int>(Error::InvalidArgument));
  EXPECT_EQ(std::string(executorch_openvino_get_option("precision")), "");
  // In a program: a bad word, or both spellings at once, is a bad blob, never a silent choice.
  EXPECT_EQ(load_and_run({}, {{"precision", "quick"}}), Error::DelegateInvalidCompatibility);
  EXPECT_NE(last_error().find("compile spec precision 'quick'"), std::string::npos) << last_error();
  EXPECT_EQ(load_and_run({}, {{"precision", "exact"}, {"INFERENCE_PRECISION_HINT", "bf16"}}), Error::DelegateInvalidCompatibility);
  EXPECT_NE(last_error().find("'precision' and 'INFERENCE_PRECISION_HINT' are both set"), std::string::npos)
      << last_error();
}

TEST_F(RuntimeOptionsTest, UnknownKeysAndBadValuesAreRefusedNamingThem) {
  EXPECT_EQ(load_and_run({text_option("devize", "CPU")}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("unknown option 'devize'; known options: device,"), std::string::npos) << last_error();
  EXPECT_EQ(load_and_run({text_option("num_threads", "many")}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("option 'num_threads' = 'many'"), std::string::npos) << last_error();

  EXPECT_EQ(executorch_openvino_set_option("numthreads", "1"), static_cast<int>(Error::InvalidArgument));
  EXPECT_NE(last_error().find("unknown option 'numthreads'"), std::string::npos) << last_error();
  EXPECT_EQ(executorch_openvino_set_option("enable_mmap", "maybe"), static_cast<int>(Error::InvalidArgument));
  EXPECT_EQ(std::string(executorch_openvino_get_option("enable_mmap")), "");

  BackendOption options[] = {text_option("device", "AUTO"), text_option("colour", "blue")};
  EXPECT_EQ(executorch::runtime::set_option(EXECUTORCH_OPENVINO_BACKEND_ID, {options, 2}), Error::InvalidArgument);
  EXPECT_EQ(std::string(executorch_openvino_get_option("device")), "") << "a refused call changed an option";

  ::setenv("EXECUTORCH_OPENVINO_NUM_STREAMS", "lots", 1);
  EXPECT_EQ(load_and_run({}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("environment variable EXECUTORCH_OPENVINO_NUM_STREAMS"), std::string::npos)
      << last_error();
}

TEST_F(RuntimeOptionsTest, GetOptionReportsSetOptionThenTheEnvironmentThenNothing) {
  EXPECT_EQ(std::string(executorch_openvino_get_option("device")), "");
  ::setenv("EXECUTORCH_OPENVINO_DEVICE", "AUTO", 1);
  EXPECT_EQ(std::string(executorch_openvino_get_option("device")), "AUTO");
  executorch_openvino_set_option("device", "CPU");
  EXPECT_EQ(std::string(executorch_openvino_get_option("device")), "CPU");
  executorch_openvino_set_option("enable_profiling", "true");
  EXPECT_EQ(std::string(executorch_openvino_get_option("enable_profiling")), "YES");
}

// A program may come from anywhere: it never chooses where files are written.
TEST_F(RuntimeOptionsTest, AFolderNamedByTheProgramIsIgnored) {
  const ScratchPath scratch("eov_spec_cache");
  const std::filesystem::path& folder = scratch.path();
  ASSERT_EQ(load_and_run({}, {{"CACHE_DIR", folder.string()}, {"GPU_CONFIG_FILE", "/tmp/x"}}), Error::Ok)
      << last_error();
  EXPECT_FALSE(std::filesystem::exists(folder)) << "a compile spec made the delegate write " << folder;
  harness_.destroy();
  // The same folder from a run-time channel is used.
  ASSERT_EQ(load_and_run({text_option("cache_dir", folder.c_str())}), Error::Ok) << last_error();
  EXPECT_TRUE(std::filesystem::exists(folder));
}

// ---------------------------------------------------------------------------------------------
// Precompiled models

TEST_F(RuntimeOptionsTest, AnEmbeddedCpuModelIsImportedAndGivesTheSameOutputs) {
  const IrCase c = load_ir_case("conv2d_precompiled");
  ASSERT_EQ(harness_.init(c.blob, c.specs), Error::Ok) << last_error();
  EXPECT_TRUE(harness_.blob_freed());  // poisoned: the imported model must not read it
  EXPECT_EQ(only_model()["source"], "precompiled");
  EXPECT_EQ(only_model()["INFERENCE_PRECISION_HINT"], "f32");
  expect_runs_correctly(harness_, c);
}

TEST_F(RuntimeOptionsTest, AnotherDeviceOrOtherOptionsCompileTheIrInstead) {
  const IrCase c = load_ir_case("conv2d_precompiled");
  for (const auto& load_options : std::vector<std::vector<BackendOption>>{
           {text_option("device", "AUTO")}, {int_option("num_threads", 1)}}) {
    ASSERT_EQ(harness_.init(c.blob, c.specs, load_options), Error::Ok) << last_error();
    EXPECT_EQ(only_model()["source"], "ir");
    expect_runs_correctly(harness_, c);
    harness_.destroy();
  }
}

// `c`'s blob rebuilt with its one precompiled model changed by `change`.
template <typename Change>
std::vector<uint8_t> with_precompiled_changed(const IrCase& c, Change change) {
  const blob::ParseResult parsed = blob::parse(c.blob.data(), c.blob.size());
  EXPECT_TRUE(parsed.blob) << parsed.error;
  if (!parsed.blob) return {};
  const blob::PrecompiledModel& original = parsed.blob->precompiled.at(0);
  blob::PrecompiledInput changed{original.device, original.openvino_version, original.properties,
                                 {original.model.data, original.model.data + original.model.size}};
  change(changed);
  return blob::build({
      {reinterpret_cast<const char*>(parsed.blob->ir_xml.data), parsed.blob->ir_xml.size},
      {parsed.blob->ir_weights.data, parsed.blob->ir_weights.data + parsed.blob->ir_weights.size}, {changed}});
}

TEST_F(RuntimeOptionsTest, AModelFromAnotherOpenvinoVersionIsNotImported) {
  const IrCase c = load_ir_case("conv2d_precompiled");
  const std::vector<uint8_t> rebuilt = with_precompiled_changed(
      c, [](blob::PrecompiledInput& model) { model.openvino_version = "2025.0.0-17942-other"; });
  ASSERT_EQ(harness_.init(rebuilt, c.specs), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["source"], "ir");
}

TEST_F(RuntimeOptionsTest, AModelThatFailsToImportFallsBackToTheIr) {
  const IrCase c = load_ir_case("conv2d_precompiled");
  const std::vector<uint8_t> rebuilt = with_precompiled_changed(
      c, [](blob::PrecompiledInput& model) { model.model = std::vector<uint8_t>(256, 0x5A); });
  ASSERT_EQ(harness_.init(rebuilt, c.specs), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["source"], "ir");
}

// ---------------------------------------------------------------------------------------------
// Compiled models shared between methods

TEST_F(RuntimeOptionsTest, MethodsFromTheSameBlobShareOneCompiledModelWithTheirOwnRequests) {
  const IrCase c = load_ir_case("constant_in_place");
  const size_t created_before = created(), reused_before = reused();
  auto first = std::make_unique<DelegateHarness>();
  DelegateHarness second;
  ASSERT_EQ(first->init(c.blob, c.specs), Error::Ok) << last_error();
  ASSERT_EQ(second.init(c.blob, c.specs), Error::Ok) << last_error();
  EXPECT_EQ(created() - created_before, 1u);
  EXPECT_EQ(reused() - reused_before, 1u);
  EXPECT_EQ(only_model()["users"], "2");

  // Own requests: different buffers in each, both correct.
  auto in1 = make_inputs(c), out1 = make_outputs(c), in2 = make_inputs(c), out2 = make_outputs(c);
  ASSERT_EQ(first->execute(args_of(in1, out1)), Error::Ok) << last_error();
  ASSERT_EQ(second.execute(args_of(in2, out2)), Error::Ok) << last_error();
  expect_outputs_match(c, out1);
  expect_outputs_match(c, out2);

  // The compiled model (and the weights it reads in place) outlives the method that made it.
  first.reset();
  auto out3 = make_outputs(c);
  ASSERT_EQ(second.execute(args_of(in2, out3)), Error::Ok) << last_error();
  expect_outputs_match(c, out3);
  EXPECT_EQ(only_model()["users"], "1");
  second.destroy();
  EXPECT_TRUE(compiled_models().empty()) << "destroying the last user keeps the compiled model";
}

TEST_F(RuntimeOptionsTest, DifferentOptionsOrContentGetTheirOwnCompiledModel) {
  const IrCase c = load_ir_case("conv2d");
  DelegateHarness a, b, d;
  ASSERT_EQ(a.init(c.blob, c.specs), Error::Ok) << last_error();
  ASSERT_EQ(b.init(c.blob, c.specs, {int_option("num_threads", 1)}), Error::Ok) << last_error();
  std::vector<uint8_t> other = load_ir_case("matmul_bias_relu").blob;
  ASSERT_EQ(d.init(other, c.specs), Error::Ok) << last_error();
  EXPECT_EQ(compiled_models().size(), 3u);
}

// ---------------------------------------------------------------------------------------------
// Dynamic shapes

TEST_F(RuntimeOptionsTest, ABoundedDynamicInputRunsAtEveryShapeInsideItsBounds) {
  const IrCase c = load_ir_case("dynamic_rows");  // x: [1..8, 4] -> x * 2 + 1
  ASSERT_EQ(harness_.init(c.blob, c.specs), Error::Ok) << last_error();
  HostTensor output(ScalarType::Float, {8, 4}, /*resizable=*/true);
  for (int rows : {1, 3, 8, 2, 5, 8, 1}) {
    HostTensor input(ScalarType::Float, {rows, 4});
    auto* x = reinterpret_cast<float*>(input.data());
    for (int i = 0; i < rows * 4; ++i) x[i] = static_cast<float>(i) * 0.5f - 3.0f + rows;
    ASSERT_EQ(harness_.execute({&input, &output}), Error::Ok) << "rows " << rows << ": " << last_error();
    ASSERT_EQ(output.sizes(), (std::vector<int32_t>{rows, 4}));
    const auto* y = reinterpret_cast<const float*>(output.data());
    for (int i = 0; i < rows * 4; ++i) ASSERT_FLOAT_EQ(y[i], x[i] * 2 + 1) << "rows " << rows << " [" << i << "]";
  }
}

TEST_F(RuntimeOptionsTest, AShapeOutsideTheBoundsIsInvalidArgumentAndTheMethodKeepsWorking) {
  const IrCase c = load_ir_case("dynamic_rows");
  ASSERT_EQ(harness_.init(c.blob, c.specs), Error::Ok) << last_error();
  HostTensor output(ScalarType::Float, {9, 4}, true);
  for (int rows : {9, 0}) {
    HostTensor input(ScalarType::Float, {rows, 4});
    EXPECT_EQ(harness_.execute({&input, &output}), Error::InvalidArgument) << rows;
    EXPECT_NE(last_error().find("input 0 'x': shape [" + std::to_string(rows) + ",4], but the model expects [1..8,4]"),
              std::string::npos)
        << last_error();
  }
  HostTensor input(ScalarType::Float, {2, 4}, std::vector<uint8_t>(32, 0));
  ASSERT_EQ(harness_.execute({&input, &output}), Error::Ok) << last_error();
  EXPECT_EQ(output.sizes(), (std::vector<int32_t>{2, 4}));
  EXPECT_FLOAT_EQ(reinterpret_cast<const float*>(output.data())[0], 1.0f);
}

TEST_F(RuntimeOptionsTest, AZeroSizeInputInsideTheBoundsGivesAnEmptyOutput) {
  const IrCase c = load_ir_case("dynamic_rows_from_zero");  // x: [0..8, 4]
  ASSERT_EQ(harness_.init(c.blob, c.specs), Error::Ok) << last_error();
  HostTensor output(ScalarType::Float, {8, 4}, true);
  HostTensor empty(ScalarType::Float, {0, 4});
  ASSERT_EQ(harness_.execute({&empty, &output}), Error::Ok) << last_error();
  EXPECT_EQ(output.sizes(), (std::vector<int32_t>{0, 4}));
  HostTensor two(ScalarType::Float, {2, 4}, std::vector<uint8_t>(32, 0));
  ASSERT_EQ(harness_.execute({&two, &output}), Error::Ok) << last_error();
  EXPECT_EQ(output.sizes(), (std::vector<int32_t>{2, 4}));
  EXPECT_FLOAT_EQ(reinterpret_cast<const float*>(output.data())[7], 1.0f);
}

TEST_F(RuntimeOptionsTest, ADynamicOutputLargerThanExecutorchsTensorIsRefused) {
  const IrCase c = load_ir_case("dynamic_rows");
  ASSERT_EQ(harness_.init(c.blob, c.specs), Error::Ok) << last_error();
  HostTensor input(ScalarType::Float, {6, 4});
  HostTensor small_output(ScalarType::Float, {4, 4}, true);  // planned for at most 4 rows
  EXPECT_EQ(harness_.execute({&input, &small_output}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("output 0 came out with shape [6,4]"), std::string::npos) << last_error();
}

}  // namespace
}  // namespace executorch_openvino::testing
