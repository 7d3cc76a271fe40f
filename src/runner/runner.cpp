// executorch-openvino-run: loads an ExecuTorch program (.pte) through ExecuTorch's Module API, runs
// one method with deterministic or user-supplied inputs, and reports load time, first-run time and
// latency percentiles; optionally writes the outputs as .npy files.
//
// This file holds the command's flow: arguments, loading, timing, printing and error reporting.
// Input and output conversion is in method_values.cpp, the .npy format in npy.cpp.
//
// Errors are thrown as exceptions and reported once, in main(): a command-line tool has a single
// place where every failure ends, and the exit code tells the two kinds apart (2: the command line
// was wrong, 1: the model, the files or the run failed).
#include <algorithm>
#include <array>
#include <cstring>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <executorch/extension/module/module.h>
#include <executorch/runtime/core/error.h>

#include <executorch_openvino/backend.h>

#include "runner/method_values.h"
#include "runner/npy.h"

namespace {

namespace fs = std::filesystem;
using executorch::extension::Module;
using executorch::runtime::Error;
using executorch_openvino::runner::PreparedInput;

constexpr const char kProgram[] = "executorch-openvino-run";

constexpr const char kUsage[] =
    "usage: executorch-openvino-run MODEL.pte [--method NAME] [--iterations N] [--warmup N]\n"
    "                               [--input VALUE ...] [--output-dir DIR] [--option KEY=VALUE ...]\n"
    "                               [--data FILE.ptd]\n"
    "\n"
    "Loads an ExecuTorch program with the OpenVINO delegate linked in, runs one method and prints\n"
    "load time, first-run time and p50/p90/p99 latency.\n"
    "\n"
    "  --method NAME      the method to run (default: forward)\n"
    "  --iterations N     timed runs (default: 20)\n"
    "  --warmup N         untimed runs between the first run and the timed ones (default: 3)\n"
    "  --input VALUE      one per method input, in order: a .npy file (little-endian, C order;\n"
    "                     <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 |b1), int:N, float:X or bool:B for\n"
    "                     non-tensor inputs, or 'default'. Without --input every tensor input\n"
    "                     gets deterministic values of its declared shape and dtype.\n"
    "  --output-dir DIR   write output <i> of the last run to DIR/output<i>.npy\n"
    "  --data FILE.ptd    the data file the program keeps its weights in (exported with\n"
    "                     external weights)\n"
    "  --option KEY=VALUE a load-time option for the OpenVINO delegate, passed as ExecuTorch\n"
    "                     runtime_specs (Module::load with a LoadBackendOptionsMap): device,\n"
    "                     performance_hint, num_threads, num_streams, precision (exact|fast),\n"
    "                     inference_precision, cache_dir, enable_mmap, enable_profiling,\n"
    "                     attention (auto|grown|paged).\n"
    "                     E.g. --option device=AUTO --option precision=fast\n"
    "\n"
    "The delegate loads the OpenVINO runtime named by OPENVINO_LIB_PATH (the libopenvino_c library or\n"
    "its folder) when set, otherwise the system's libopenvino_c or the pip openvino package installed\n"
    "beside it.\n";

// The command line was wrong: exit code 2 and a pointer to --help.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The model, a file or a run failed: exit code 1.
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string model;
  std::string method = "forward";
  int iterations = 20;
  int warmup = 3;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string data;
  std::vector<std::pair<std::string, std::string>> backend_options;
};

int parse_count(const std::string& option, const std::string& text, int minimum) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < minimum || value > 100000000) {
    throw UsageError(option + " takes an integer of at least " + std::to_string(minimum) + ", not '" + text + "'");
  }
  return static_cast<int>(value);
}

