// Options chosen when a program loads rather than when it was exported: the device and a few
// OpenVINO properties, under friendly names, through three channels. Precedence, highest first:
//   1. load-time options for our backend id (ExecuTorch's runtime_specs, Module::load(map))
//   2. process-wide values set through the backend's set_option (C++) or
//      executorch_openvino_set_option (C; the Python package's set_options)
//   3. the environment: EXECUTORCH_OPENVINO_<KEY in upper case>, e.g. EXECUTORCH_OPENVINO_DEVICE
// and below them the program's own compile specs, then the delegate's defaults.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <executorch/runtime/backend/options.h>
#include <executorch/runtime/core/span.h>

#include "common/outcome.h"
#include "delegate/options/compile_options.h"

namespace executorch_openvino::delegate {

enum class OptionKind { kText, kCount, kStreams, kSwitch, kPrecision, kAttention, kComputeForm };

struct OptionSpec {
  const char* key;       // "num_threads"
  const char* property;  // "INFERENCE_NUM_THREADS"; nullptr for "device" and "attention"
  OptionKind kind;
};

// Every option key, in the order they are documented.
const std::vector<OptionSpec>& option_specs();
const OptionSpec* find_option(std::string_view key);
// "device, performance_hint, ..." for error messages.
std::string option_keys_text();
// The spec for `key`; the failure (InvalidArgument) names the key and lists the known ones.
Outcome<const OptionSpec*> known_option(std::string_view key);

// Checks and normalises a value for `spec`: counts are non-negative integers; streams a count or
// AUTO; switches accept true/false/yes/no/1/0 and become YES/NO (OpenVINO's spelling); precision
// exact or fast (kept as the word; it sets INFERENCE_PRECISION_HINT, see precision_hint). The failure
// names the key and what it accepts.
Outcome<std::string> normalize_option(const OptionSpec& spec, std::string value);

// The process-wide values (channel 2). Thread-safe. An empty value removes the key.
Status set_process_option(std::string_view key, const std::string& value);
std::optional<std::string> process_option(std::string_view key);
void clear_process_options();

// What a load without load-time options would take for `key` from channels 2 and 3, or nullopt
// when neither sets it (the program's compile spec, or the default, decides).
std::optional<std::string> effective_process_option(std::string_view key);

// An ExecuTorch BackendOption's key, and its value as text (a failure for a key not known).
std::string backend_option_key(const executorch::runtime::BackendOption& option);
Outcome<std::pair<const OptionSpec*, std::string>> read_backend_option(const executorch::runtime::BackendOption& option);
// Writes `value` into `option`: as an int or bool where the option holds one and the value is one,
// else as text.
void write_backend_option(executorch::runtime::BackendOption& option, const std::string& value);

// Applies channels 3, 2 and 1 (in that order, so the highest wins) on top of the program's options.
Status apply_runtime_options(CompileOptions& options,
                             executorch::runtime::Span<const executorch::runtime::BackendOption> load_options);

}  // namespace executorch_openvino::delegate
