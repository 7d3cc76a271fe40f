// What the engine's program models (program_model.h, speech_model.h) do with ExecuTorch's Module
// alike: open a program, a failure's text with the delegate's own reason, a constant method's integers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <executorch/extension/module/module.h>

#include "common/outcome.h"

namespace executorch_openvino::generation {

// The program at `pte` (its weights in `data` when kept apart, "" when not), mapped, not read: its
// weights stay in the file's pages (docs/memory.md). A failure names the file and why.
Outcome<std::unique_ptr<executorch::extension::Module>> open_program(const std::string& pte, const std::string& data);

// `what` failed with ExecuTorch's `error`, and the delegate's reason when it gave one (its log line is
// cut short).
std::string why_failed(const std::string& what, executorch::runtime::Error error);

// A constant method's integers (get_max_context_len, get_eos_ids, ...); none when the program has no
// such method.
std::vector<int64_t> constant_method(executorch::extension::Module& module, const std::string& name);

}  // namespace executorch_openvino::generation
