// OpenVINO's variable state (reset, truncate, snapshot, restore), and paged attention, through the helper library
// libexecutorch_openvino_state (src/openvino_state/state_abi.h), which the C API cannot reach.
// Opened at run time, like the runtime itself; a missing or mismatched helper is a clear error for
// the calls that need it, and nothing else changes.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "loader/dynamic_library.h"
#include "openvino_api/ov_c_api.h"

struct eov_state_snapshot;

namespace executorch_openvino::openvino_api {

class StateControl {
 public:
  // The helper at `path`; refused when it lacks a function or speaks another interface version.
  static Outcome<std::unique_ptr<StateControl>> open(const std::filesystem::path& path);
  // libexecutorch_openvino_state beside the library holding this code (the wheel's lib/ folder).
  static std::filesystem::path default_path();
  ~StateControl();

  // A deep copy of every variable of one request; restored into any request of the same model.
  class Snapshot {
   public:
    Snapshot(Snapshot&&) noexcept;
    Snapshot& operator=(Snapshot&&) noexcept;
    ~Snapshot();

   private:
    friend class StateControl;
    Snapshot(const StateControl* owner, eov_state_snapshot* handle) : owner_(owner), handle_(handle) {}
    const StateControl* owner_ = nullptr;
    eov_state_snapshot* handle_ = nullptr;
  };

  // Every variable when `names` is empty.
  Status reset(ov_infer_request* request, const std::vector<std::string>& names) const;
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
  StateControl(loader::DynamicLibrary library, std::unique_ptr<Functions> functions);
  loader::DynamicLibrary library_;
  std::unique_ptr<Functions> functions_;
};

}  // namespace executorch_openvino::openvino_api
