// How much time our delegate adds per execute() over native OpenVINO running the same IR with the
// same compile properties and one reused infer request. A figure, not a test: it prints a Markdown
// table and exits 0 whatever the numbers are (1 only when something fails or the outputs differ).
//
// Method (see bench/overhead/README.md): both sides are set up once; after a warm-up, many rounds each run a
// block of native calls and a block of delegate calls per model, alternating which goes first, and
// every call is timed on its own with steady_clock. Interleaving makes both sides see the same
// machine state (frequency, noise from other processes) instead of one running in a better minute.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/runtime.h>
#include <executorch_openvino/backend.h>

#include "delegate_runner.h"
#include "host_tensor.h"
#include "ir_case.h"
#include "openvino_api/runtime.h"
#include "runners.h"

namespace executorch_openvino::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::HostTensor;

constexpr double kTargetRatio = 1.02;
constexpr double kTargetAddedMicros = 5.0;
// Share of the time budget spent warming up (caches, OpenVINO's lazy first-inference work, CPU
// frequency); the warm-up also yields the per-call estimate that sizes the blocks.
constexpr double kWarmUpShare = 0.05;

struct Options {
  fs::path cases;
  std::vector<std::string> models = {"bench_tiny", "bench_mid"};
  double seconds = 20.0;
  int rounds = 40;
  std::optional<fs::path> output;
};

const char* const kUsage =
    "usage: bench_delegate_overhead [--cases DIR] [--models NAME,NAME] [--seconds S] [--rounds N] [--output FILE]\n"
    "  --cases DIR     folder of cases written by bench/overhead/make_bench_models.py (default: $EXECUTORCH_OPENVINO_IR_CASES)\n"
    "  --models LIST   case names, comma-separated; 'tiny' means 'bench_tiny' (default: bench_tiny,bench_mid)\n"
    "  --seconds S     total time budget, warm-up included (default: 20)\n"
    "  --rounds N      interleaved rounds per model (default: 40)\n"
    "  --output FILE   also write the report, with date, CPU and OpenVINO version, to FILE\n";

Options parse_options(int argc, char** argv) {
  Options options;
  if (const char* env = std::getenv("EXECUTORCH_OPENVINO_IR_CASES"); env != nullptr) options.cases = env;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::string value;
    if (flag == "--help" || flag == "-h") throw UsageError("");
    if (const size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw UsageError(flag + " needs a value");
    }
    try {
      if (flag == "--cases") {
        options.cases = value;
      } else if (flag == "--models") {
        options.models = split_list(value);
      } else if (flag == "--seconds") {
        options.seconds = std::stod(value);
      } else if (flag == "--rounds") {
        options.rounds = std::stoi(value);
      } else if (flag == "--output") {
        options.output = value;
      } else {
        throw UsageError("unknown option " + flag);
      }
    } catch (const std::logic_error&) {  // std::stod / std::stoi on a non-number
      throw UsageError("bad value for " + flag + ": " + value);
    }
  }
  if (options.cases.empty()) throw UsageError("no cases folder: pass --cases DIR or set EXECUTORCH_OPENVINO_IR_CASES");
  if (options.models.empty()) throw UsageError("--models names no model");
  if (!(options.seconds > 0) || options.rounds < 1) throw UsageError("--seconds and --rounds must be positive");
  return options;
}

// "tiny" finds bench_tiny, so `--models tiny,mid` works as well as the full names.
std::string resolve_case_name(const fs::path& cases, const std::string& name) {
  if (fs::is_directory(cases / name)) return name;
  if (fs::is_directory(cases / ("bench_" + name))) return "bench_" + name;
  throw std::runtime_error("no case '" + name + "' in " + cases.string() +
                           " (generate them with bench/overhead/make_bench_models.py)");
}

// ---- One model, both sides -------------------------------------------------------------------

struct ModelBench {
  testing::IrCase ir;
  // Inputs are shared (both sides read the same memory); outputs are separate, to compare them.
  std::vector<std::unique_ptr<HostTensor>> inputs, native_outputs, delegate_outputs;
  std::unique_ptr<NativeRunner> native;
  std::unique_ptr<DelegateRunner> delegate;

  size_t block = 1;  // calls per side per round
  std::vector<int64_t> native_ns, delegate_ns;
  std::string output_check;
  bool outputs_match = false;
};

