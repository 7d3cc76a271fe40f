// A value or the reason there is none. Used by every layer below the delegate, which must not
// depend on ExecuTorch; the delegate turns a Failure into an ExecuTorch Error at its boundary.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace executorch_openvino {

// What went wrong, coarse enough for the delegate to pick an ExecuTorch Error from it.
enum class FailureKind {
  kRuntimeUnavailable,   // OpenVINO library missing, unloadable, or missing a symbol
  kUnsupportedRuntime,   // OpenVINO library loaded but of a version we cannot drive
  kInvalidBlob,          // our container or the IR inside it is malformed
  kInvalidArgument,      // caller passed something that does not match the model
  kDeviceUnavailable,    // the requested device is not present
  kOpenVinoError,        // an OpenVINO call failed for another reason
  kOutOfMemory,
};

struct Failure {
  FailureKind kind;
  std::string message;
  // The operating system's error number when a system call failed (GetLastError() on Windows,
  // errno elsewhere), else 0. Tests assert it; wording varies between systems.
  int system_code = 0;
};

template <typename T>
class [[nodiscard]] Outcome {
 public:
  Outcome(T value) : state_(std::move(value)) {}          // NOLINT: implicit by design
  Outcome(Failure failure) : state_(std::move(failure)) {}  // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const T& value() const& { return std::get<0>(state_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Failure& failure() const { return std::get<1>(state_); }

 private:
  std::variant<T, Failure> state_;
};

// For operations that produce nothing but may fail.
struct Done {};
using Status = Outcome<Done>;
inline Status ok_status() { return Done{}; }

}  // namespace executorch_openvino
