// Version parsing, the supported range, and which element-type numbering each release gets.
#include "openvino_api/element_type.h"
#include "openvino_api/runtime_version.h"

#include <gtest/gtest.h>

namespace executorch_openvino::openvino_api {
namespace {

TEST(RuntimeVersionTest, ParsesReleaseBuildNumbers) {
  auto v = parse_build_number("2026.4.1-22982-e213a147257-releases/2026/4");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, (RuntimeVersion{2026, 4, 1}));
  EXPECT_EQ(parse_build_number("2024.6.0-17404-4c0f47d2335-releases/2024/6"), (RuntimeVersion{2024, 6, 0}));
  EXPECT_EQ(parse_build_number("2025.1"), (RuntimeVersion{2025, 1, 0}));
}

TEST(RuntimeVersionTest, RefusesTextThatIsNotAVersion) {
  EXPECT_FALSE(parse_build_number("").has_value());
  EXPECT_FALSE(parse_build_number("custom_build").has_value());
  EXPECT_FALSE(parse_build_number("2026").has_value());
  EXPECT_FALSE(parse_build_number("99999999999.1.1").has_value());
}

TEST(RuntimeVersionTest, SupportedRangeCovers2024_2Through2026) {
  EXPECT_FALSE(is_supported({2024, 1, 0}));
  EXPECT_TRUE(is_supported({2024, 2, 0}));
  EXPECT_TRUE(is_supported({2025, 4, 1}));
  EXPECT_TRUE(is_supported({2026, 4, 1}));
  EXPECT_FALSE(is_supported({2027, 0, 0}));
  EXPECT_EQ(supported_range_text(), ">= 2024.2.0 and < 2027.0.0");
}

TEST(ElementCodesTest, ReleasesBefore2025_1UseTheOldNumbering) {
  auto codes = ElementCodes::for_version({2024, 6, 0});
  ASSERT_TRUE(codes.has_value());
  EXPECT_EQ(codes->code(ElementType::kBoolean), 2);
  EXPECT_EQ(codes->code(ElementType::kF32), 5);
  EXPECT_EQ(codes->code(ElementType::kI64), 11);
  EXPECT_EQ(codes->code(ElementType::kU8), 17);
  EXPECT_EQ(codes->code(ElementType::kU64), 20);
}

TEST(ElementCodesTest, Releases2025_1AndLaterUseTheNewNumbering) {
  for (RuntimeVersion v : {RuntimeVersion{2025, 1, 0}, RuntimeVersion{2026, 4, 1}}) {
    auto codes = ElementCodes::for_version(v);
    ASSERT_TRUE(codes.has_value());
    EXPECT_EQ(codes->code(ElementType::kBoolean), 1);
    EXPECT_EQ(codes->code(ElementType::kF32), 4);
    EXPECT_EQ(codes->code(ElementType::kI64), 10);
    EXPECT_EQ(codes->code(ElementType::kU8), 16);
  }
}

TEST(ElementCodesTest, ReleasesBefore2024_2HaveNoNumbering) {
  EXPECT_FALSE(ElementCodes::for_version({2024, 1, 0}).has_value());
}

TEST(ElementCodesTest, CodesMapBackToTheirTypes) {
  auto codes = ElementCodes::for_version({2026, 4, 1});
  for (int i = 0; i < kElementTypeCount; ++i) {
    const auto type = static_cast<ElementType>(i);
    EXPECT_EQ(codes->type(codes->code(type)), type) << element_type_name(type);
  }
  EXPECT_FALSE(codes->type(static_cast<ElementTypeCode>(0)).has_value());   // dynamic
  EXPECT_FALSE(codes->type(static_cast<ElementTypeCode>(23)).has_value());  // string
}

}  // namespace
}  // namespace executorch_openvino::openvino_api