// Accepts "--name value" and "--name=value". Returns false with `help` set for -h/--help.
bool parse_arguments(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") return false;
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      if (arg == "--" && i + 1 < argc) arg = argv[++i];
      if (!options.model.empty()) throw UsageError("unexpected argument '" + arg + "' (the model is '" + options.model + "')");
      options.model = arg;
      continue;
    }
    std::string name = arg, value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    auto take_value = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw UsageError(name + " needs a value");
      return argv[++i];
    };
    if (name == "--method") {
      options.method = take_value();
      if (options.method.empty()) throw UsageError("--method needs a non-empty name");
    } else if (name == "--iterations") {
      options.iterations = parse_count(name, take_value(), 1);
    } else if (name == "--warmup") {
      options.warmup = parse_count(name, take_value(), 0);
    } else if (name == "--input") {
      options.inputs.push_back(take_value());
    } else if (name == "--option") {
      const std::string pair = take_value();
      const size_t eq = pair.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--option takes KEY=VALUE, not '" + pair + "'");
      if (eq >= executorch::runtime::kMaxOptionKeyLength) throw UsageError("--option key '" + pair.substr(0, eq) + "' is too long");
      options.backend_options.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
    } else if (name == "--data") {
      options.data = take_value();
      if (options.data.empty()) throw UsageError("--data needs a file");
    } else if (name == "--output-dir") {
      options.output_dir = take_value();
      if (options.output_dir.empty()) throw UsageError("--output-dir needs a folder");
    } else {
      throw UsageError("unknown option '" + name + "'");
    }
  }
  if (options.model.empty()) throw UsageError("no model given");
  return true;
}

std::string hex(Error error) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%x", static_cast<unsigned>(error));
  return text;
}

// "<what> failed: ExecuTorch error 0x30 (Error::DelegateInvalidCompatibility)", followed by the
// delegate's full message when it reported one (ExecuTorch's own log truncates long lines).
[[noreturn]] void fail(const std::string& what, Error error) {
  std::string message = what + " failed: ExecuTorch error " + hex(error) + " (" + executorch::runtime::to_string(error) + ")";
  const char* delegate_message = executorch_openvino_last_error();
  if (delegate_message != nullptr && delegate_message[0] != '\0') {
    message += "\nOpenVINO delegate: " + std::string(delegate_message);
  }
  throw RunError(message);
}