std::unique_ptr<ModelBench> set_up(const std::string& name, ov::Runtime& runtime,
                                   executorch::runtime::BackendInterface* backend) {
  auto model = std::make_unique<ModelBench>();
  model->ir = testing::load_ir_case(name);
  for (const testing::TensorFile& file : model->ir.inputs) {
    model->inputs.push_back(std::make_unique<HostTensor>(file.type, file.sizes, file.bytes));
  }
  for (const testing::TensorFile& file : model->ir.expected_outputs) {
    model->native_outputs.push_back(std::make_unique<HostTensor>(file.type, file.sizes));
    model->delegate_outputs.push_back(std::make_unique<HostTensor>(file.type, file.sizes));
  }
  model->native = std::make_unique<NativeRunner>(runtime, model->ir, pointers(model->inputs),
                                                 pointers(model->native_outputs));
  model->delegate = std::make_unique<DelegateRunner>(backend, model->ir, pointers(model->inputs),
                                                     pointers(model->delegate_outputs));
  return model;
}

template <typename Runner>
void call_or_throw(Runner& runner, const std::string& what) {
  if (!runner.run()) throw std::runtime_error(what + ": call failed: " + runner.failure());
}

std::string format_number(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// Runs each side once into outputs pre-filled with two different NaN patterns, so an output a side
// failed to write cannot pass as equal, then compares delegate to native (and native to NumPy's
// reference, which tells whether the comparison is of a meaningful result).
void check_outputs(ModelBench& model) {
  for (auto& tensor : model.native_outputs) std::memset(tensor->data(), 0xFF, tensor->nbytes());
  for (auto& tensor : model.delegate_outputs) std::memset(tensor->data(), 0xFE, tensor->nbytes());
  call_or_throw(*model.native, model.ir.name + " (native)");
  call_or_throw(*model.delegate, model.ir.name + " (delegate)");

  bool bitwise = true, within = true;
  double worst = 0, worst_reference = 0;
  for (size_t i = 0; i < model.native_outputs.size(); ++i) {
    const HostTensor& native = *model.native_outputs[i];
    const HostTensor& delegate = *model.delegate_outputs[i];
    const std::vector<uint8_t>& reference = model.ir.expected_outputs[i].bytes;
    const bool is_float = native.type() == executorch::aten::ScalarType::Float;
    if (is_float && reference.size() == native.nbytes()) {
      worst_reference = std::max(worst_reference, max_abs_diff_f32(native.bytes().data(), reference.data(), reference.size()));
    }
    if (native.bytes() == delegate.bytes()) continue;
    bitwise = false;
    // Integer and boolean outputs must match exactly; f32 within 1e-6.
    const double diff = is_float ? max_abs_diff_f32(native.bytes().data(), delegate.bytes().data(), native.nbytes()) : INFINITY;
    worst = std::max(worst, diff);
    within = within && diff <= 1e-6;
  }
  model.outputs_match = within;
  std::string text = bitwise ? "identical (bitwise)"
                             : (within ? "match within 1e-6" : "DIFFER") + std::string(" (max |delegate - native| ") +
                                   format_number(worst, "%.3g") + ")";
  model.output_check = text + "; native vs NumPy reference: max |diff| " + format_number(worst_reference, "%.3g");
}

// ---- Timing ----------------------------------------------------------------------------------

// Times `calls` calls one by one. `samples` is reserved beforehand, so nothing allocates here.
template <typename Runner>
void time_block(Runner& runner, size_t calls, std::vector<int64_t>& samples, const std::string& what) {
  for (size_t i = 0; i < calls; ++i) {
    const Clock::time_point start = Clock::now();
    const bool ok = runner.run();
    const Clock::time_point stop = Clock::now();
    if (!ok) throw std::runtime_error(what + ": call failed: " + runner.failure());
    samples.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());
  }
}

// The q-quantile (0..1) by linear interpolation between order statistics.
template <typename T>
double quantile(std::vector<T> values, double q) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(position);
  const size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return static_cast<double>(values[below]) * (1 - fraction) + static_cast<double>(values[above]) * fraction;
}

// Runs a side for about `seconds` (at least 10 calls) and returns its median call in nanoseconds.
template <typename Runner>
double warm_up(Runner& runner, double seconds, const std::string& what) {
  std::vector<int64_t> samples;
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (samples.size() < 10 || Clock::now() < end) time_block(runner, 1, samples, what);
  return quantile(samples, 0.5);
}

