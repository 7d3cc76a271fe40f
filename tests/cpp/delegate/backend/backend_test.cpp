// The backend through ExecuTorch's BackendInterface (init / execute / destroy), with the real
// ExecuTorch runtime library and the real OpenVINO runtime, on IR models built by
// tests/fixtures/make_ir_cases.py with references computed independently in NumPy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <memory>
#include <string>
#include <vector>

#include <executorch_openvino/backend.h>

#include "blob/crc32.h"
#include "blob/delegate_blob.h"
#include "case_helpers.h"
#include "delegate_harness.h"
#include "ir_case.h"
#include "scratch_path.h"

namespace executorch_openvino::testing {
namespace {

using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Result;

const std::vector<std::string> kCases = {"add_broadcast", "matmul_bias_relu", "conv2d", "int64_input",
                                          "rank0_output",  "rank0_input",      "multi_io", "constant_in_place"};

class BackendCaseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BackendCaseTest, OutputsMatchTheNumpyReference) {
  const IrCase c = load_ir_case(GetParam());
  DelegateHarness harness;
  ASSERT_EQ(harness.init(c.blob, c.specs), Error::Ok) << last_error();
  expect_runs_correctly(harness, c);
}

// Every element changed (floats to 0.25 - x / 2, integers to 7 - x): inputs of the same dtypes and
// shapes whose outputs differ from the case's, so a call still reading old buffers shows.
template <typename T>
void change_each(std::vector<uint8_t>& bytes, T (*change)(T)) {
  for (size_t at = 0; at + sizeof(T) <= bytes.size(); at += sizeof(T)) {
    T value;
    std::memcpy(&value, bytes.data() + at, sizeof(T));
    value = change(value);
    std::memcpy(bytes.data() + at, &value, sizeof(T));
  }
}

IrCase with_other_input_values(const IrCase& c) {
  IrCase other = c;
  for (TensorFile& input : other.inputs) {
    switch (input.type) {
      case ScalarType::Float: change_each<float>(input.bytes, [](float x) { return 0.25f - x / 2; }); break;
      case ScalarType::Int: change_each<int32_t>(input.bytes, [](int32_t x) { return 7 - x; }); break;
      case ScalarType::Long: change_each<int64_t>(input.bytes, [](int64_t x) { return int64_t{7} - x; }); break;
      default: ADD_FAILURE() << c.name << ": no way to change an input of this dtype";
    }
  }
  // The reference: the same program on a handle of its own, which never saw the case's buffers.
  DelegateHarness fresh;
  EXPECT_EQ(fresh.init(other.blob, other.specs), Error::Ok) << last_error();
  auto inputs = make_inputs(other);
  auto outputs = make_outputs(other);
  EXPECT_EQ(fresh.execute(args_of(inputs, outputs)), Error::Ok) << last_error();
  for (size_t i = 0; i < outputs.size(); ++i) {
    other.expected_outputs[i].bytes = outputs[i]->bytes();
    EXPECT_NE(other.expected_outputs[i].bytes, c.expected_outputs[i].bytes)
        << c.name << " output " << i << " does not depend on the changed inputs, so it cannot show a stale read";
  }
  return other;
}

TEST_P(BackendCaseTest, RepeatedCallsReuseTheBuffersAndNewBuffersAreReadAnew) {
  const IrCase c = load_ir_case(GetParam());
  const IrCase other = with_other_input_values(c);
  DelegateHarness harness;
  ASSERT_EQ(harness.init(c.blob, c.specs), Error::Ok) << last_error();
  auto inputs = make_inputs(c);
  auto outputs = make_outputs(c);
  for (int call = 0; call < 3; ++call) {  // same buffers: bound once, reused
    for (auto& o : outputs) std::memset(o->data(), 0x5A, o->nbytes());
    ASSERT_EQ(harness.execute(args_of(inputs, outputs)), Error::Ok) << last_error();
    expect_outputs_match(c, outputs);
  }
  auto other_inputs = make_inputs(other);  // other buffers holding other values: must be rebound
  auto other_outputs = make_outputs(other);
  ASSERT_EQ(harness.execute(args_of(other_inputs, other_outputs)), Error::Ok) << last_error();
  expect_outputs_match(other, other_outputs);
  for (auto& o : outputs) std::memset(o->data(), 0x5A, o->nbytes());  // and back to the first ones
  ASSERT_EQ(harness.execute(args_of(inputs, outputs)), Error::Ok) << last_error();
  expect_outputs_match(c, outputs);
}

INSTANTIATE_TEST_SUITE_P(IrCases, BackendCaseTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

class BackendTest : public ::testing::Test {
 protected:
  // matmul_bias_relu: input x f32 [4,16], output f32 [4,8].
  void SetUp() override {
    c_ = load_ir_case("matmul_bias_relu");
    ASSERT_EQ(harness_.init(c_.blob, c_.specs), Error::Ok) << last_error();
    inputs_ = make_inputs(c_);
    outputs_ = make_outputs(c_);
  }
  // After any refused call the same handle still runs a good call correctly.
  void expect_still_works() {
    ASSERT_EQ(harness_.execute(args_of(inputs_, outputs_)), Error::Ok) << last_error();
    expect_outputs_match(c_, outputs_);
  }

  IrCase c_;
  DelegateHarness harness_;
  std::vector<std::unique_ptr<HostTensor>> inputs_, outputs_;
};

TEST_F(BackendTest, IsRegisteredUnderItsOwnIdAndAvailable) {
  auto* backend = registered_backend();
  ASSERT_NE(backend, nullptr);
  EXPECT_TRUE(backend->is_available());
  EXPECT_STREQ(executorch_openvino_backend_id(), EXECUTORCH_OPENVINO_BACKEND_ID);
  EXPECT_STRNE(EXECUTORCH_OPENVINO_BACKEND_ID, "OpenvinoBackend");
  EXPECT_EQ(executorch_openvino_registration_status(), 0);
}

TEST_F(BackendTest, WrongArgumentCountIsInvalidArgument) {
  EXPECT_EQ(harness_.execute(std::vector<HostTensor*>{inputs_[0].get()}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("expected 1 inputs and 1 outputs (2 arguments), got 1"), std::string::npos)
      << last_error();
  expect_still_works();
}

TEST_F(BackendTest, WrongDtypeIsInvalidArgumentNamingTheInput) {
  HostTensor wrong(ScalarType::Int, {4, 16});
  EXPECT_EQ(harness_.execute({&wrong, outputs_[0].get()}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("input 0 'x': dtype Int, but the model expects f32"), std::string::npos) << last_error();
  expect_still_works();
}

TEST_F(BackendTest, WrongInputShapeIsInvalidArgumentNamingTheShapes) {
  HostTensor wrong(ScalarType::Float, {4, 15});
  EXPECT_EQ(harness_.execute({&wrong, outputs_[0].get()}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("shape [4,15], but the model expects [4,16]"), std::string::npos) << last_error();
  HostTensor wrong_rank(ScalarType::Float, {64});
  EXPECT_EQ(harness_.execute({&wrong_rank, outputs_[0].get()}), Error::InvalidArgument);
  expect_still_works();
}

TEST_F(BackendTest, WrongOutputShapeOrDtypeIsInvalidArgument) {
  HostTensor wrong_shape(ScalarType::Float, {4, 9});
  EXPECT_EQ(harness_.execute({inputs_[0].get(), &wrong_shape}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("output 0"), std::string::npos) << last_error();
  HostTensor wrong_type(ScalarType::Double, {4, 8});
  EXPECT_EQ(harness_.execute({inputs_[0].get(), &wrong_type}), Error::InvalidArgument);
  expect_still_works();
}

TEST_F(BackendTest, NonTensorArgumentIsInvalidArgument) {
  EValue number(static_cast<int64_t>(3));
  EXPECT_EQ(harness_.execute_values(std::vector<EValue*>{&number, outputs_[0]->value()}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("input 0 'x': got an int, but the model expects a tensor f32 [4,16]"), std::string::npos)
      << last_error();
  EXPECT_EQ(harness_.execute_values(std::vector<EValue*>{nullptr, outputs_[0]->value()}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("input 0: expected a tensor"), std::string::npos) << last_error();
  expect_still_works();
}

// The steady-state fast path skips checks for a tensor identical to the last one bound; a tensor
// over the same memory with another dtype or layout is not identical and must still be refused.
TEST_F(BackendTest, SameMemoryWithAnotherDtypeOrLayoutIsStillChecked) {
  expect_still_works();  // binds input 0's memory
  std::vector<int32_t> sizes = {4, 16};
  std::vector<uint8_t> dim_order = {0, 1};
  std::vector<int32_t> strides = {16, 1};
  executorch::aten::TensorImpl as_int(ScalarType::Int, 2, sizes.data(), inputs_[0]->data(), dim_order.data(),
                                      strides.data());
  EValue int_value{executorch::aten::Tensor(&as_int)};
  EXPECT_EQ(harness_.execute_values({&int_value, outputs_[0]->value()}), Error::InvalidArgument);

  std::vector<int32_t> transposed_sizes = {4, 16};  // same shape, column-major
  std::vector<uint8_t> transposed_order = {1, 0};
  std::vector<int32_t> transposed_strides = {1, 4};
  executorch::aten::TensorImpl transposed(ScalarType::Float, 2, transposed_sizes.data(), inputs_[0]->data(),
                                          transposed_order.data(), transposed_strides.data());
  EValue transposed_value{executorch::aten::Tensor(&transposed)};
  EXPECT_EQ(harness_.execute_values({&transposed_value, outputs_[0]->value()}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("dim order"), std::string::npos) << last_error();
  expect_still_works();
}

TEST_F(BackendTest, ATensorMadeWithoutADimOrderIsTakenAsContiguous) {
  std::vector<int32_t> sizes = {4, 16};
  executorch::aten::TensorImpl no_order(ScalarType::Float, 2, sizes.data(), inputs_[0]->data());
  EValue value{executorch::aten::Tensor(&no_order)};
  ASSERT_EQ(harness_.execute_values({&value, outputs_[0]->value()}), Error::Ok) << last_error();
  expect_outputs_match(c_, outputs_);
  ASSERT_EQ(harness_.execute_values({&value, outputs_[0]->value()}), Error::Ok) << last_error();  // cached path
  expect_outputs_match(c_, outputs_);
}

TEST_F(BackendTest, NullHandleIsInvalidHandle) {
  BackendTest::TearDown();
  executorch::runtime::BackendExecutionContext context;
  EXPECT_EQ(registered_backend()->execute(context, nullptr, {}), Error::DelegateInvalidHandle);
}

TEST(BackendLayoutTest, ChannelsLastInputIsRefusedNotSilentlyMisread) {
  const IrCase c = load_ir_case("conv2d");
  DelegateHarness harness;
  ASSERT_EQ(harness.init(c.blob, c.specs), Error::Ok) << last_error();
  auto inputs = make_inputs(c);
  auto outputs = make_outputs(c);
  inputs[0]->make_channels_last();
  EXPECT_EQ(harness.execute(args_of(inputs, outputs)), Error::InvalidArgument);
  EXPECT_NE(last_error().find("dim order"), std::string::npos) << last_error();
}

TEST(BackendBlobTest, EachCorruptedHeaderFieldIsDelegateInvalidCompatibility) {
  const IrCase c = load_ir_case("matmul_bias_relu");
  // Field offsets of the container header, and the first section entry's fields.
  const size_t fields[] = {blob::kMagicOffset,       blob::kMajorOffset,       blob::kMinorOffset,
                           blob::kHeaderSizeOffset,  blob::kSectionCountOffset, blob::kTotalSizeOffset,
                           blob::kFlagsOffset,       blob::kHeaderCrcOffset,
                           blob::kFixedHeaderSize + blob::kEntryKindOffset,
                           blob::kFixedHeaderSize + blob::kEntryCrcOffset,
                           blob::kFixedHeaderSize + blob::kEntryOffsetOffset,
                           blob::kFixedHeaderSize + blob::kEntryLengthOffset};
  for (size_t offset : fields) {
    std::vector<uint8_t> corrupt = c.blob;
    corrupt[offset] ^= 0x41;
    DelegateHarness harness;
    EXPECT_EQ(harness.init(corrupt, c.specs), Error::DelegateInvalidCompatibility) << "field at " << offset;
    EXPECT_NE(last_error().find("invalid delegate blob"), std::string::npos) << last_error();
    EXPECT_TRUE(harness.blob_freed());
  }
}

TEST(BackendBlobTest, TruncatedBlobsAreDelegateInvalidCompatibility) {
  const IrCase c = load_ir_case("matmul_bias_relu");
  for (size_t length : {size_t{0}, size_t{3}, size_t{31}, size_t{32}, size_t{100}, c.blob.size() - 1}) {
    DelegateHarness harness;
    std::vector<uint8_t> truncated(c.blob.begin(), c.blob.begin() + static_cast<std::ptrdiff_t>(length));
    EXPECT_EQ(harness.init(truncated, c.specs), Error::DelegateInvalidCompatibility) << "length " << length;
  }
}

TEST(BackendBlobTest, MalformedIrInAValidContainerIsDelegateInvalidCompatibility) {
  DelegateHarness harness;
  EXPECT_EQ(harness.init(blob::build({"<net name='broken'><layers>", {}}), {}), Error::DelegateInvalidCompatibility);
  EXPECT_NE(last_error().find("reading the IR model failed"), std::string::npos) << last_error();
}

// A blob that says which call inputs its IR reads (the partitioner leaves repeats and sizes read
// from shapes out of the IR): the call keeps every argument, the IR sees only its own.
std::vector<uint8_t> with_input_arguments(const IrCase& c, blob::InputArguments arguments) {
  blob::ParseResult parsed = blob::parse(c.blob.data(), c.blob.size());
  EXPECT_TRUE(parsed.blob.has_value()) << parsed.error;
  const blob::Span xml = parsed.blob->ir_xml, weights = parsed.blob->ir_weights;
  return blob::build({std::string(reinterpret_cast<const char*>(xml.data), xml.size),
                     std::vector<uint8_t>(weights.data, weights.data + weights.size), {}, arguments});
}

TEST(BackendInputArgumentsTest, TheIrReadsItsCallInputsAndPassesOverTheRest) {
  const IrCase c = load_ir_case("matmul_bias_relu");  // x f32 [4,16] -> f32 [4,8]
  DelegateHarness harness;
  ASSERT_EQ(harness.init(with_input_arguments(c, {3, {1}}), c.specs), Error::Ok) << last_error();
  auto inputs = make_inputs(c);
  auto outputs = make_outputs(c);
  HostTensor unread_int(ScalarType::Int, {2});  // not the IR's: neither checked nor bound
  EValue unread_number(static_cast<int64_t>(7));
  for (int call = 0; call < 2; ++call) {  // bound, then the steady state
    ASSERT_EQ(harness.execute_values({unread_int.value(), inputs[0]->value(), &unread_number, outputs[0]->value()}),
              Error::Ok)
        << last_error();
    expect_outputs_match(c, outputs);
  }
  EXPECT_EQ(harness.execute(args_of(inputs, outputs)), Error::InvalidArgument);
  EXPECT_NE(last_error().find("expected 3 inputs and 1 outputs (4 arguments), got 2"), std::string::npos)
      << last_error();
  HostTensor wrong(ScalarType::Int, {4, 16});  // messages name the call's input, not the IR's
  EXPECT_EQ(harness.execute({&unread_int, &wrong, &unread_int, outputs[0].get()}), Error::InvalidArgument);
  EXPECT_NE(last_error().find("input 1 'x': dtype Int"), std::string::npos) << last_error();
}

TEST(BackendInputArgumentsTest, AMapThatDoesNotFitTheIrIsAnInvalidBlob) {
  const IrCase c = load_ir_case("matmul_bias_relu");
  DelegateHarness harness;
  EXPECT_EQ(harness.init(with_input_arguments(c, {3, {0, 2}}), c.specs), Error::DelegateInvalidCompatibility);
  EXPECT_NE(last_error().find("maps 2 call inputs to an IR of 1 inputs"), std::string::npos) << last_error();
}

// ExecuTorch's named data as a .ptd file's map serves it: bytes under keys, freed when the delegate
// is done with them (ExecuTorch's FlatTensorDataMap behind a real .ptd: tests/python/container/test_named_weights.py).
class KeyedData final : public executorch::runtime::NamedDataMap {
 public:
  KeyedData(std::string key, std::vector<uint8_t> bytes) : key_(std::move(key)), bytes_(std::move(bytes)) {}
  Result<const executorch::runtime::TensorLayout> get_tensor_layout(std::string_view) const override {
    return Error::NotImplemented;
  }
  Result<FreeableBuffer> get_data(std::string_view key) const override {
    if (key != key_) return Error::NotFound;
    ++handed_out_;
    return FreeableBuffer(bytes_.data(), bytes_.size(), &KeyedData::freed, const_cast<KeyedData*>(this));
  }
  Error load_data_into(std::string_view, void*, size_t) const override { return Error::NotImplemented; }
  Result<uint32_t> get_num_keys() const override { return 1; }
  Result<const char*> get_key(uint32_t) const override { return key_.c_str(); }
  int outstanding() const { return handed_out_ - freed_; }
  int fetches() const { return handed_out_; }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  static void freed(void* self, void*, size_t) { ++static_cast<KeyedData*>(self)->freed_; }
  std::string key_;
  std::vector<uint8_t> bytes_;
  mutable int handed_out_ = 0;
  int freed_ = 0;
};

struct NamedWeightsCase {
  IrCase ir;
  std::vector<uint8_t> blob;     // the IR without its weights, naming them instead
  std::vector<uint8_t> weights;  // what the named data must hold
};

NamedWeightsCase with_named_weights(const std::string& name) {
  NamedWeightsCase out{load_ir_case(name), {}, {}};
  blob::ParseResult parsed = blob::parse(out.ir.blob.data(), out.ir.blob.size());
  EXPECT_TRUE(parsed.blob.has_value()) << parsed.error;
  const blob::Span xml = parsed.blob->ir_xml, weights = parsed.blob->ir_weights;
  out.weights.assign(weights.data, weights.data + weights.size);
  out.blob = blob::build({std::string(reinterpret_cast<const char*>(xml.data), xml.size), {}, {}, std::nullopt,
                         blob::NamedWeights{"w.1", out.weights.size(), blob::crc32(out.weights.data(), out.weights.size())}});
  return out;
}

TEST(BackendNamedWeightsTest, WeightsFromNamedDataComputeAsFromTheBlobAndAreReleasedAtInit) {
  const NamedWeightsCase c = with_named_weights("constant_in_place");  // weights OpenVINO uses in place
  ASSERT_FALSE(c.weights.empty());
  KeyedData data("w.1", c.weights);
  DelegateHarness harness;
  harness.use_named_data(&data);
  ASSERT_EQ(harness.init(c.blob, c.ir.specs), Error::Ok) << last_error();
  EXPECT_EQ(data.outstanding(), 0);  // the compiled model holds its own copy
  std::fill(data.bytes().begin(), data.bytes().end(), uint8_t{0xAB});  // so nothing may read these any more
  expect_runs_correctly(harness, c.ir);
}

TEST(BackendNamedWeightsTest, MissingWrongOrCorruptNamedDataIsAClearErrorNamingTheKey) {
  const NamedWeightsCase c = with_named_weights("constant_in_place");
  DelegateHarness harness;
  EXPECT_EQ(harness.init(c.blob, c.ir.specs), Error::InvalidArgument);
  EXPECT_NE(last_error().find("in named data under 'w.1', but it was loaded without named data"), std::string::npos)
      << last_error();
  EXPECT_NE(last_error().find("data_path"), std::string::npos) << last_error();

  KeyedData other("w.2", c.weights);
  harness.use_named_data(&other);
  EXPECT_EQ(harness.init(c.blob, c.ir.specs), Error::InvalidArgument);
  EXPECT_NE(last_error().find("which its named data does not hold"), std::string::npos) << last_error();

  std::vector<uint8_t> shorter(c.weights.begin(), c.weights.end() - 1);
  KeyedData truncated("w.1", shorter);
  harness.use_named_data(&truncated);
  EXPECT_EQ(harness.init(c.blob, c.ir.specs), Error::DelegateInvalidCompatibility);
  EXPECT_NE(last_error().find("is " + std::to_string(shorter.size()) + " bytes"), std::string::npos) << last_error();

  std::vector<uint8_t> flipped = c.weights;
  flipped[flipped.size() / 2] ^= 1;
  KeyedData corrupt("w.1", flipped);
  harness.use_named_data(&corrupt);
  EXPECT_EQ(harness.init(c.blob, c.ir.specs), Error::DelegateInvalidCompatibility);
  EXPECT_NE(last_error().find("fails its checksum"), std::string::npos) << last_error();
  EXPECT_EQ(corrupt.outstanding() + truncated.outstanding(), 0);  // refused data is released too
}

// A compiled model at hand needs none of the weights: loads served by a live compiled model or by the
// model cache never fetch them from the named data (hundreds of megabytes for a language model).
TEST(BackendNamedWeightsTest, LoadsServedByALiveCompiledModelFetchNoWeights) {
  const NamedWeightsCase c = with_named_weights("constant_in_place");
  KeyedData first_data("w.1", c.weights), second_data("w.1", c.weights);
  DelegateHarness first, second;
  first.use_named_data(&first_data);
  ASSERT_EQ(first.init(c.blob, c.ir.specs), Error::Ok) << last_error();
  EXPECT_EQ(first_data.fetches(), 1);
  second.use_named_data(&second_data);
  ASSERT_EQ(second.init(c.blob, c.ir.specs), Error::Ok) << last_error();
  EXPECT_EQ(second_data.fetches(), 0);
  expect_runs_correctly(second, c.ir);
}

TEST(BackendNamedWeightsTest, LoadsServedByTheModelCacheFetchNoWeights) {
  const ScratchPath scratch("eov_named_cache");
  const NamedWeightsCase c = with_named_weights("constant_in_place");
  const std::vector<executorch::runtime::BackendOption> cached{text_option("cache_dir", scratch.path().c_str())};
  KeyedData cold_data("w.1", c.weights), warm_data("w.1", c.weights);
  {
    DelegateHarness cold;
    cold.use_named_data(&cold_data);
    ASSERT_EQ(cold.init(c.blob, c.ir.specs, cached), Error::Ok) << last_error();
    EXPECT_EQ(cold_data.fetches(), 1);
  }
  DelegateHarness warm;
  warm.use_named_data(&warm_data);
  ASSERT_EQ(warm.init(c.blob, c.ir.specs, cached), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["source"], "cache");
  EXPECT_EQ(warm_data.fetches(), 0);
  expect_runs_correctly(warm, c.ir);
}

// Whether a compiled model of the program is at hand or not, a load without its data file fails.
TEST(BackendNamedWeightsTest, MissingNamedDataIsRefusedEvenWhenACompiledModelIsAtHand) {
  const NamedWeightsCase c = with_named_weights("constant_in_place");
  KeyedData data("w.1", c.weights), other("w.2", c.weights);
  DelegateHarness live;
  live.use_named_data(&data);
  ASSERT_EQ(live.init(c.blob, c.ir.specs), Error::Ok) << last_error();

  DelegateHarness without;
  EXPECT_EQ(without.init(c.blob, c.ir.specs), Error::InvalidArgument);
  EXPECT_NE(last_error().find("it was loaded without named data"), std::string::npos) << last_error();
  DelegateHarness foreign;
  foreign.use_named_data(&other);
  EXPECT_EQ(foreign.init(c.blob, c.ir.specs), Error::InvalidArgument);
  EXPECT_NE(last_error().find("which its named data does not hold"), std::string::npos) << last_error();
  EXPECT_EQ(other.fetches(), 0);
}

TEST(BackendSpecTest, UnknownCompileSpecKeyIsRefusedNamingIt) {
  const IrCase c = load_ir_case("add_broadcast");
  DelegateHarness harness;
  EXPECT_EQ(harness.init(c.blob, {{"not-a-property", "1"}}), Error::DelegateInvalidCompatibility);
  EXPECT_NE(last_error().find("not-a-property"), std::string::npos) << last_error();
}

TEST(BackendSpecTest, AbsentDeviceFailsListingTheAvailableDevices) {
  const IrCase c = load_ir_case("add_broadcast");
  DelegateHarness harness;
  EXPECT_EQ(harness.init(c.blob, {{"device", "NPU"}}), Error::NotSupported);
  EXPECT_NE(last_error().find("device 'NPU' is not available; available devices: CPU"), std::string::npos)
      << last_error();
}

TEST(BackendSpecTest, InvalidPropertyValueFailsWithOpenVinosMessage) {
  const IrCase c = load_ir_case("add_broadcast");
  DelegateHarness harness;
  EXPECT_EQ(harness.init(c.blob, {{"INFERENCE_NUM_THREADS", "many"}}), Error::Internal);
  EXPECT_NE(last_error().find("compiling the model for device CPU failed"), std::string::npos) << last_error();
  EXPECT_NE(last_error().find("INFERENCE_NUM_THREADS"), std::string::npos) << last_error();
}

// OpenVINO's CPU plugin uses some constants in place from the weights it was given, so the
// compiled model owns a copy of them and ExecuTorch's blob (poisoned when freed) can go at init.
TEST(BackendBlobLifetimeTest, BlobWithWeightsIsFreedAtInitBecauseTheCompiledModelOwnsItsWeights) {
  const IrCase c = load_ir_case("constant_in_place");
  DelegateHarness harness;
  ASSERT_EQ(harness.init(c.blob, c.specs), Error::Ok) << last_error();
  EXPECT_TRUE(harness.blob_freed());
  expect_runs_correctly(harness, c);
}

TEST(BackendBlobLifetimeTest, BlobWithoutWeightsIsFreedRightAfterInit) {
  const IrCase c = load_ir_case("add_broadcast");
  DelegateHarness harness;
  ASSERT_EQ(harness.init(c.blob, c.specs), Error::Ok) << last_error();
  EXPECT_TRUE(harness.blob_freed());  // and poisoned: the run below must not read it
  expect_runs_correctly(harness, c);
}

// Sets an environment variable for one test and unsets it at the end, on failure too.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnvironment() { ::unsetenv(name_); }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
};

TEST(BackendCacheTest, CacheFolderFromTheEnvironmentReceivesTheCompiledModel) {
  namespace fs = std::filesystem;
  const ScratchPath scratch("eov_cache");
  const fs::path& cache = scratch.path();
  const ScopedEnvironment cache_dir("EXECUTORCH_OPENVINO_CACHE_DIR", cache.string());
  const IrCase c = load_ir_case("conv2d");
  {
    DelegateHarness first;
    ASSERT_EQ(first.init(c.blob, c.specs), Error::Ok) << last_error();
    EXPECT_EQ(only_model()["source"], "ir");
  }
  ASSERT_TRUE(fs::is_directory(cache));
  EXPECT_FALSE(fs::is_empty(cache)) << "OpenVINO wrote nothing into the cache folder";
  DelegateHarness second;  // the first's compiled model is gone: only the cache folder can serve this
  ASSERT_EQ(second.init(c.blob, c.specs), Error::Ok) << last_error();
  EXPECT_EQ(only_model()["source"], "cache") << "the second load compiled the IR again";
  expect_runs_correctly(second, c);
}

TEST(BackendCacheTest, AnUnwritableCacheFolderIsSkippedNotAFailure) {
  namespace fs = std::filesystem;
  const ScratchPath scratch("eov_not_a_folder");
  const fs::path& file = scratch.path();
  std::ofstream(file) << "x";
  const ScopedEnvironment cache_dir("EXECUTORCH_OPENVINO_CACHE_DIR", (file / "cache").string());  // below a regular file
  const IrCase c = load_ir_case("add_broadcast");
  DelegateHarness harness;
  ASSERT_EQ(harness.init(c.blob, c.specs), Error::Ok) << last_error();
  expect_runs_correctly(harness, c);
}

// constant_in_place (x + k, k the weights) with the same XML and other weights k' = 1 - k, and
// x + k' as its expected output: a model that must be compiled and cached apart from the case's.
IrCase constant_in_place_with_other_weights(const IrCase& c) {
  blob::ParseResult parsed = blob::parse(c.blob.data(), c.blob.size());
  EXPECT_TRUE(parsed.blob.has_value()) << parsed.error;
  const blob::Span xml = parsed.blob->ir_xml, weights = parsed.blob->ir_weights;
  const size_t n = c.inputs.at(0).bytes.size() / sizeof(float);
  EXPECT_EQ(weights.size, n * sizeof(float)) << "the weights are no longer k alone";
  std::vector<float> x(n), k(n), out(n);
  std::memcpy(x.data(), c.inputs[0].bytes.data(), n * sizeof(float));
  std::memcpy(k.data(), weights.data, std::min(weights.size, n * sizeof(float)));
  for (size_t i = 0; i < n; ++i) {
    k[i] = 1.0f - k[i];
    out[i] = x[i] + k[i];
  }
  IrCase other = c;
  other.name = c.name + " with other weights";
  std::vector<uint8_t> other_weights(n * sizeof(float));
  std::memcpy(other_weights.data(), k.data(), other_weights.size());
  other.blob = blob::build({std::string(reinterpret_cast<const char*>(xml.data), xml.size), other_weights});
  other.expected_outputs[0].bytes.assign(reinterpret_cast<const uint8_t*>(out.data()),
                                         reinterpret_cast<const uint8_t*>(out.data() + n));
  EXPECT_NE(other.expected_outputs[0].bytes, c.expected_outputs[0].bytes);
  return other;
}

// The cache key must see the weights, not only the XML: a shared model would compute x + k for both.
TEST(BackendSharingTest, SameXmlWithOtherWeightsIsACompiledModelOfItsOwn) {
  const IrCase c = load_ir_case("constant_in_place");
  const IrCase other = constant_in_place_with_other_weights(c);
  DelegateHarness first, second;
  ASSERT_EQ(first.init(c.blob, c.specs), Error::Ok) << last_error();
  ASSERT_EQ(second.init(other.blob, other.specs), Error::Ok) << last_error();
  EXPECT_EQ(compiled_models().size(), 2u) << executorch_openvino_describe_compiled_models();
  expect_runs_correctly(second, other);
  expect_runs_correctly(first, c);
}

// The same for the model cache's file: the second program compiles its own and is then served it.
TEST(BackendCacheTest, SameXmlWithOtherWeightsIsNotServedTheOtherProgramsCachedModel) {
  const ScratchPath scratch("eov_weights_cache");
  const std::vector<executorch::runtime::BackendOption> cached{text_option("cache_dir", scratch.path().c_str())};
  const IrCase c = load_ir_case("constant_in_place");
  const IrCase other = constant_in_place_with_other_weights(c);
  // Each load alone (the one before destroyed), so only the cache folder can serve it.
  auto load = [&](const IrCase& program) {
    DelegateHarness harness;
    EXPECT_EQ(harness.init(program.blob, program.specs, cached), Error::Ok) << last_error();
    const std::string source = only_model()["source"];
    expect_runs_correctly(harness, program);
    return source;
  };
  EXPECT_EQ(load(c), "ir");
  EXPECT_EQ(load(other), "ir") << "served the compiled model of the same XML with other weights";
  EXPECT_EQ(load(other), "cache");
  EXPECT_EQ(load(c), "cache");
}

TEST(BackendSharingTest, MethodsShareOneRuntimeAndRunIndependently) {
  const IrCase a = load_ir_case("add_broadcast");
  const IrCase b = load_ir_case("conv2d");
  DelegateHarness first, second;
  ASSERT_EQ(first.init(a.blob, a.specs), Error::Ok) << last_error();
  ASSERT_EQ(second.init(b.blob, b.specs), Error::Ok) << last_error();
  auto a_in = make_inputs(a), a_out = make_outputs(a), b_in = make_inputs(b), b_out = make_outputs(b);
  ASSERT_EQ(second.execute(args_of(b_in, b_out)), Error::Ok) << last_error();
  ASSERT_EQ(first.execute(args_of(a_in, a_out)), Error::Ok) << last_error();
  expect_outputs_match(a, a_out);
  expect_outputs_match(b, b_out);
}

}  // namespace
}  // namespace executorch_openvino::testing
