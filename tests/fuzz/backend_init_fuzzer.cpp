// libFuzzer target: the backend's init() through ExecuTorch's BackendInterface, with the real
// OpenVINO runtime behind it, on a valid container around a fuzzed IR. So it is OpenVINO's IR
// reader, the state helper's paged-attention rewrite and the CPU compiler that see the damage; whatever they throw must come back as an ExecuTorch
// error with a message, never as a crash, a hang or a leak.
//
// Input: the IR's XML text, optionally followed by a NUL byte and the weights (.bin). XML has no
// NUL, so the split is unambiguous and the seeds stay readable (tests/fuzz/make_corpus.py).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <executorch/runtime/platform/platform.h>
#include <executorch_openvino/backend.h>

#include "blob/delegate_blob.h"
#include "delegate_harness.h"

namespace {

using executorch::runtime::Error;
using executorch_openvino::testing::DelegateHarness;

[[noreturn]] void broken(const char* what, Error error) {
  std::fprintf(stderr, "backend_init_fuzzer: %s (error 0x%x, last error: '%.300s')\n", what,
               static_cast<unsigned>(error), executorch_openvino_last_error());
  std::abort();
}

// Every refused IR is logged by the delegate; at thousands of inputs a second that is all the
// output would be. The message stays available from executorch_openvino_last_error().
void drop_log(et_timestamp_t, et_pal_log_level_t, const char*, const char*, size_t, const char*, size_t) {}

// What init() may answer for a model OpenVINO cannot read or compile. NotFound (no runtime) is not
// among them: it means the fuzzer runs without OpenVINO and tests nothing.
bool is_model_error(Error error) {
  switch (error) {
    case Error::DelegateInvalidCompatibility:
    case Error::InvalidArgument:
    case Error::NotSupported:
    case Error::Internal:
    case Error::MemoryAllocationFailed:
      return true;
    default:
      return false;
  }
}

// Set by the seed replay test (tests/fuzz/replay.cmake): every seed is a valid model, and one
// that fails to load means the fuzzer would start from nothing useful.
bool seeds_must_load = false;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // The pip runtime found at configure time, unless the caller chose another.
  ::setenv("OPENVINO_LIB_PATH", EOV_FUZZ_OPENVINO_LIB_PATH, 0);
  // Never write a model cache while fuzzing.
  ::unsetenv("EXECUTORCH_OPENVINO_CACHE_DIR");
  seeds_must_load = std::getenv("EOV_FUZZ_SEEDS_ARE_VALID") != nullptr;
  if (std::getenv("EOV_FUZZ_VERBOSE") == nullptr) {
    executorch::runtime::register_pal(executorch::runtime::PalImpl::create(drop_log, __FILE__));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) data = reinterpret_cast<const uint8_t*>("");  // memchr() wants a pointer even for none
  const auto* end = data + size;
  const auto* split = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const std::string xml(reinterpret_cast<const char*>(data), split == nullptr ? size : split - data);
  const std::vector<uint8_t> weights(split == nullptr ? end : split + 1, end);

  // One thread and one stream: each compile stays small, so more inputs run per second.
  static const std::vector<std::pair<std::string, std::string>> kSpecs = {
      {"device", "CPU"}, {"INFERENCE_NUM_THREADS", "1"}, {"NUM_STREAMS", "1"}};
  // The container says the caches grow, so that every IR also reaches the choice of paged attention
  // and the state helper's rewrite (which must take any IR, whatever the container claims).
  DelegateHarness harness;
  const Error loaded = harness.init(executorch_openvino::blob::build({xml, weights, {}, {}, {}, {}, 1}), kSpecs);
  if (loaded != Error::Ok) {
    if (seeds_must_load) broken("a seed did not load", loaded);
    if (!is_model_error(loaded)) broken("init() failed with an unexpected error", loaded);
    if (executorch_openvino_last_error()[0] == '\0') broken("init() failed without a message", loaded);
    return 0;
  }
  // A model that loads has outputs (a delegated partition always does; OpenVINO reads an IR whose
  // layer types are all unknown as an empty model), and refuses a call without arguments cleanly.
  // The refusal names the counts it expected ("expected N inputs and M outputs ...").
  const Error called = harness.execute_values({});
  if (called == Error::Ok) broken("init() accepted a model with no inputs and no outputs", called);
  if (called != Error::InvalidArgument) broken("execute() without arguments was not InvalidArgument", called);
  if (std::strstr(executorch_openvino_last_error(), " and 0 outputs") != nullptr) {
    broken("init() accepted a model with no outputs", called);
  }
  harness.destroy();
  return 0;
}
