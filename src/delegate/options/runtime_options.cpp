#include "delegate/options/runtime_options.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>
#include <variant>

#include "delegate/options/compute_form.h"
#include "loader/dynamic_library.h"

namespace executorch_openvino::delegate {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  return text;
}

bool is_count(const std::string& value) {
  return !value.empty() && value.size() <= 9 &&
         std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

struct ProcessOptions {
  std::mutex mutex;
  std::map<std::string, std::string, std::less<>> values;
};

ProcessOptions& process_options() {
  static auto* options = new ProcessOptions();  // never destroyed: used until the process ends
  return *options;
}

std::optional<std::string> environment_option(const OptionSpec& spec) {
  const std::string name = "EXECUTORCH_OPENVINO_" + upper(spec.key);
  std::optional<std::filesystem::path> value = loader::read_environment_path(name.c_str());
  if (!value) return std::nullopt;
  return loader::to_utf8(*value);
}

void set_in(CompileOptions& options, const OptionSpec& spec, const std::string& normalized) {
  if (spec.kind == OptionKind::kAttention) {
    options.attention = normalized;
    return;
  }
  if (spec.property == nullptr) {
    options.device = normalized;
    return;
  }
  // precision is a word for INFERENCE_PRECISION_HINT: the same property, so whichever channel
  // is higher wins between the two options (and, within one channel, inference_precision).
  const std::string value = spec.kind == OptionKind::kPrecision ? precision_hint(normalized).value() : normalized;
  for (openvino_api::Property& property : options.properties) {
    if (property.key == spec.property) {
      property.value = value;
      return;
    }
  }
  options.properties.push_back({spec.property, value});
}

// Applies one channel's value, checked; `channel` names it in errors.
Status apply(CompileOptions& options, const OptionSpec& spec, const std::string& raw, const char* channel) {
  Outcome<std::string> value = normalize_option(spec, raw);
  if (!value.ok()) {
    Failure failure = value.failure();
    failure.message = std::string(channel) + ": " + failure.message;
    return failure;
  }
  set_in(options, spec, value.value());
  return ok_status();
}

}  // namespace

const std::vector<OptionSpec>& option_specs() {
  static const std::vector<OptionSpec> specs = {
      {"device", nullptr, OptionKind::kText},
      {"performance_hint", "PERFORMANCE_HINT", OptionKind::kText},
      {"num_threads", "INFERENCE_NUM_THREADS", OptionKind::kCount},
      {"num_streams", "NUM_STREAMS", OptionKind::kStreams},
      {"precision", "INFERENCE_PRECISION_HINT", OptionKind::kPrecision},  // before inference_precision
      {"inference_precision", "INFERENCE_PRECISION_HINT", OptionKind::kText},
      {"cache_dir", "CACHE_DIR", OptionKind::kText},
      {"enable_mmap", "ENABLE_MMAP", OptionKind::kSwitch},
      {"enable_profiling", "PERF_COUNT", OptionKind::kSwitch},
      {"attention", nullptr, OptionKind::kAttention},
      {"dynamic_quantization", kDynamicQuantization, OptionKind::kComputeForm},
  };
  return specs;
}

const OptionSpec* find_option(std::string_view key) {
  for (const OptionSpec& spec : option_specs()) {
    if (key == spec.key) return &spec;
  }
  return nullptr;
}

std::string option_keys_text() {
  std::string text;
  for (const OptionSpec& spec : option_specs()) text += (text.empty() ? "" : ", ") + std::string(spec.key);
  return text;
}

Outcome<const OptionSpec*> known_option(std::string_view key) {
  if (const OptionSpec* spec = find_option(key)) return spec;
  return Failure{FailureKind::kInvalidArgument,
                 "unknown option '" + std::string(key) + "'; known options: " + option_keys_text()};
}

Outcome<std::string> normalize_option(const OptionSpec& spec, std::string value) {
  auto refuse = [&](const char* accepted) {
    return Failure{FailureKind::kInvalidArgument,
                   "option '" + std::string(spec.key) + "' = '" + value + "': expected " + accepted};
  };
  switch (spec.kind) {
    case OptionKind::kText:
      if (value.empty()) return refuse("a non-empty value");
      for (char c : value) {
        if (static_cast<unsigned char>(c) < 0x20) return refuse("printable text");
      }
      if (spec.property != nullptr && std::string_view(spec.property) == "PERFORMANCE_HINT") return upper(value);
      return value;
    case OptionKind::kCount:
      if (!is_count(value)) return refuse("a whole number >= 0 (0: OpenVINO decides)");
      return value;
    case OptionKind::kStreams:
      if (upper(value) == "AUTO") return std::string("AUTO");
      if (!is_count(value)) return refuse("a whole number >= 0 or AUTO");
      return value;
    case OptionKind::kAttention: {
      const std::string word = lower(value);
      if (word != kAutoAttention && word != kGrownAttention && word != kPagedAttention) {
        return refuse(
            "auto (paged where it can run), grown (the KV caches as OpenVINO state, as exported) or paged "
            "(OpenVINO's paged attention)");
      }
      return word;
    }
    case OptionKind::kComputeForm: {
      const std::string word = lower(value);
      if (word == kAutoComputeForm || word == kDeviceComputeForm) return word;
      if (word == "off") return std::string("0");
      if (!is_count(word)) {
        return refuse("auto (chosen per CPU and weights), on (OpenVINO's default), off, or a group size");
      }
      return word;
    }
    case OptionKind::kPrecision: {
      const std::string word = lower(value);
      if (!precision_hint(word).ok()) return refuse("exact (f32, eager's results) or fast (the device's default)");
      return word;
    }
    case OptionKind::kSwitch: {
      const std::string word = lower(value);
      if (word == "1" || word == "true" || word == "yes" || word == "on") return std::string("YES");
      if (word == "0" || word == "false" || word == "no" || word == "off") return std::string("NO");
      return refuse("true or false");
    }
  }
  return refuse("a value");
}