// The value of `key` in the delegate's "key=value" runtime description, or "".
std::string runtime_field(const std::string& description, const std::string& key) {
  size_t start = 0;
  while (start < description.size()) {
    size_t end = description.find('\n', start);
    if (end == std::string::npos) end = description.size();
    if (description.compare(start, key.size() + 1, key + "=") == 0) {
      return description.substr(start + key.size() + 1, end - start - key.size() - 1);
    }
    start = end + 1;
  }
  return "";
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

// Linear interpolation between closest ranks (NumPy's default percentile), over sorted samples: the one
// definition executorch_openvino.benchmark.percentile (`executorch-openvino bench`) uses too, so both
// commands print the same p90 for the same samples (tests/python/benchmark/test_percentile.py).
double percentile(const std::vector<double>& sorted, double p) {
  const double position = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(position);
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (position - static_cast<double>(below));
}

void print_field(const char* label, const std::string& value) { std::printf("%-12s%s\n", label, value.c_str()); }

int run(const Options& options) {
  if (!fs::exists(options.model)) throw RunError("model file '" + options.model + "' does not exist");
  if (!fs::is_regular_file(options.model)) throw RunError("'" + options.model + "' is not a file");

  const int registration = executorch_openvino_registration_status();
  if (registration != 0) {
    std::fprintf(stderr, "%s: warning: the OpenVINO delegate (%s) failed to register with ExecuTorch: error %s; "
                 "programs that use it will not load\n",
                 kProgram, executorch_openvino_backend_id(), hex(static_cast<Error>(registration)).c_str());
  }

  // Mapped, so the delegate reads the weights where they lie and gives their pages back once OpenVINO has
  // its own layout of them (docs/memory.md); File would read them into memory, copied once more.
  std::unique_ptr<Module> loaded = options.data.empty()
                                       ? std::make_unique<Module>(options.model, Module::LoadMode::Mmap)
                                       : std::make_unique<Module>(options.model, options.data, Module::LoadMode::Mmap);
  Module& module = *loaded;
  executorch_openvino_clear_last_error();
  auto start = std::chrono::steady_clock::now();
  // Load-time options for our backend id; the delegate checks keys and values when it loads.
  std::vector<executorch::runtime::BackendOption> backend_options(options.backend_options.size());
  for (size_t i = 0; i < backend_options.size(); ++i) {
    const auto& [key, value] = options.backend_options[i];
    std::strncpy(backend_options[i].key, key.c_str(), sizeof(backend_options[i].key) - 1);
    std::array<char, executorch::runtime::kMaxOptionValueLength> text{};
    std::strncpy(text.data(), value.c_str(), text.size() - 1);
    backend_options[i].value = text;
  }
  executorch::runtime::LoadBackendOptionsMap load_options;
  if (!backend_options.empty()) {
    const Error set = load_options.set_options(executorch_openvino_backend_id(),
                                               {backend_options.data(), backend_options.size()});
    if (set != Error::Ok) fail("passing the --option values", set);
  }
  if (const Error error = module.load(load_options); error != Error::Ok) fail("loading program '" + options.model + "'", error);
  const double program_ms = elapsed_ms(start);

  auto names = module.method_names();
  if (!names.ok()) fail("listing the methods of '" + options.model + "'", names.error());
  if (names->count(options.method) == 0) {
    std::vector<std::string> sorted(names->begin(), names->end());
    std::sort(sorted.begin(), sorted.end());
    std::string list;
    for (const std::string& name : sorted) list += (list.empty() ? "" : ", ") + name;
    throw RunError("the program has no method '" + options.method + "' (it has: " + list + ")");
  }
  auto meta = module.method_meta(options.method);
  if (!meta.ok()) fail("reading the description of method '" + options.method + "'", meta.error());

  // Inputs are prepared before the method is loaded, so a wrong --input fails before the
  // (possibly long) OpenVINO compilation rather than after it.
  std::vector<PreparedInput> inputs;
  try {
    inputs = executorch_openvino::runner::prepare_inputs(*meta, options.inputs);
  } catch (const std::exception& error) {
    throw RunError(error.what());
  }

  executorch_openvino_clear_last_error();
  start = std::chrono::steady_clock::now();
  if (const Error error = module.load_method(options.method); error != Error::Ok) {
    fail("loading method '" + options.method + "' of '" + options.model + "'", error);
  }
  const double method_ms = elapsed_ms(start);

  print_field("model:", options.model);
  print_field("method:", options.method);
  // MethodMeta lists a backend once per delegated partition; print each once, with its count.
  std::vector<std::pair<std::string, int>> partitions;
  for (size_t i = 0; i < meta->num_backends(); ++i) {
    auto name = meta->get_backend_name(i);
    if (!name.ok()) continue;
    auto found = std::find_if(partitions.begin(), partitions.end(), [&](const auto& entry) { return entry.first == name.get(); });
    if (found == partitions.end()) {
      partitions.emplace_back(name.get(), 1);
    } else {
      ++found->second;
    }
  }
  std::string backends;
  for (const auto& [name, count] : partitions) {
    backends += (backends.empty() ? "" : ", ") + name;
    if (count > 1) backends += " (" + std::to_string(count) + " partitions)";
  }
  print_field("backends:", backends.empty() ? "none (every operator runs on ExecuTorch's CPU kernels)" : backends);
  if (meta->uses_backend(executorch_openvino_backend_id())) {
    const std::string description = executorch_openvino_describe_runtime();
    print_field("openvino:", runtime_field(description, "version") + " (" + runtime_field(description, "library") + ")");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    print_field(("input " + std::to_string(i) + ":").c_str(), inputs[i].description);
  }

  // Set once by hand first, so a rejected input is reported by its index and declared shape.
  std::vector<executorch::runtime::EValue> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    values.push_back(inputs[i].value);
    if (inputs[i].value.isNone()) continue;
    executorch_openvino_clear_last_error();
    if (const Error error = module.set_input(options.method, inputs[i].value, i); error != Error::Ok) {
      std::string what = "setting input " + std::to_string(i) + " (" + inputs[i].description;
      if (inputs[i].tensor) {
        what += "; declared " + executorch_openvino::runner::describe(meta->input_tensor_meta(i).get()) +
                "; ExecuTorch accepts a smaller shape only for inputs exported as dynamic)";
      } else {
        what += "; ExecuTorch accepts only the value the program was exported with)";
      }
      fail(what, error);
    }
  }

  // Every run sets the inputs again (execute() skips None entries), as a real caller must: memory
  // planning may reuse an input's buffer for intermediate values once the input has been read, so
  // a method run twice on inputs set once reads clobbered data the second time. The copy is part
  // of each timed call, as it is for any ExecuTorch caller.
  auto execute = [&](const char* which) {
    executorch_openvino_clear_last_error();
    auto outputs = module.execute(options.method, values);
    if (!outputs.ok()) fail(std::string("the ") + which + " of method '" + options.method + "'", outputs.error());
    return std::move(outputs.get());
  };

  start = std::chrono::steady_clock::now();
  std::vector<executorch::runtime::EValue> outputs = execute("first run");
  const double first_ms = elapsed_ms(start);
  for (int i = 0; i < options.warmup; ++i) outputs = execute("warm-up run");
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(options.iterations));
  for (int i = 0; i < options.iterations; ++i) {
    start = std::chrono::steady_clock::now();
    outputs = execute("timed run");
    samples.push_back(elapsed_ms(start));
  }
  double mean = 0;
  for (double sample : samples) mean += sample;
  mean /= static_cast<double>(samples.size());
  std::sort(samples.begin(), samples.end());

  std::printf("load time:  %10.3f ms (program %.3f ms + method %.3f ms)\n", program_ms + method_ms, program_ms,
              method_ms);
  std::printf("first run:  %10.3f ms\n", first_ms);
  std::printf("latency over %d runs after %d warm-up runs:\n", options.iterations, options.warmup);
  std::printf("  p50:      %10.3f ms\n", percentile(samples, 50));
  std::printf("  p90:      %10.3f ms\n", percentile(samples, 90));
  std::printf("  p99:      %10.3f ms\n", percentile(samples, 99));
  std::printf("  min:      %10.3f ms   mean: %.3f ms   max: %.3f ms\n", samples.front(), mean, samples.back());

  if (!options.output_dir.empty()) {
    std::error_code error;
    fs::create_directories(options.output_dir, error);
    if (error) throw RunError("cannot create the output folder '" + options.output_dir + "': " + error.message());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string line = executorch_openvino::runner::describe(outputs[i]);
    if (!options.output_dir.empty()) {
      const std::string path = (fs::path(options.output_dir) / ("output" + std::to_string(i) + ".npy")).string();
      try {
        executorch_openvino::runner::npy::write(path, executorch_openvino::runner::output_to_array(outputs[i], i));
      } catch (const std::exception& failure) {
        throw RunError(failure.what());
      }
      line += " -> " + path;
      if (outputs[i].isTensor() && outputs[i].toTensor().scalar_type() == executorch::aten::ScalarType::BFloat16) {
        line += " (as float32: .npy has no bfloat16)";
      }
    }
    print_field(("output " + std::to_string(i) + ":").c_str(), line);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    if (!parse_arguments(argc, argv, options)) {
      std::fputs(kUsage, stdout);
      return 0;
    }
  } catch (const UsageError& error) {
    std::fprintf(stderr, "%s: error: %s\n(see %s --help)\n", kProgram, error.what(), kProgram);
    return 2;
  }
  try {
    return run(options);
  } catch (const std::exception& error) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", kProgram, error.what());
    return 1;
  }
}
