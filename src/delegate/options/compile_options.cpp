#include "delegate/options/compile_options.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <executorch_openvino/backend.h>

#include "delegate/options/compute_form.h"
#include "loader/dynamic_library.h"

namespace executorch_openvino::delegate {
namespace {

// Spec values are raw bytes; writers may or may not include a terminating NUL.
std::string spec_text(const executorch::runtime::SizedBuffer& value) {
  const char* data = static_cast<const char*>(value.buffer);
  size_t size = data == nullptr ? 0 : value.nbytes;
  while (size > 0 && data[size - 1] == '\0') --size;
  return std::string(data == nullptr ? "" : data, size);
}

bool is_property_key(const char* key) {
  if (key == nullptr || key[0] == '\0') return false;
  for (const char* c = key; *c != '\0'; ++c) {
    if (!((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_')) return false;
  }
  return true;
}

// OpenVINO properties that name a file or folder (CACHE_DIR, ..._FILE, ..._PATH).
bool names_a_location(const std::string& key) {
  for (const char* word : {"DIR", "FILE", "PATH"}) {
    if (key.find(word) != std::string::npos) return true;
  }
  return false;
}

bool is_printable(const std::string& text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
}

bool has_property(const CompileOptions& options, const char* key) {
  for (const openvino_api::Property& property : options.properties) {
    if (property.key == key) return true;
  }
  return false;
}

// Creates the folder if needed and checks a file can be written in it.
bool writable_folder(const std::filesystem::path& folder) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  const std::filesystem::path probe = folder / ".executorch_openvino_write_probe";
  bool written = static_cast<bool>(std::ofstream(probe));
  std::filesystem::remove(probe, ec);
  return written;
}

}  // namespace

Outcome<std::string> precision_hint(const std::string& word) {
  std::string lowered = word;
  for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lowered == "exact") return std::string("f32");
  if (lowered == "fast") return std::string(kDeviceDefaultPrecision);
  return Failure{FailureKind::kInvalidArgument,
                 "precision '" + word + "': expected exact (f32, eager's results) or fast (the device's default)"};
}

bool is_virtual_device(const std::string& device) {
  if (device.find(':') != std::string::npos) return true;
  for (const char* name : {"AUTO", "HETERO", "MULTI", "BATCH"}) {
    if (device == name) return true;
  }
  return false;
}

std::string upstream_device(executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> specs) {
  for (const executorch::runtime::CompileSpec& spec : specs) {
    if (spec.key == nullptr || std::strcmp(spec.key, "device") != 0) continue;
    std::string device = spec_text(spec.value);
    if (!device.empty()) return device;
  }
  return CompileOptions{}.device;
}

const std::string* find_property(const CompileOptions& options, const char* key) {
  for (const openvino_api::Property& property : options.properties) {
    if (property.key == key) return &property.value;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> compilation_properties(const CompileOptions& options) {
  std::vector<std::pair<std::string, std::string>> properties;
  for (const openvino_api::Property& property : options.properties) {
    if (property.key == "CACHE_DIR" || property.key == "ENABLE_MMAP") continue;
    properties.emplace_back(property.key, property.value);
  }
  std::sort(properties.begin(), properties.end());
  return properties;
}

std::string apply_defaults(CompileOptions& options) {
  if (!has_property(options, "PERFORMANCE_HINT")) options.properties.push_back({"PERFORMANCE_HINT", "LATENCY"});
  const std::string& device = options.device;
  // BATCH only batches for GPU; the other virtual devices may pick the CPU.
  const bool cpu_or_virtual = is_cpu_device(device) ||
                              (is_virtual_device(device) && device.rfind("BATCH", 0) != 0);
  const std::string* precision = find_property(options, "INFERENCE_PRECISION_HINT");
  if (precision != nullptr && *precision == kDeviceDefaultPrecision) {
    for (auto it = options.properties.begin(); it != options.properties.end(); ++it) {
      if (it->key == "INFERENCE_PRECISION_HINT") {
        options.properties.erase(it);  // precision=fast: the device's own default
        break;
      }
    }
  } else if (cpu_or_virtual && precision == nullptr) {
    options.properties.push_back({"INFERENCE_PRECISION_HINT", "f32"});
  }
  std::string warning;
  for (auto it = options.properties.begin(); it != options.properties.end(); ++it) {
    if (it->key != "CACHE_DIR") continue;
    const std::string folder = it->value;
    if (!writable_folder(std::filesystem::u8path(folder))) {
      options.properties.erase(it);
      warning = "cache folder '" + folder + "' cannot be written; compiling without a model cache";
    }
    break;
  }
  if (options.attention == kAutoAttention &&
      (!is_cpu_device(device) || find_property(options, "CACHE_DIR") != nullptr)) {
    options.attention = kGrownAttention;
  }
  resolve_compute_form(options);
  return warning;
}

Outcome<CompileOptions> parse_compile_specs(executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> specs,
                                            Notes& notes) {
  CompileOptions options;
  for (const executorch::runtime::CompileSpec& spec : specs) {
    const std::string value = spec_text(spec.value);
    const std::string key = spec.key == nullptr ? "" : spec.key;
    if (!is_printable(value)) {
      return Failure{FailureKind::kInvalidBlob, "compile spec '" + key + "' has a value that is not text"};
    }
    if (key == EXECUTORCH_OPENVINO_SPEC_DEVICE) {
      if (value.empty()) return Failure{FailureKind::kInvalidBlob, "compile spec 'device' is empty"};
      options.device = value;
    } else if (key == EXECUTORCH_OPENVINO_SPEC_PRECISION) {
      Outcome<std::string> hint = precision_hint(value);
      if (!hint.ok()) return Failure{FailureKind::kInvalidBlob, "compile spec " + hint.failure().message};
      if (find_property(options, "INFERENCE_PRECISION_HINT") != nullptr) {
        return Failure{FailureKind::kInvalidBlob,
                       "compile specs 'precision' and 'INFERENCE_PRECISION_HINT' are both set; the exporter writes one"};
      }
      options.properties.push_back({"INFERENCE_PRECISION_HINT", hint.value()});
    } else if (key == "INFERENCE_PRECISION_HINT" && find_property(options, key.c_str()) != nullptr) {
      return Failure{FailureKind::kInvalidBlob,
                     "compile specs 'precision' and 'INFERENCE_PRECISION_HINT' are both set; the exporter writes one"};
    } else if (key == EXECUTORCH_OPENVINO_SPEC_WEIGHTS) {
      options.weights = value;
    } else if (key == EXECUTORCH_OPENVINO_SPEC_COMPRESS_TO_FP16 || key == EXECUTORCH_OPENVINO_SPEC_PRECOMPILE ||
               key == EXECUTORCH_OPENVINO_SPEC_STATIC_CACHES) {
      continue;  // what the exporter did (fp16 or compressed weights, embedded compiled models, cache form)
    } else if (names_a_location(key)) {
      // A program may come from anywhere: nothing in it chooses where files are read or written.
      notes.push_back("compile spec '" + key + "' ignored: folders and files are chosen at run time (cache_dir option)");
    } else if (is_property_key(spec.key)) {
      options.properties.push_back({key, value});
    } else {
      return Failure{FailureKind::kInvalidBlob,
                     "unknown compile spec '" + key + "': expected 'device' or an OpenVINO property name"};
    }
  }
  return options;
}

}  // namespace executorch_openvino::delegate
