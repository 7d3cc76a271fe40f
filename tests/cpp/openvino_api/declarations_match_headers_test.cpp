// Our declarations of the OpenVINO C API (src/openvino_api/ov_c_api.h) against OpenVINO's own
// headers from the installed openvino package. The library never sees these headers; this test
// compiles both side by side, so a drift in a struct layout, an enum value or a function
// signature fails the build of the test.
#include <openvino/c/openvino.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <type_traits>

#include "openvino_api/element_type.h"
#include "openvino_api/ov_c_api.h"
#include "openvino_api/symbol_table.h"

namespace ours = executorch_openvino::openvino_api;

namespace {

// Maps each of our types to OpenVINO's, through pointers, const and function types, so a whole
// function type of ours can be compared with decltype(&the_real_function).
template <typename T>
struct Real {
  using type = T;
};
template <typename T>
using RealT = typename Real<T>::type;
template <typename T>
struct Real<T*> {
  using type = RealT<T>*;
};
template <typename T>
struct Real<const T> {
  using type = const RealT<T>;
};
template <typename R, typename... A>
struct Real<R (*)(A...)> {
  using type = RealT<R> (*)(RealT<A>...);
};
template <typename R, typename... A>
struct Real<R (*)(A..., ...)> {
  using type = RealT<R> (*)(RealT<A>..., ...);
};
#define MAP(our_type, real_type) \
  template <>                    \
  struct Real<our_type> {        \
    using type = real_type;      \
  }
MAP(ours::ov_core, ov_core_t);
MAP(ours::ov_model, ov_model_t);
MAP(ours::ov_compiled_model, ov_compiled_model_t);
MAP(ours::ov_infer_request, ov_infer_request_t);
MAP(ours::ov_tensor, ov_tensor_t);
MAP(ours::ov_output_const_port, ov_output_const_port_t);
MAP(ours::Shape, ov_shape_t);
MAP(ours::PartialShape, ov_partial_shape_t);
MAP(ours::Version, ov_version_t);
MAP(ours::AvailableDevices, ov_available_devices_t);
MAP(ours::ProfilingInfoList, ov_profiling_info_list_t);
MAP(ours::StatusCode, ov_status_e);
MAP(ours::ElementTypeCode, ov_element_type_e);
#undef MAP

// Parameters declared `const size_t` in OpenVINO's headers are plain size_t in the function type,
// so top-level const never gets in the way of this comparison.
#define CHECK_SIGNATURE(name)                                                                    \
  static_assert(std::is_same_v<RealT<ours::name##_fn>, decltype(&::name)>, "signature of " #name \
                                                                           " differs from OpenVINO's header");
EXECUTORCH_OPENVINO_REQUIRED_SYMBOLS(CHECK_SIGNATURE)
EXECUTORCH_OPENVINO_OPTIONAL_SYMBOLS(CHECK_SIGNATURE)
#undef CHECK_SIGNATURE

#define CHECK_LAYOUT(ours_type, real_type, our_field, real_field)                                    \
  static_assert(offsetof(ours_type, our_field) == offsetof(real_type, real_field), #real_type "." #real_field); \
  static_assert(sizeof(ours_type::our_field) == sizeof(real_type::real_field), #real_type "." #real_field)
static_assert(sizeof(ours::Shape) == sizeof(ov_shape_t));
CHECK_LAYOUT(ours::Shape, ov_shape_t, rank, rank);
CHECK_LAYOUT(ours::Shape, ov_shape_t, dims, dims);
static_assert(sizeof(ours::Dimension) == sizeof(ov_dimension_t));
CHECK_LAYOUT(ours::Dimension, ov_dimension_t, min, min);
CHECK_LAYOUT(ours::Dimension, ov_dimension_t, max, max);
static_assert(sizeof(ours::PartialShape) == sizeof(ov_partial_shape_t));
CHECK_LAYOUT(ours::PartialShape, ov_partial_shape_t, rank, rank);
CHECK_LAYOUT(ours::PartialShape, ov_partial_shape_t, dims, dims);
static_assert(sizeof(ours::Version) == sizeof(ov_version_t));
CHECK_LAYOUT(ours::Version, ov_version_t, build_number, buildNumber);
CHECK_LAYOUT(ours::Version, ov_version_t, description, description);
static_assert(sizeof(ours::AvailableDevices) == sizeof(ov_available_devices_t));
CHECK_LAYOUT(ours::AvailableDevices, ov_available_devices_t, devices, devices);
CHECK_LAYOUT(ours::AvailableDevices, ov_available_devices_t, size, size);
static_assert(sizeof(ours::ProfilingInfo) == sizeof(ov_profiling_info_t));
static_assert(sizeof(ours::ProfilingInfo::status) == sizeof(ov_profiling_info_t::status));
CHECK_LAYOUT(ours::ProfilingInfo, ov_profiling_info_t, real_time, real_time);
CHECK_LAYOUT(ours::ProfilingInfo, ov_profiling_info_t, cpu_time, cpu_time);
CHECK_LAYOUT(ours::ProfilingInfo, ov_profiling_info_t, node_name, node_name);
CHECK_LAYOUT(ours::ProfilingInfo, ov_profiling_info_t, exec_type, exec_type);
CHECK_LAYOUT(ours::ProfilingInfo, ov_profiling_info_t, node_type, node_type);
static_assert(sizeof(ours::ProfilingInfoList) == sizeof(ov_profiling_info_list_t));
CHECK_LAYOUT(ours::ProfilingInfoList, ov_profiling_info_list_t, infos, profiling_infos);
CHECK_LAYOUT(ours::ProfilingInfoList, ov_profiling_info_list_t, size, size);
#undef CHECK_LAYOUT

static_assert(sizeof(ours::StatusCode) == sizeof(ov_status_e));
static_assert(sizeof(ours::ElementTypeCode) == sizeof(ov_element_type_e));

TEST(DeclarationsMatchHeadersTest, StatusCodesHaveOpenVinosValues) {
  EXPECT_EQ(ours::kOk, static_cast<int>(OK));
  EXPECT_EQ(ours::kGeneralError, static_cast<int>(GENERAL_ERROR));
  EXPECT_EQ(ours::kNotImplemented, static_cast<int>(NOT_IMPLEMENTED));
  EXPECT_EQ(ours::kNetworkNotLoaded, static_cast<int>(NETWORK_NOT_LOADED));
  EXPECT_EQ(ours::kParameterMismatch, static_cast<int>(PARAMETER_MISMATCH));
  EXPECT_EQ(ours::kNotFound, static_cast<int>(NOT_FOUND));
  EXPECT_EQ(ours::kOutOfBounds, static_cast<int>(OUT_OF_BOUNDS));
  EXPECT_EQ(ours::kUnexpected, static_cast<int>(UNEXPECTED));
  EXPECT_EQ(ours::kRequestBusy, static_cast<int>(REQUEST_BUSY));
  EXPECT_EQ(ours::kResultNotReady, static_cast<int>(RESULT_NOT_READY));
  EXPECT_EQ(ours::kNotAllocated, static_cast<int>(NOT_ALLOCATED));
  EXPECT_EQ(ours::kInferNotStarted, static_cast<int>(INFER_NOT_STARTED));
  EXPECT_EQ(ours::kNetworkNotRead, static_cast<int>(NETWORK_NOT_READ));
  EXPECT_EQ(ours::kInferCancelled, static_cast<int>(INFER_CANCELLED));
  EXPECT_EQ(ours::kInvalidCParam, static_cast<int>(INVALID_C_PARAM));
  EXPECT_EQ(ours::kUnknownCError, static_cast<int>(UNKNOWN_C_ERROR));
  EXPECT_EQ(ours::kNotImplementCMethod, static_cast<int>(NOT_IMPLEMENT_C_METHOD));
  EXPECT_EQ(ours::kUnknownException, static_cast<int>(UNKNOW_EXCEPTION));
}

// The installed headers are those of the pinned release (2026.x), so the numbering our table picks
// for 2026 must equal the header's enum, element by element.
TEST(DeclarationsMatchHeadersTest, ElementCodesForThePinnedReleaseMatchTheHeader) {
  const char* installed = std::getenv("EXECUTORCH_OPENVINO_OV_VERSION");
  ASSERT_NE(installed, nullptr);
  auto version = ours::parse_build_number(installed);
  ASSERT_TRUE(version.has_value()) << installed;
  auto codes = ours::ElementCodes::for_version(*version);
  ASSERT_TRUE(codes.has_value());
  using T = ours::ElementType;
  EXPECT_EQ(codes->code(T::kBoolean), static_cast<int>(OV_BOOLEAN));
  EXPECT_EQ(codes->code(T::kBF16), static_cast<int>(BF16));
  EXPECT_EQ(codes->code(T::kF16), static_cast<int>(F16));
  EXPECT_EQ(codes->code(T::kF32), static_cast<int>(F32));
  EXPECT_EQ(codes->code(T::kF64), static_cast<int>(F64));
  EXPECT_EQ(codes->code(T::kI8), static_cast<int>(I8));
  EXPECT_EQ(codes->code(T::kI16), static_cast<int>(I16));
  EXPECT_EQ(codes->code(T::kI32), static_cast<int>(I32));
  EXPECT_EQ(codes->code(T::kI64), static_cast<int>(I64));
  EXPECT_EQ(codes->code(T::kU8), static_cast<int>(U8));
  EXPECT_EQ(codes->code(T::kU16), static_cast<int>(U16));
  EXPECT_EQ(codes->code(T::kU32), static_cast<int>(U32));
  EXPECT_EQ(codes->code(T::kU64), static_cast<int>(U64));
}

}  // namespace