void run_rounds(std::vector<std::unique_ptr<ModelBench>>& models, int rounds) {
  const bool progress = isatty(STDERR_FILENO) != 0;
  for (int round = 0; round < rounds; ++round) {
    // Alternating the order cancels any advantage of going first (or second) within a round.
    const bool native_first = round % 2 == 0;
    for (auto& model : models) {
      const std::string& name = model->ir.name;
      for (int turn = 0; turn < 2; ++turn) {
        if ((turn == 0) == native_first) {
          time_block(*model->native, model->block, model->native_ns, name + " (native)");
        } else {
          time_block(*model->delegate, model->block, model->delegate_ns, name + " (delegate)");
        }
      }
    }
    if (progress) {  // a live counter on a terminal; nothing in logs
      std::fprintf(stderr, "\rround %d/%d", round + 1, rounds);
      std::fflush(stderr);
    }
  }
  if (progress) std::fprintf(stderr, "\n");
}

// ---- Report ----------------------------------------------------------------------------------

// A median with a distribution-free 95% confidence interval (order statistics of the sample).
struct Estimate {
  double median, low, high;
};

Estimate median_with_interval(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  // The interval [x(k), x(n+1-k)] (1-based) with k from the normal approximation of the binomial.
  const double k = std::floor((static_cast<double>(n) - 1.96 * std::sqrt(static_cast<double>(n))) / 2);
  const size_t low = k >= 1 ? static_cast<size_t>(k) - 1 : 0;
  return {quantile(values, 0.5), values[low], values[n - 1 - low]};
}

struct Summary {
  double native_median, native_p90, delegate_median, delegate_p90;
  double ratio;         // delegate median / native median, over all calls
  double added_micros;  // delegate median - native median, over all calls
  // The same two figures within each round (its two blocks ran back to back, so they are free of
  // drift between rounds), summarised over the rounds: they show how much of the above is noise.
  Estimate paired_ratio, paired_added;
};

Summary summarize(const ModelBench& model, int rounds) {
  Summary s{};
  s.native_median = quantile(model.native_ns, 0.5) / 1000;
  s.native_p90 = quantile(model.native_ns, 0.9) / 1000;
  s.delegate_median = quantile(model.delegate_ns, 0.5) / 1000;
  s.delegate_p90 = quantile(model.delegate_ns, 0.9) / 1000;
  s.ratio = s.delegate_median / s.native_median;
  s.added_micros = s.delegate_median - s.native_median;
  std::vector<double> ratios, added;
  for (size_t r = 0; r < static_cast<size_t>(rounds); ++r) {
    const auto round_median = [&](const std::vector<int64_t>& all) {
      return quantile(std::vector<int64_t>(all.begin() + r * model.block, all.begin() + (r + 1) * model.block), 0.5);
    };
    const double native = round_median(model.native_ns), delegate = round_median(model.delegate_ns);
    ratios.push_back(delegate / native);
    added.push_back((delegate - native) / 1000);
  }
  s.paired_ratio = median_with_interval(ratios);
  s.paired_added = median_with_interval(added);
  return s;
}

std::string verdict(const Summary& s) {
  const bool ratio_ok = s.ratio <= kTargetRatio;
  const bool added_ok = s.added_micros <= kTargetAddedMicros;
  std::string text = ratio_ok && added_ok ? "meets"
                     : !ratio_ok && !added_ok ? "misses (ratio, added)"
                     : ratio_ok             ? "misses (added)"
                                            : "misses (ratio)";
  // When a per-round interval contains the target, this run cannot tell meeting it from missing it.
  const auto spans = [](const Estimate& e, double target) { return e.low <= target && target <= e.high; };
  if (spans(s.paired_ratio, kTargetRatio) || spans(s.paired_added, kTargetAddedMicros)) text += ", within noise";
  return text;
}

std::string interval_text(const Estimate& e, const char* format) {
  return format_number(e.median, format) + " [" + format_number(e.low, format) + ", " +
         format_number(e.high, format) + "]";
}

std::string load_average() {
  std::ifstream file("/proc/loadavg");
  std::string one_minute;
  file >> one_minute;
  return one_minute.empty() ? "unknown" : one_minute;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &parts);
  return text;
}

