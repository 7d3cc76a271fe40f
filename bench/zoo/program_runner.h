// A whole program (.pte) run through ExecuTorch's Method, with our delegate or any other: the
// ExecuTorch side of the zoo's C++ comparison (zoo_cpp.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <executorch/extension/module/module.h>

#include "runner/method_values.h"

namespace executorch_openvino::bench {

// The program is loaded through ExecuTorch's Module and its method's inputs are set once; each timed
// call is Method::execute(), i.e. everything ExecuTorch does per call around its delegates.
class ProgramRunner {
 public:
  // How the program's bytes reach ExecuTorch: FileDataLoader (what executorch-openvino-run uses:
  // each segment read into its own heap buffer), or one buffer holding the whole file
  // (BufferDataLoader: segments point into it, and a delegate freeing its segment frees nothing).
  enum class Loader { kFile, kBuffer };

  // Loads the program and `method`, reads the inputs from .npy files (method input order) and sets
  // them. Throws std::runtime_error naming the step and ExecuTorch's error, plus our delegate's last
  // error when it has one.
  ProgramRunner(const std::filesystem::path& pte, Loader loader, const std::vector<std::string>& input_files,
                const std::string& method = "forward");
  ProgramRunner(const ProgramRunner&) = delete;
  ProgramRunner& operator=(const ProgramRunner&) = delete;

  // Executes with the inputs as set. The first call also checks that they survived it: a memory
  // plan may reuse an input's buffer once the input has been read (it does when a kernel outside any
  // delegate reads it), and then every later call sets the inputs again, as run_setting_inputs().
  bool run();
  // What a caller that cannot rely on the memory plan leaving the inputs intact does (as
  // executorch-openvino-run and executorch.runtime do): set every input again, which copies it into
  // the planned buffer, then execute.
  bool run_setting_inputs();
  bool sets_inputs_every_call() const { return inputs_clobbered_; }
  const std::string& failure() const { return failure_; }

  size_t output_count() const;
  // Output `index` as raw bytes (tensors only; empty otherwise), for comparing sides.
  std::pair<const uint8_t*, size_t> output_bytes(size_t index) const;

 private:
  bool check(executorch::runtime::Error error, const char* what);

  std::vector<uint8_t> bytes_;  // kBuffer: the program; declared first so it outlives the module
  std::unique_ptr<executorch::extension::Module> module_;
  executorch::runtime::Method* method_ = nullptr;
  bool execute_checking_inputs();
  bool inputs_intact() const;

  std::vector<runner::PreparedInput> inputs_;
  bool checked_inputs_ = false;
  bool inputs_clobbered_ = false;
  std::string failure_;
};

// Our delegate's last error when its library is in the process (linked, or opened with RTLD_GLOBAL as
// bench_zoo_cpp opens it), else "": a program of another delegate runs without it.
std::string ours_last_error();
std::vector<uint8_t> read_file(const std::filesystem::path& path);

}  // namespace executorch_openvino::bench
