// libexecutorch_openvino_state, the helper library (src/openvino_state/state_abi.h) that reaches what
// OpenVINO's C API cannot: a request's variables (reset, truncate, read, snapshot, restore) and rewriting
// a model for paged attention. Opened at run time, like the runtime itself, once per process; a missing
// or mismatched helper is a clear error for the calls that need it, and nothing else changes.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "loader/dynamic_library.h"
#include "openvino_api/ov_c_api.h"
#include "openvino_api/runtime.h"

struct eov_state_snapshot;

namespace executorch_openvino::openvino_api {

class HelperLibrary {
 public:
  // The helper at `path`; refused when it lacks a function or speaks another interface version.
  static Outcome<std::unique_ptr<HelperLibrary>> open(const std::filesystem::path& path);
  // libexecutorch_openvino_state beside the library holding this code (the wheel's lib/ folder).
  static std::filesystem::path default_path();
  ~HelperLibrary();

  // A deep copy of every variable of one request; restored into any request of the same model.
  class Snapshot {
   public:
    Snapshot(Snapshot&&) noexcept;
    Snapshot& operator=(Snapshot&&) noexcept;
    ~Snapshot();

   private:
    friend class HelperLibrary;
    Snapshot(const HelperLibrary* owner, eov_state_snapshot* handle) : owner_(owner), handle_(handle) {}
    const HelperLibrary* owner_ = nullptr;
    eov_state_snapshot* handle_ = nullptr;
  };

  // Every variable when `names` is empty.
  Status reset(ov_infer_request* request, const std::vector<std::string>& names) const;
  // Every variable whose name begins with `prefix`; none is an error.
  Status reset_prefix(ov_infer_request* request, const std::string& prefix) const;
  // Cuts dimension `axis` of every variable whose name begins with `prefix` to `length`; none, or a
  // shorter one, refuses and changes nothing.
  Status truncate(ov_infer_request* request, const std::string& prefix, int axis, int64_t length) const;
  // The first element of an integer variable.
  Outcome<int64_t> read_int(ov_infer_request* request, const std::string& name) const;
  Outcome<Snapshot> snapshot(ov_infer_request* request) const;
  Status restore(ov_infer_request* request, const Snapshot& snapshot) const;

  // Rewrites `model` in memory so that OpenVINO's paged attention reads and writes its grown KV
  // caches (src/openvino_state/paged_attention.cpp), caches of `cache_type` in blocks of
  // `block_size` positions. Empty text: rewritten; other text: why the model was left as it was.
  Outcome<std::string> page_attention(ov_model* model, const std::string& cache_type, int32_t block_size) const;

 private:
  struct Functions;
  HelperLibrary(loader::DynamicLibrary library, std::unique_ptr<Functions> functions);
  loader::DynamicLibrary library_;
  std::unique_ptr<Functions> functions_;
};

// The helper of this process, opened the first time a load asks for it and kept for the process (like
// the runtime it calls into). Without it (not built on this platform, not found, or built for another
// OpenVINO release than the one loaded) the delegate works as before: a new infer request for each
// new conversation, and no going back, saved prefixes or paged attention.
struct ProcessHelper {
  const HelperLibrary* library = nullptr;  // null: unavailable, and `why_not` says why
  std::string why_not;
  std::filesystem::path path;  // the file opened or tried; empty when none was (another release)
};
// EXECUTORCH_OPENVINO_STATE_LIBRARY names the helper to open instead of the one beside this library
// (tests use it to run without one).
const ProcessHelper& process_helper(const Runtime& runtime);

// The OpenVINO release the helper was built against; empty where the build made none (Windows, or
// a build without the openvino wheel or with EXECUTORCH_OPENVINO_BUILD_STATE_HELPER=OFF).
std::string helper_release();

// Whether `helper` works on objects of `runtime`: compiles a one-variable model on the CPU, runs
// it once and has the helper read the variable back, take a snapshot and reset it. A helper whose
// OpenVINO is not the runtime's (another copy of the same release) fails here.
Status probe_helper(Runtime& runtime, const HelperLibrary& helper);

}  // namespace executorch_openvino::openvino_api