std::string render_report(const Options& options, const ov::Runtime& runtime,
                          const std::vector<std::unique_ptr<ModelBench>>& models, const std::string& load_before) {
  std::ostringstream out;
  out << "# Delegate overhead: executorch_openvino vs native OpenVINO\n\n";
  out << "- Date: " << utc_now() << "\n";
  out << "- CPU: " << cpu_model() << ", " << std::thread::hardware_concurrency() << " logical cores\n";
  out << "- OpenVINO: " << runtime.build_number() << " (" << runtime.library_path().string() << ")\n";
  out << "- Run: " << options.seconds << " s budget, " << options.rounds
      << " interleaved rounds; per round and model, one block of native calls and one of delegate calls, "
         "order alternating; every call timed alone\n";
  // Other processes on the same cores are the main source of noise; the load average flags them.
  out << "- Load average (1 min) before / after: " << load_before << " / " << load_average() << "\n";
  out << "- Target: delegate/native <= " << kTargetRatio << "x and <= " << kTargetAddedMicros
      << " us added per call\n\n";

  out << "| model | calls per side | native median us | native p90 us | delegate median us | delegate p90 us "
         "| ratio | added us/call | per-round ratio [95% CI] | per-round added us [95% CI] | verdict |\n";
  out << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& model : models) {
    const Summary s = summarize(*model, options.rounds);
    out << "| " << model->ir.name << " | " << model->native_ns.size() << " | "
        << format_number(s.native_median, "%.2f") << " | " << format_number(s.native_p90, "%.2f") << " | "
        << format_number(s.delegate_median, "%.2f") << " | " << format_number(s.delegate_p90, "%.2f") << " | "
        << format_number(s.ratio, "%.4f") << " | " << format_number(s.added_micros, "%+.2f") << " | "
        << interval_text(s.paired_ratio, "%.4f") << " | " << interval_text(s.paired_added, "%+.2f") << " | "
        << verdict(s) << " |\n";
  }
  out << "\nOutputs (one call each, before timing):\n\n";
  for (const auto& model : models) out << "- " << model->ir.name << ": " << model->output_check << "\n";
  out << "\nratio and added: delegate median vs native median over all calls. Per-round: the same within each "
         "round, median over rounds with a 95% confidence interval; \"within noise\" when an interval contains "
         "the target. See bench/overhead/README.md.\n";
  return out.str();
}

int run(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  // load_ir_case reads the folder from this variable; --cases overrides whatever it was.
  setenv("EXECUTORCH_OPENVINO_IR_CASES", options.cases.c_str(), 1);
  default_openvino_library_path();

  executorch::runtime::runtime_init();
  if (const int status = executorch_openvino_registration_status(); status != 0) {
    throw std::runtime_error("registering the backend failed with ExecuTorch error " + std::to_string(status));
  }
  executorch::runtime::BackendInterface* backend =
      executorch::runtime::get_backend_class(EXECUTORCH_OPENVINO_BACKEND_ID);
  if (backend == nullptr) throw std::runtime_error("backend " EXECUTORCH_OPENVINO_BACKEND_ID " is not registered");
  ov::Runtime& runtime = runtime_or_throw();

  std::vector<std::unique_ptr<ModelBench>> models;
  for (const std::string& requested : options.models) {
    const std::string name = resolve_case_name(options.cases, requested);
    std::fprintf(stderr, "compiling %s (native and delegate)\n", name.c_str());
    models.push_back(set_up(name, runtime, backend));
  }

  // Warm-up, then size each model's blocks so that every model gets an equal share of the time.
  const double warm_up_seconds = options.seconds * kWarmUpShare / (2.0 * models.size());
  const double timed_seconds_per_model = options.seconds * (1 - kWarmUpShare) / models.size();
  bool all_match = true;
  for (auto& model : models) {
    const std::string& name = model->ir.name;
    const double native_ns = warm_up(*model->native, warm_up_seconds, name + " (native)");
    const double delegate_ns = warm_up(*model->delegate, warm_up_seconds, name + " (delegate)");
    const double per_round_ns = (native_ns + delegate_ns) * options.rounds;
    model->block = std::max<size_t>(1, static_cast<size_t>(timed_seconds_per_model * 1e9 / per_round_ns));
    model->native_ns.reserve(model->block * options.rounds);
    model->delegate_ns.reserve(model->block * options.rounds);
    check_outputs(*model);
    all_match = all_match && model->outputs_match;
    std::fprintf(stderr, "%s: %zu calls per block, outputs %s\n", name.c_str(), model->block,
                 model->output_check.c_str());
  }

  const std::string load_before = load_average();
  run_rounds(models, options.rounds);

  const std::string report = render_report(options, runtime, models, load_before);
  std::cout << report << std::flush;
  if (options.output) {
    if (options.output->has_parent_path()) fs::create_directories(options.output->parent_path());
    std::ofstream file(*options.output);
    file << report;
    if (!file) throw std::runtime_error("cannot write " + options.output->string());
    std::fprintf(stderr, "wrote %s\n", options.output->c_str());
  }
  if (!all_match) {
    std::fprintf(stderr, "error: delegate and native outputs differ; the timings compare different work\n");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace executorch_openvino::bench

int main(int argc, char** argv) {
  return executorch_openvino::bench::main_reporting_errors(argc, argv, executorch_openvino::bench::run,
                                                           executorch_openvino::bench::kUsage);
}
