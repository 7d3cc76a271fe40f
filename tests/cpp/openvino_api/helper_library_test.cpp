// The state helper (libexecutorch_openvino_state) through HelperLibrary, on a model whose one
// variable grows by its input at every call, driven through the C API as the delegate drives it.
#include "openvino_api/helper_library.h"

#include <gtest/gtest.h>

#include <vector>

#include "openvino_api/objects.h"
#include "test_environment.h"

namespace executorch_openvino::openvino_api {
namespace {

using testing::env_path;

// state = concat(state, x) along dimension 1; the output is the new state.
constexpr const char* kGrowingModel = R"IR(<?xml version="1.0"?>
<net name="grow" version="11">
	<layers>
		<layer id="0" name="x" type="Parameter" version="opset1">
			<data shape="1,?" element_type="f32" />
			<output>
				<port id="0" precision="FP32" names="x">
					<dim>1</dim>
					<dim>-1</dim>
				</port>
			</output>
		</layer>
		<layer id="1" name="Constant_3" type="Const" version="opset1">
			<data element_type="f32" shape="1, 0" offset="0" size="0" />
			<output>
				<port id="0" precision="FP32">
					<dim>1</dim>
					<dim>0</dim>
				</port>
			</output>
		</layer>
		<layer id="2" name="ReadValue_4" type="ReadValue" version="opset6">
			<data variable_id="cache" variable_type="f32" variable_shape="1,?" />
			<input>
				<port id="0" precision="FP32">
					<dim>1</dim>
					<dim>0</dim>
				</port>
			</input>
			<output>
				<port id="1" precision="FP32">
					<dim>1</dim>
					<dim>-1</dim>
				</port>
			</output>
		</layer>
		<layer id="3" name="Concat_5" type="Concat" version="opset1">
			<data axis="1" />
			<input>
				<port id="0" precision="FP32">
					<dim>1</dim>
					<dim>-1</dim>
				</port>
				<port id="1" precision="FP32">
					<dim>1</dim>
					<dim>-1</dim>
				</port>
			</input>
			<output>
				<port id="2" precision="FP32" names="Result_7">
					<dim>1</dim>
					<dim>-1</dim>
				</port>
			</output>
		</layer>
		<layer id="4" name="Assign_6" type="Assign" version="opset6">
			<data variable_id="cache" />
			<input>
				<port id="0" precision="FP32">
					<dim>1</dim>
					<dim>-1</dim>
				</port>
			</input>
			<output>
				<port id="1" precision="FP32">
					<dim>1</dim>
					<dim>-1</dim>
				</port>
			</output>
		</layer>
		<layer id="5" name="Result_7" type="Result" version="opset1" output_names="Result_7">
			<input>
				<port id="0" precision="FP32">
					<dim>1</dim>
					<dim>-1</dim>
				</port>
			</input>
		</layer>
	</layers>
	<edges>
		<edge from-layer="0" from-port="0" to-layer="3" to-port="1" />
		<edge from-layer="1" from-port="0" to-layer="2" to-port="0" />
		<edge from-layer="2" from-port="1" to-layer="3" to-port="0" />
		<edge from-layer="3" from-port="2" to-layer="4" to-port="0" />
		<edge from-layer="3" from-port="2" to-layer="5" to-port="0" />
	</edges>
	<rt_info>
		<info name="OpenVINO Runtime" value="2026.4.1-22982-e213a147257-releases/2026/4" />
	</rt_info>
</net>
)IR";

class VariableStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto runtime = Runtime::load(env_path("EXECUTORCH_OPENVINO_OV_LIBS_DIR"));
    ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
    runtime_ = std::move(runtime).value();
    // The initial value is an empty constant, which still needs weights to point into.
    static const float kNoWeights[1] = {0};
    auto model = read_model(*runtime_, kGrowingModel, std::char_traits<char>::length(kGrowingModel), kNoWeights,
                            sizeof kNoWeights);
    ASSERT_TRUE(model.ok()) << model.failure().message;
    model_ = std::move(model).value();
    auto compiled = compile_model(*runtime_, model_.get(), "CPU", {{"INFERENCE_PRECISION_HINT", "f32"}});
    ASSERT_TRUE(compiled.ok()) << compiled.failure().message;
    compiled_ = std::move(compiled).value();
    auto control = HelperLibrary::open(env_path("EXECUTORCH_OPENVINO_STATE_HELPER"));
    ASSERT_TRUE(control.ok()) << control.failure().message;
    control_ = std::move(control).value();
  }

  InferRequestPtr request() {
    auto made = create_infer_request(*runtime_, compiled_.get());
    EXPECT_TRUE(made.ok());
    return std::move(made).value();
  }

  // Runs one call appending `values`; returns the whole state after it.
  std::vector<float> call(ov_infer_request* request, std::vector<float> values) {
    const int64_t dims[2] = {1, static_cast<int64_t>(values.size())};
    auto input = wrap_host_memory(*runtime_, ElementType::kF32, dims, 2, values.data());
    EXPECT_TRUE(input.ok());
    EXPECT_TRUE(set_input(*runtime_, request, 0, input.value().get()).ok());
    EXPECT_TRUE(infer(*runtime_, request).ok());
    auto output = output_tensor(*runtime_, request, 0);
    EXPECT_TRUE(output.ok());
    const float* data = static_cast<const float*>(output.value().data);
    return std::vector<float>(data, data + output.value().byte_size / sizeof(float));
  }

  std::unique_ptr<Runtime> runtime_;
  ModelPtr model_;
  CompiledModelPtr compiled_;
  std::unique_ptr<HelperLibrary> control_;
};