Status set_process_option(std::string_view key, const std::string& value) {
  Outcome<const OptionSpec*> known = known_option(key);
  if (!known.ok()) return known.failure();
  const OptionSpec* spec = known.value();
  ProcessOptions& options = process_options();
  if (value.empty()) {
    std::lock_guard<std::mutex> lock(options.mutex);
    options.values.erase(spec->key);
    return ok_status();
  }
  Outcome<std::string> normalized = normalize_option(*spec, value);
  if (!normalized.ok()) return normalized.failure();
  std::lock_guard<std::mutex> lock(options.mutex);
  options.values[spec->key] = normalized.value();
  return ok_status();
}

std::optional<std::string> process_option(std::string_view key) {
  ProcessOptions& options = process_options();
  std::lock_guard<std::mutex> lock(options.mutex);
  auto found = options.values.find(key);
  if (found == options.values.end()) return std::nullopt;
  return found->second;
}

void clear_process_options() {
  ProcessOptions& options = process_options();
  std::lock_guard<std::mutex> lock(options.mutex);
  options.values.clear();
}

std::optional<std::string> effective_process_option(std::string_view key) {
  const OptionSpec* spec = find_option(key);
  if (spec == nullptr) return std::nullopt;
  if (std::optional<std::string> value = process_option(key)) return value;
  std::optional<std::string> from_environment = environment_option(*spec);
  if (!from_environment) return std::nullopt;
  Outcome<std::string> normalized = normalize_option(*spec, *from_environment);
  if (!normalized.ok()) return from_environment;  // reported when a program loads
  return normalized.value();
}

Outcome<std::pair<const OptionSpec*, std::string>> read_backend_option(
    const executorch::runtime::BackendOption& option) {
  Outcome<const OptionSpec*> spec = known_option(backend_option_key(option));
  if (!spec.ok()) return spec.failure();
  std::string value;
  if (const bool* flag = std::get_if<bool>(&option.value)) {
    value = *flag ? "true" : "false";
  } else if (const int* number = std::get_if<int>(&option.value)) {
    value = std::to_string(*number);
  } else if (const auto* text = std::get_if<std::array<char, executorch::runtime::kMaxOptionValueLength>>(&option.value)) {
    value.assign(text->data(), strnlen(text->data(), text->size()));
  }
  return std::make_pair(spec.value(), value);
}

std::string backend_option_key(const executorch::runtime::BackendOption& option) {
  // The key array is fixed-size; a key filling it has no terminating NUL.
  return std::string(option.key, strnlen(option.key, executorch::runtime::kMaxOptionKeyLength));
}

void write_backend_option(executorch::runtime::BackendOption& option, const std::string& value) {
  if (std::holds_alternative<int>(option.value) && is_count(value)) {
    option.value = std::stoi(value);
  } else if (std::holds_alternative<bool>(option.value) && (value == "YES" || value == "NO")) {
    option.value = value == "YES";
  } else {
    std::array<char, executorch::runtime::kMaxOptionValueLength> text{};
    std::strncpy(text.data(), value.c_str(), text.size() - 1);
    option.value = text;
  }
}

Status apply_runtime_options(CompileOptions& options,
                             executorch::runtime::Span<const executorch::runtime::BackendOption> load_options) {
  for (const OptionSpec& spec : option_specs()) {
    if (std::optional<std::string> value = environment_option(spec)) {
      const std::string channel = "environment variable EXECUTORCH_OPENVINO_" + upper(spec.key);
      if (Status applied = apply(options, spec, *value, channel.c_str()); !applied.ok()) return applied;
    }
  }
  for (const OptionSpec& spec : option_specs()) {
    if (std::optional<std::string> value = process_option(spec.key)) set_in(options, spec, *value);
  }
  for (const executorch::runtime::BackendOption& option : load_options) {
    Outcome<std::pair<const OptionSpec*, std::string>> read = read_backend_option(option);
    if (!read.ok()) {
      Failure failure = read.failure();
      failure.message = "load-time option: " + failure.message;
      return failure;
    }
    if (Status applied = apply(options, *read->first, read->second, "load-time option"); !applied.ok()) return applied;
  }
  return ok_status();
}

}  // namespace executorch_openvino::delegate
