#include "delegate/backend/errors.h"

#include <atomic>

#include <executorch/runtime/platform/log.h>

namespace executorch_openvino::delegate {
namespace {

using executorch::runtime::Error;

// Lines longer than this are split; ExecuTorch formats each message into 256 bytes with a prefix.
constexpr size_t kLogPieceLength = 200;

std::string& thread_last_error() {
  thread_local std::string message;
  return message;
}

// Whether any thread ever kept an error: until then clearing has nothing to do and skips the
// thread-local lookup, a call into the dynamic linker from a shared library, on every execute.
std::atomic<bool> any_error_kept{false};

}  // namespace

Error to_error(FailureKind kind) {
  switch (kind) {
    case FailureKind::kRuntimeUnavailable: return Error::NotFound;
    case FailureKind::kUnsupportedRuntime: return Error::NotSupported;
    case FailureKind::kInvalidBlob: return Error::DelegateInvalidCompatibility;
    case FailureKind::kInvalidArgument: return Error::InvalidArgument;
    case FailureKind::kDeviceUnavailable: return Error::NotSupported;
    case FailureKind::kOutOfMemory: return Error::MemoryAllocationFailed;
    case FailureKind::kOpenVinoError: return Error::Internal;
  }
  return Error::Internal;
}

namespace {

void log_in_pieces(executorch::runtime::LogLevel level, const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    for (size_t piece = start; piece < end; piece += kLogPieceLength) {
      const size_t length = std::min(kLogPieceLength, end - piece);
      if (level == executorch::runtime::LogLevel::Error) {
        ET_LOG(Error, "%.*s", static_cast<int>(length), text.c_str() + piece);
      } else {
        ET_LOG(Info, "%.*s", static_cast<int>(length), text.c_str() + piece);
      }
    }
    start = end + 1;
  }
}

}  // namespace

Error report(const Failure& failure) {
  any_error_kept.store(true, std::memory_order_relaxed);
  thread_last_error() = "executorch_openvino: " + failure.message;
  log_in_pieces(executorch::runtime::LogLevel::Error, thread_last_error());
  return to_error(failure.kind);
}

void log_info(const std::string& message) {
  log_in_pieces(executorch::runtime::LogLevel::Info, "executorch_openvino: " + message);
}

void clear_last_error() {
  // A thread's own store is ordered before its own load, so a thread always sees its own errors.
  if (any_error_kept.load(std::memory_order_relaxed)) thread_last_error().clear();
}

const char* last_error() { return thread_last_error().c_str(); }

}  // namespace executorch_openvino::delegate