TEST_F(VariableStateTest, TruncateRollsBackAndALongerLengthChangesNothing) {
  InferRequestPtr a = request();
  call(a.get(), {0, 1});
  EXPECT_EQ(call(a.get(), {2, 3}), (std::vector<float>{0, 1, 2, 3}));
  Status refused = control_->truncate(a.get(), "cache", 1, 5);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.failure().message.find("holds 4 positions, fewer than 5"), std::string::npos)
      << refused.failure().message;
  EXPECT_EQ(call(a.get(), {4}), (std::vector<float>{0, 1, 2, 3, 4}));
  ASSERT_TRUE(control_->truncate(a.get(), "ca", 1, 2).ok());
  EXPECT_EQ(call(a.get(), {9}), (std::vector<float>{0, 1, 9}));
}

TEST_F(VariableStateTest, ASnapshotRestoresIntoAnotherRequestAndStaysReusable) {
  InferRequestPtr a = request();
  call(a.get(), {5, 6});
  auto prefix = control_->snapshot(a.get());
  ASSERT_TRUE(prefix.ok()) << prefix.failure().message;
  InferRequestPtr b = request();
  ASSERT_TRUE(control_->restore(b.get(), prefix.value()).ok());
  EXPECT_EQ(call(b.get(), {7}), (std::vector<float>{5, 6, 7}));
  EXPECT_EQ(call(a.get(), {8}), (std::vector<float>{5, 6, 8}));
  ASSERT_TRUE(control_->restore(a.get(), prefix.value()).ok());
  EXPECT_EQ(call(a.get(), {9}), (std::vector<float>{5, 6, 9}));
}

TEST_F(VariableStateTest, ResetStartsAgainAndAnUnknownNameIsRefused) {
  InferRequestPtr a = request();
  call(a.get(), {1, 2});
  Status refused = control_->reset(a.get(), {"kache"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.failure().message.find("no variable named 'kache'"), std::string::npos);
  ASSERT_TRUE(control_->reset(a.get(), {}).ok());
  EXPECT_EQ(call(a.get(), {3}), (std::vector<float>{3}));
}

// Guards the reset by prefix the delegate gives an encoder's caches: a wrong prefix is refused and
// changes nothing (fails when an empty match resets everything, as eov_state_reset's empty list does).
TEST_F(VariableStateTest, AResetByPrefixStartsThoseVariablesAgainAndAnUnknownPrefixIsRefused) {
  InferRequestPtr a = request();
  call(a.get(), {1, 2});
  Status refused = control_->reset_prefix(a.get(), "kache");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.failure().message.find("no variable named 'kache...'"), std::string::npos);
  EXPECT_EQ(call(a.get(), {3}), (std::vector<float>{1, 2, 3}));
  ASSERT_TRUE(control_->reset_prefix(a.get(), "ca").ok());
  EXPECT_EQ(call(a.get(), {4}), (std::vector<float>{4}));
}

TEST_F(VariableStateTest, NoVariableOfThePrefixAndAFloatReadAsAnIntegerAreRefused) {
  InferRequestPtr a = request();
  call(a.get(), {1, 2});
  Status refused = control_->truncate(a.get(), "grown", 1, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.failure().message.find("no variable named 'grown...'"), std::string::npos);
  Outcome<int64_t> read = control_->read_int(a.get(), "cache");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.failure().message.find("is not an integer"), std::string::npos) << read.failure().message;
  EXPECT_EQ(call(a.get(), {3}), (std::vector<float>{1, 2, 3}));
}

TEST_F(VariableStateTest, TheProbeWorksWithTheRuntimeLoaded) {
  const Status probed = probe_helper(*runtime_, *control_);
  EXPECT_TRUE(probed.ok()) << probed.failure().message;
}

TEST(HelperLibraryTest, AMissingHelperIsAClearErrorNamingThePath) {
  auto control = HelperLibrary::open("/nonexistent/libexecutorch_openvino_state.so");
  ASSERT_FALSE(control.ok());
  EXPECT_NE(control.failure().message.find("the state helper /nonexistent/libexecutorch_openvino_state.so could "
                                           "not be opened"),
            std::string::npos)
      << control.failure().message;
}

}  // namespace
}  // namespace executorch_openvino::openvino_api
