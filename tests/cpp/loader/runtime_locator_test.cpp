// The search policy for the OpenVINO C library, against the real pip-installed runtime.
#include "loader/runtime_locator.h"

#include <gtest/gtest.h>

#include "scratch_path.h"
#include "test_environment.h"

#include <cstdlib>
#include <fstream>

namespace executorch_openvino::loader {
namespace {

namespace fs = std::filesystem;

using testing::env_path;
using testing::ScratchPath;

class RuntimeLocatorTest : public ::testing::Test {
 protected:
  void touch(const fs::path& path) { std::ofstream(path) << "not a library"; }

  ScratchPath scratch_path_{std::string("eov_locator_") +
                                ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                            /*create_folder=*/true};
  const fs::path& scratch_ = scratch_path_.path();
};

TEST_F(RuntimeLocatorTest, UnsetVariableTriesTheSystemBareName) {
  const auto candidates = candidate_paths(std::nullopt);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0], fs::path(kBareLibraryName));
}

TEST_F(RuntimeLocatorTest, FilePathIsTheOnlyCandidate) {
  const fs::path file = scratch_ / "libopenvino_c.so.2641";
  touch(file);
  EXPECT_EQ(candidate_paths(file), std::vector<fs::path>{file});
}

TEST_F(RuntimeLocatorTest, FolderYieldsVersionedLibrariesHighestFirst) {
  for (const char* name : {"libopenvino_c.so.2460", "libopenvino_c.so.2641", "libopenvino_c.so.2541",
                           "libopenvino_c.so", "libopenvino.so.2641", "libopenvino_c.so.bak", "readme.txt"}) {
    touch(scratch_ / name);
  }
  const auto candidates = candidate_paths(scratch_);
  ASSERT_EQ(candidates.size(), 4u);
  EXPECT_EQ(candidates[0].filename(), "libopenvino_c.so.2641");
  EXPECT_EQ(candidates[1].filename(), "libopenvino_c.so.2541");
  EXPECT_EQ(candidates[2].filename(), "libopenvino_c.so.2460");
  EXPECT_EQ(candidates[3].filename(), "libopenvino_c.so");
}

TEST_F(RuntimeLocatorTest, VersionOrderingIsNumericNotLexical) {
  EXPECT_TRUE(newer_library_name("libopenvino_c.so.10000", "libopenvino_c.so.2641"));
  EXPECT_TRUE(newer_library_name("libopenvino_c.so.2641.1", "libopenvino_c.so.2641"));
  EXPECT_FALSE(newer_library_name("libopenvino_c.so", "libopenvino_c.so.2460"));
}

TEST_F(RuntimeLocatorTest, LoadsTheRealRuntimeByFilePath) {
  auto located = open_openvino_c(env_path("EXECUTORCH_OPENVINO_OV_C_LIBRARY"));
  ASSERT_TRUE(located.ok()) << located.failure().message;
  EXPECT_NE(located->library.symbol("ov_core_create"), nullptr);
  EXPECT_EQ(located->path, env_path("EXECUTORCH_OPENVINO_OV_C_LIBRARY"));
}

TEST_F(RuntimeLocatorTest, LoadsTheRealRuntimeByFolder) {
  auto located = open_openvino_c(env_path("EXECUTORCH_OPENVINO_OV_LIBS_DIR"));
  ASSERT_TRUE(located.ok()) << located.failure().message;
  EXPECT_EQ(located->path.parent_path(), env_path("EXECUTORCH_OPENVINO_OV_LIBS_DIR"));
  EXPECT_EQ(located->path.filename().string().rfind("libopenvino_c.so.", 0), 0u);
}

TEST_F(RuntimeLocatorTest, MissingFileNamesThePathTheReasonAndTheFix) {
  const fs::path missing = scratch_ / "nowhere" / "libopenvino_c.so.2641";
  auto located = open_openvino_c(missing);
  ASSERT_FALSE(located.ok());
  const std::string& message = located.failure().message;
  EXPECT_EQ(located.failure().kind, FailureKind::kRuntimeUnavailable);
  EXPECT_NE(message.find(missing.string()), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;  // dlerror's reason
  EXPECT_NE(message.find("OPENVINO_LIB_PATH"), std::string::npos) << message;
  EXPECT_NE(message.find("pip install"), std::string::npos) << message;
}

TEST_F(RuntimeLocatorTest, FileThatIsNotALibraryReportsTheLoadersReason) {
  const fs::path bogus = scratch_ / "libopenvino_c.so.2641";
  std::ofstream(bogus) << std::string(4096, 'x');  // long enough to be read as a header
  auto located = open_openvino_c(bogus);
  ASSERT_FALSE(located.ok());
  EXPECT_NE(located.failure().message.find(bogus.string()), std::string::npos);
  EXPECT_NE(located.failure().message.find("invalid ELF header"), std::string::npos) << located.failure().message;
}

TEST_F(RuntimeLocatorTest, FolderWithoutTheLibrarySaysSo) {
  auto located = open_openvino_c(scratch_);
  ASSERT_FALSE(located.ok());
  EXPECT_NE(located.failure().message.find(scratch_.string()), std::string::npos);
  EXPECT_NE(located.failure().message.find("holds no libopenvino_c.so"), std::string::npos)
      << located.failure().message;
}

TEST_F(RuntimeLocatorTest, EveryCandidateTriedIsNamed) {
  touch(scratch_ / "libopenvino_c.so.2641");
  touch(scratch_ / "libopenvino_c.so.2541");
  auto located = open_openvino_c(scratch_);
  ASSERT_FALSE(located.ok());
  EXPECT_NE(located.failure().message.find("libopenvino_c.so.2641"), std::string::npos);
  EXPECT_NE(located.failure().message.find("libopenvino_c.so.2541"), std::string::npos);
}

}  // namespace
}  // namespace executorch_openvino::loader
