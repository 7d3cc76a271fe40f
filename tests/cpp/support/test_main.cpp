// main() of every C++ test: fills in the environment the tests expect (paths found at configure
// time) unless the caller already set it, so a test binary also runs on its own, outside ctest.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#ifndef EOV_TEST_ENVIRONMENT
#define EOV_TEST_ENVIRONMENT ""
#endif

int main(int argc, char** argv) {
  std::istringstream lines(EOV_TEST_ENVIRONMENT);
  std::string line;
  while (std::getline(lines, line, '|')) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) ::setenv(line.substr(0, eq).c_str(), line.substr(eq + 1).c_str(), 0);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
