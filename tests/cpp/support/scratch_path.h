// A path under the system's temporary folder that belongs to one test: named by the process (ctest
// runs tests of one executable in parallel processes), empty at the start, and removed with whatever
// the test left there when the object goes, on failure too.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

#include <unistd.h>

namespace executorch_openvino::testing {

class ScratchPath {
 public:
  // Nothing exists at the path yet; `create_folder` makes it an empty folder.
  explicit ScratchPath(const std::string& name, bool create_folder = false)
      : path_(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    if (create_folder) std::filesystem::create_directories(path_);
  }
  ~ScratchPath() {
    std::error_code ignored;  // a destructor must not throw
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchPath(const ScratchPath&) = delete;
  ScratchPath& operator=(const ScratchPath&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace executorch_openvino::testing
