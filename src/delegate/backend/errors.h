// Where our failures become ExecuTorch errors: pick the Error, log the message in full (ExecuTorch's
// log cuts a line at 256 bytes, so long messages go out in pieces), and keep it for
// executorch_openvino_last_error().
#pragma once

#include <string>

#include <executorch/runtime/core/error.h>

#include "common/outcome.h"

namespace executorch_openvino::delegate {

executorch::runtime::Error to_error(FailureKind kind);

// Logs `failure`, remembers it for the calling thread, and returns its ExecuTorch error.
executorch::runtime::Error report(const Failure& failure);

// Logs an informational message in full (not an error; not kept as the last error).
void log_info(const std::string& message);

// Clears the calling thread's last error (at the start of each delegate call).
void clear_last_error();
const char* last_error();

}  // namespace executorch_openvino::delegate
