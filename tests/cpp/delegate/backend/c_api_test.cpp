// The C entry points that describe the installation (src/delegate/backend/c_api.cpp): here
// executorch_openvino_describe_state_helper, which doctor reads, with the helper beside the library
// and with the helper missing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include <executorch_openvino/backend.h>

#include "test_environment.h"

namespace executorch_openvino::testing {
namespace {

// The description's key=value lines; `error` is last and takes the rest.
std::map<std::string, std::string> described(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq);
    if (key == "error") {
      fields[key] = text.substr(text.find("\nerror=") + 7);
      break;
    }
    fields[key] = line.substr(eq + 1);
  }
  return fields;
}

TEST(StateHelperDescriptionTest, TheHelperBesideTheLibraryOpensAndPassesTheProbe) {
  const std::string text = executorch_openvino_describe_state_helper();
  std::map<std::string, std::string> fields = described(text);
  EXPECT_EQ(fields["built_for"], env_path("EXECUTORCH_OPENVINO_OV_VERSION").string()) << text;
  EXPECT_EQ(fields["runtime"].rfind(fields["built_for"], 0), 0u) << text;
  EXPECT_EQ(std::filesystem::path(fields["path"]).filename(), "libexecutorch_openvino_state.so") << text;
  EXPECT_EQ(fields["loaded"], "1") << text;
  EXPECT_EQ(fields["works"], "1") << text;
  EXPECT_EQ(fields.count("error"), 0u) << text;
}

// In a process of its own (the helper is opened once per process): describes the helper with
// EXECUTORCH_OPENVINO_STATE_LIBRARY at `missing`, and exits 0 when it is said to be missing there.
[[noreturn]] void describe_missing_helper_and_exit(const std::string& missing) {
  ::setenv("EXECUTORCH_OPENVINO_STATE_LIBRARY", missing.c_str(), 1);
  const std::string text = executorch_openvino_describe_state_helper();
  std::map<std::string, std::string> fields = described(text);
  const bool right = fields["path"] == missing && fields["loaded"] == "0" && fields["works"] == "0" &&
                     fields["error"].find("the state helper " + missing + " could not be opened") == 0;
  std::cerr << (right ? "described as missing" : "described as: " + text) << std::endl;
  std::_Exit(right ? 0 : 1);
}

TEST(StateHelperDescriptionTest, AMissingHelperIsNotLoadedAndTheErrorNamesThePath) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(describe_missing_helper_and_exit("/nonexistent/libexecutorch_openvino_state.so"),
              ::testing::ExitedWithCode(0), "described as missing");
}

}  // namespace
}  // namespace executorch_openvino::testing
