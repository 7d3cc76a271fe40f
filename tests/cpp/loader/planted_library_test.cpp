// A libopenvino_c.so planted in the current folder is not what the bare name loads: the system's
// search for a bare name never looks in the current folder, so nobody can slip a library into the
// process by dropping a file where the program happens to run. The stand-in planted here reports
// a distinctive version, and a control load by its path shows it is a loadable library, so the
// test would notice if the search did pick it up.
#include "loader/runtime_locator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "scratch_path.h"
#include "test_environment.h"

#include <cstdlib>
#include <sstream>
#include <string>

#include "openvino_api/ov_c_api.h"

namespace executorch_openvino::loader {
namespace {

namespace fs = std::filesystem;
using testing::ScratchPath;

constexpr char kPlantedVersion[] = "2023.3.0-13775-stand-in";  // the old_version stand-in

std::string reported_version(void* get_version) {
  if (get_version == nullptr) return "<no ov_get_openvino_version>";
  openvino_api::Version version{nullptr, nullptr};
  if (reinterpret_cast<openvino_api::ov_get_openvino_version_fn>(get_version)(&version) != openvino_api::kOk ||
      version.build_number == nullptr) {
    return "<ov_get_openvino_version failed>";
  }
  return version.build_number;
}

// dlopen reads LD_LIBRARY_PATH once, at start; an empty or "." entry there makes the system's own
// search look in the current folder, which no loader code can undo.
bool library_path_searches_the_current_folder() {
  const char* value = std::getenv("LD_LIBRARY_PATH");
  if (value == nullptr) return false;
  std::stringstream entries{std::string(value) + ":x"};  // a trailing ':' is an empty entry too
  std::string entry;
  while (std::getline(entries, entry, ':')) {
    if (entry.empty() || entry == ".") return true;
  }
  return false;
}

class PlantedLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override { original_folder_ = fs::current_path(); }
  void TearDown() override { fs::current_path(original_folder_); }

  ScratchPath scratch_path_{"eov_planted", /*create_folder=*/true};
  const fs::path& scratch_ = scratch_path_.path();
  fs::path original_folder_;
};

TEST_F(PlantedLibraryTest, ALibraryInTheCurrentFolderIsNotWhatTheBareNameLoads) {
  if (library_path_searches_the_current_folder()) {
    GTEST_SKIP() << "LD_LIBRARY_PATH has an empty or '.' entry, so the system searches the current folder";
  }
  const fs::path planted = scratch_ / kBareLibraryName;
  fs::copy_file(testing::env_path("EXECUTORCH_OPENVINO_STAND_INS") / "old_version.so", planted);
  fs::current_path(scratch_);

  auto located = open_openvino_c(std::nullopt);
  if (located.ok()) {
    void* get_version = located->library.symbol("ov_get_openvino_version");
    EXPECT_NE(reported_version(get_version), kPlantedVersion) << "loaded " << located->path;
    std::optional<fs::path> file = module_path_of(get_version);
    ASSERT_TRUE(file.has_value());
    std::error_code ec;
    EXPECT_FALSE(fs::equivalent(*file, planted, ec)) << "loaded the planted library " << *file;
  } else {
    EXPECT_NE(located.failure().message.find(kBareLibraryName), std::string::npos) << located.failure().message;
  }

  // Control: the planted file is a loadable library reporting its version when named by path.
  auto by_path = DynamicLibrary::open(planted);
  ASSERT_TRUE(by_path.ok()) << by_path.failure().message;
  EXPECT_EQ(reported_version(by_path->symbol("ov_get_openvino_version")), kPlantedVersion);
}

}  // namespace
}  // namespace executorch_openvino::loader
