// The platform shim on its own: opening, symbols, environment reads.
#include "loader/dynamic_library.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace executorch_openvino::loader {
namespace {

TEST(DynamicLibraryTest, OpensASystemLibraryByBareNameAndFindsASymbol) {
  auto library = DynamicLibrary::open("libm.so.6");
  ASSERT_TRUE(library.ok()) << library.failure().message;
  EXPECT_NE(library->symbol("cos"), nullptr);
  EXPECT_EQ(library->symbol("no_such_symbol_anywhere"), nullptr);
}

TEST(DynamicLibraryTest, MovedFromHandleResolvesNothing) {
  auto library = DynamicLibrary::open("libm.so.6");
  ASSERT_TRUE(library.ok());
  DynamicLibrary moved = std::move(library).value();
  EXPECT_NE(moved.symbol("cos"), nullptr);
}

TEST(DynamicLibraryTest, FailureCarriesTheSystemReason) {
  auto library = DynamicLibrary::open("/nonexistent/libnothing.so");
  ASSERT_FALSE(library.ok());
  EXPECT_NE(library.failure().message.find("/nonexistent/libnothing.so"), std::string::npos)
      << library.failure().message;
}

TEST(DynamicLibraryTest, EnvironmentIsReadAtCallTimeAndEmptyMeansUnset) {
  ::unsetenv("EOV_TEST_VARIABLE");
  EXPECT_FALSE(read_environment_path("EOV_TEST_VARIABLE").has_value());
  ::setenv("EOV_TEST_VARIABLE", "", 1);
  EXPECT_FALSE(read_environment_path("EOV_TEST_VARIABLE").has_value());
  ::setenv("EOV_TEST_VARIABLE", "/opt/ov/libs", 1);
  EXPECT_EQ(read_environment_path("EOV_TEST_VARIABLE"), std::filesystem::path("/opt/ov/libs"));
  ::unsetenv("EOV_TEST_VARIABLE");
}

}  // namespace
}  // namespace executorch_openvino::loader
