// What the engine's program models (program_model.h, speech_model.h) read from ExecuTorch's Module
// alike: a failure's text with the delegate's own reason, and a constant method's integers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <executorch/extension/module/module.h>

namespace executorch_openvino::generation {

// `what` failed with ExecuTorch's `error`, and the delegate's reason when it gave one (its log line is
// cut short).
std::string why_failed(const std::string& what, executorch::runtime::Error error);

// A constant method's integers (get_max_context_len, get_eos_ids, ...); none when the program has no
// such method.
std::vector<int64_t> constant_method(executorch::extension::Module& module, const std::string& name);

}  // namespace executorch_openvino::generation
