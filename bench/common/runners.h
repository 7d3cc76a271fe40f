// What both C++ benchmarks (bench_delegate_overhead, bench/overhead/; bench_zoo_cpp, bench/zoo/) share:
// native OpenVINO set up once so that its timed call is a single call (one infer request with our
// tensors bound once, then only ov::infer), the other ways an application hands OpenVINO a model, and
// the executables' common chores (usage errors, the OpenVINO library, output comparison). The
// delegate's side of the overhead benchmark is DelegateRunner (bench/overhead/delegate_runner.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "host_tensor.h"
#include "ir_case.h"
#include "openvino_api/objects.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino::bench {

using testing::HostTensor;
using testing::IrCase;

// The device and OpenVINO properties of a case's "property" lines, split as the delegate splits its
// compile specs ("device" picks the device, every other key is an OpenVINO property).
struct CompileSetup {
  std::string device = "CPU";
  std::vector<ov::Property> properties;
};
CompileSetup compile_setup(const IrCase& ir_case);

// ---- What both benchmark executables need besides the runners ----

// A mistake on the command line; an empty message asks for the usage text alone (--help).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// main() of a benchmark executable: `run`'s status; for a UsageError the usage text and status 2
// (0 for --help); for any other exception its message and status 1.
int main_reporting_errors(int argc, char** argv, int (*run)(int, char**), const char* usage);

// Without OPENVINO_LIB_PATH, points it at the pip runtime the build was configured against (when
// CMake found one) rather than whatever the system search finds; the reports name the library
// either way.
void default_openvino_library_path();
// The OpenVINO runtime our layer opens; throws std::runtime_error with its message when it cannot.
ov::Runtime& runtime_or_throw();
// Comma-separated items, empty ones dropped.
std::vector<std::string> split_list(const std::string& text);
std::vector<HostTensor*> pointers(const std::vector<std::unique_ptr<HostTensor>>& tensors);
// The largest |a - b| over two f32 buffers; infinite when either holds a NaN (an unwritten output).
double max_abs_diff_f32(const uint8_t* a, const uint8_t* b, size_t bytes);

// How an application hands a model to native OpenVINO.
struct NativeModel {
  enum class Kind {
    kIrInMemory,   // IR XML and weights in memory (weights used in place): what the delegate gets
    kIrFromFiles,  // ov_core_read_model on model.xml / model.bin (OpenVINO maps the weights file)
    kImported,     // ov_core_import_model of a compiled model exported earlier (no properties)
  };
  Kind kind = Kind::kIrInMemory;
  std::vector<uint8_t> xml, weights;              // kIrInMemory
  std::filesystem::path xml_path, weights_path;   // kIrFromFiles
  std::vector<uint8_t> exported;                  // kImported

  // The IR inside one of our containers, copied out of it.
  static NativeModel from_blob(const std::vector<uint8_t>& blob);
};

class NativeRunner {
 public:
  // Throws std::runtime_error, with OpenVINO's message, when any step fails.
  NativeRunner(ov::Runtime& runtime, NativeModel model, const CompileSetup& setup,
               const std::vector<HostTensor*>& inputs, const std::vector<HostTensor*>& outputs,
               const std::string& name);
  NativeRunner(ov::Runtime& runtime, const IrCase& ir_case, const std::vector<HostTensor*>& inputs,
               const std::vector<HostTensor*>& outputs)
      : NativeRunner(runtime, NativeModel::from_blob(ir_case.blob), compile_setup(ir_case), inputs, outputs,
                     ir_case.name) {}
  NativeRunner(const NativeRunner&) = delete;
  NativeRunner& operator=(const NativeRunner&) = delete;

  // The timed call: nothing but inference on the request whose tensors were bound at construction.
  bool run() {
    Status done = ov::infer(runtime_, request_.get());
    if (!done.ok()) failure_ = done.failure().message;
    return done.ok();
  }
  // What a delegate without a binding cache does per call (and what ExecuTorch's own OpenVINO
  // delegate does): wrap every input and output in a new OpenVINO tensor, set it, then infer.
  bool run_rebinding();
  const std::string& failure() const { return failure_; }

  // Writes the compiled model to `path` (ov_compiled_model_export_model), for NativeModel::kImported.
  void export_to(const std::filesystem::path& path);

  // An experiment: overwrites the model's bytes handed to OpenVINO (IR XML and weights, or the
  // exported model) with 0xFF. If the outputs stay right, the compiled model no longer reads them
  // and a delegate could free its blob after compiling; if they change, it still reads them in place
  // (freeing them instead crashes). Returns the bytes overwritten.
  size_t scribble_model_bytes();

 private:
  struct Bound {
    HostTensor* host;
    ov::ElementType type;
    std::vector<int64_t> dims;
    bool is_input;
    size_t index;
  };
  // Wraps the bound host memory in a new OpenVINO tensor and sets it on the request.
  Outcome<ov::TensorPtr> wrap_and_set(const Bound& bound);

  ov::Runtime& runtime_;
  // Declared first so it is destroyed last: the compiled model may read weights (or, imported, the
  // whole exported model) from it in place.
  NativeModel model_;
  ov::CompiledModelPtr compiled_;
  ov::InferRequestPtr request_;
  std::vector<Bound> bound_;
  std::vector<ov::TensorPtr> tensors_;
  std::string failure_;
};

}  // namespace executorch_openvino::bench
