// The process-wide OpenVINO runtime: loading the real pip-installed library, its version checks,
// and the stand-in libraries for faults the real one cannot produce.
#include "openvino_api/runtime.h"

#include <gtest/gtest.h>

#include "test_environment.h"

#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "openvino_api/objects.h"

namespace executorch_openvino::openvino_api {
namespace {

namespace fs = std::filesystem;

using testing::env_path;

fs::path stand_in(const char* name) { return env_path("EXECUTORCH_OPENVINO_STAND_INS") / (std::string(name) + ".so"); }

TEST(RuntimeTest, LoadsTheRealRuntimeAndReportsTheInstalledVersion) {
  auto runtime = Runtime::load(env_path("EXECUTORCH_OPENVINO_OV_LIBS_DIR"));
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  // The pip package's version ("2026.4.1") is the head of the runtime's build number.
  const std::string pip_version = std::getenv("EXECUTORCH_OPENVINO_OV_VERSION");
  EXPECT_EQ(runtime.value()->version().to_string(), pip_version);
  EXPECT_EQ(runtime.value()->build_number().rfind(pip_version + "-", 0), 0u) << runtime.value()->build_number();
  EXPECT_TRUE(is_supported(runtime.value()->version()));
}

TEST(RuntimeTest, EveryElementTypeHasTheByteSizeTheRuntimeReports) {
  auto runtime = Runtime::load(env_path("EXECUTORCH_OPENVINO_OV_C_LIBRARY"));
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  unsigned char storage[64] = {};
  const int64_t dims[2] = {2, 3};
  for (int i = 0; i < kElementTypeCount; ++i) {
    const auto type = static_cast<ElementType>(i);
    auto tensor = wrap_host_memory(*runtime.value(), type, dims, 2, storage);
    ASSERT_TRUE(tensor.ok()) << element_type_name(type) << ": " << tensor.failure().message;
    size_t bytes = 0;
    ASSERT_EQ(runtime.value()->api().ov_tensor_get_byte_size(tensor->get(), &bytes), kOk);
    EXPECT_EQ(bytes, 6 * element_size(type)) << element_type_name(type);
  }
}

TEST(RuntimeTest, TheCoreIsCreatedOnceAndListsTheCpu) {
  auto runtime = Runtime::load(env_path("EXECUTORCH_OPENVINO_OV_LIBS_DIR"));
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  auto first = runtime.value()->core();
  auto second = runtime.value()->core();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first.value(), second.value());
  auto devices = runtime.value()->available_devices();
  ASSERT_TRUE(devices.ok()) << devices.failure().message;
  EXPECT_NE(std::set<std::string>(devices->begin(), devices->end()).count("CPU"), 0u);
}

TEST(RuntimeTest, ALibraryMissingARequiredSymbolIsRefusedNamingIt) {
  auto runtime = Runtime::load(stand_in("missing_symbol"));
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.failure().kind, FailureKind::kRuntimeUnavailable);
  EXPECT_NE(runtime.failure().message.find("ov_infer_request_infer"), std::string::npos) << runtime.failure().message;
  EXPECT_NE(runtime.failure().message.find("missing_symbol.so"), std::string::npos) << runtime.failure().message;
}

TEST(RuntimeTest, AnOldRuntimeIsRefusedNamingItsVersionAndTheSupportedRange) {
  auto runtime = Runtime::load(stand_in("old_version"));
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.failure().kind, FailureKind::kUnsupportedRuntime);
  EXPECT_NE(runtime.failure().message.find("2023.3.0-13775-stand-in"), std::string::npos) << runtime.failure().message;
  EXPECT_NE(runtime.failure().message.find(supported_range_text()), std::string::npos) << runtime.failure().message;
}

TEST(RuntimeTest, AFutureRuntimeIsRefusedUntilItsNumberingIsKnown) {
  auto runtime = Runtime::load(stand_in("future_version"));
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.failure().kind, FailureKind::kUnsupportedRuntime);
  EXPECT_NE(runtime.failure().message.find("2027.0.0"), std::string::npos) << runtime.failure().message;
}

TEST(RuntimeTest, ARuntimeWhoseElementSizesDisagreeWithTheNumberingIsRefused) {
  auto runtime = Runtime::load(stand_in("wrong_element_sizes"));
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.failure().kind, FailureKind::kUnsupportedRuntime);
  EXPECT_NE(runtime.failure().message.find("does not match the runtime"), std::string::npos)
      << runtime.failure().message;
}

// instance() reads OPENVINO_LIB_PATH when first needed, remembers a failure while the variable is
// unchanged, and tries again when it changes. This is the only test touching the process-wide
// instance, and it runs in its own process (ctest runs each test case separately).
TEST(RuntimeInstanceTest, ReadsThePathAtFirstUseAndRetriesOnlyWhenItChanges) {
  ::setenv("OPENVINO_LIB_PATH", "/nonexistent/openvino/libs", 1);
  auto failed = Runtime::instance();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.failure().message.find("/nonexistent/openvino/libs"), std::string::npos);
  auto again = Runtime::instance();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.failure().message, failed.failure().message);

  ::setenv("OPENVINO_LIB_PATH", env_path("EXECUTORCH_OPENVINO_OV_LIBS_DIR").c_str(), 1);
  auto loaded = Runtime::instance();
  ASSERT_TRUE(loaded.ok()) << loaded.failure().message;
  auto same = Runtime::instance();
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(loaded.value(), same.value());

  // Once loaded, the runtime stays: a later change of the variable does not unload it.
  ::setenv("OPENVINO_LIB_PATH", "/elsewhere", 1);
  auto still = Runtime::instance();
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still.value(), loaded.value());
}

TEST(RuntimeInstanceTest, ConcurrentFirstUseLoadsOneRuntimeWithOneCore) {
  ::setenv("OPENVINO_LIB_PATH", env_path("EXECUTORCH_OPENVINO_OV_LIBS_DIR").c_str(), 1);
  constexpr int kThreads = 8;
  std::vector<Runtime*> runtimes(kThreads, nullptr);
  std::vector<ov_core*> cores(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([i, &runtimes, &cores] {
      auto runtime = Runtime::instance();
      if (!runtime.ok()) return;
      runtimes[i] = runtime.value();
      auto core = runtime.value()->core();
      if (core.ok()) cores[i] = core.value();
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_NE(runtimes[i], nullptr) << "thread " << i;
    EXPECT_EQ(runtimes[i], runtimes[0]);
    EXPECT_NE(cores[i], nullptr);
    EXPECT_EQ(cores[i], cores[0]);
  }
}

}  // namespace
}  // namespace executorch_openvino::openvino_api
