// Native OpenVINO from C++, set up once so that its timed call is a single call: the IR our delegate
// got (or a compiled model native exported) compiled with the delegate's device and properties, one
// infer request with the caller's memory bound once, then only openvino_api::infer. Through the library's own
// OpenVINO C API layer (src/openvino_api), as the delegate calls OpenVINO. Also what bench_zoo_cpp's
// modes share: usage errors, the OpenVINO library, output comparison.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "openvino_api/objects.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino::bench {

// Memory the caller owns, bound to the request as an input or an output.
struct HostBuffer {
  openvino_api::ElementType type;
  std::vector<int64_t> dims;
  void* data;
};

// How an application hands OpenVINO the model.
struct NativeModel {
  bool imported = false;            // true: `bytes` is a compiled model native exported earlier
  std::vector<uint8_t> xml, bytes;  // the IR's XML and weights (used in place), or the exported model
};

class NativeRunner {
 public:
  // Throws std::runtime_error, with OpenVINO's message, when any step fails.
  NativeRunner(openvino_api::Runtime& runtime, NativeModel model, const std::string& device,
               const std::vector<openvino_api::Property>& properties, const std::vector<HostBuffer>& inputs,
               const std::vector<HostBuffer>& outputs);
  NativeRunner(const NativeRunner&) = delete;
  NativeRunner& operator=(const NativeRunner&) = delete;

  // The timed call: nothing but inference on the request whose memory was bound at construction.
  bool run() {
    const Status done = openvino_api::infer(runtime_, request_.get());
    if (!done.ok()) failure_ = done.failure().message;
    return done.ok();
  }
  // What a delegate without a binding cache does per call (and ExecuTorch's own OpenVINO delegate):
  // wrap every input and output in a new OpenVINO tensor, set it, then infer.
  bool run_rebinding();
  const std::string& failure() const { return failure_; }
  void export_to(const std::string& path);  // the compiled model, for NativeModel::imported

 private:
  Outcome<openvino_api::TensorPtr> wrap_and_set(const HostBuffer& buffer, bool is_input, size_t index);

  openvino_api::Runtime& runtime_;
  NativeModel model_;  // before compiled_: the compiled model may read the weights from it in place
  openvino_api::CompiledModelPtr compiled_;
  openvino_api::InferRequestPtr request_;
  std::vector<HostBuffer> inputs_, outputs_;
  std::vector<openvino_api::TensorPtr> bound_;
  std::string failure_;
};

// A mistake on the command line; an empty message asks for the usage text alone (--help).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// main(): `run`'s status; for a UsageError the usage text and 2 (0 for --help); otherwise the
// message and 1.
int main_reporting_errors(int argc, char** argv, int (*run)(int, char**), const char* usage);
// Without OPENVINO_LIB_PATH, points it at the pip runtime the build was configured against (when
// CMake found one) rather than whatever the system search finds.
void default_openvino_library_path();
openvino_api::Runtime& runtime_or_throw();
std::vector<std::string> split_list(const std::string& text);
// The largest |a - b| over two f32 buffers; infinite when either holds a NaN (an unwritten output).
double max_abs_diff_f32(const uint8_t* a, const uint8_t* b, size_t bytes);

}  // namespace executorch_openvino::bench
