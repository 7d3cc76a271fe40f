// bench_zoo_cpp: the C++ side of the model zoo (bench/zoo/zoo.py). For one model folder written by
// zoo.py it runs native OpenVINO from C++ (the limit), our delegate inside an ExecuTorch program,
// XNNPACK, ExecuTorch's kernels and ExecuTorch's own OpenVINO delegate, in one of three modes:
//
//   serve DIR [--variants LIST]   load the variants (one that fails to load is reported and left out),
//                                 then obey commands on stdin, one line each, and answer each with
//                                 one JSON line on stdout, so that zoo.py can interleave blocks of
//                                 C++ calls with its Python variants:
//                                   time VARIANT N    N calls, each timed alone -> {"ns": [...]}
//                                   allocs VARIANT N  heap allocations over N calls
//                                   check             outputs compared with native's and eager's
//                                   quit
//   load DIR --side SIDE [...]    one load in this (fresh) process: time, resident memory, first run
//   export DIR OUT                compile natively and write the compiled model (for --side
//                                 native-import)
//
// The folder: model.xml and model.bin (the IR our delegate got, taken from its blob), native.txt
// (device, properties, the IR's inputs in order), input<i>.npy (the method's inputs), output<i>.npy
// (eager PyTorch's outputs), and the programs that lowered: ours.pte, ours_bf16.pte, xnnpack.pte,
// kernels.pte and et_openvino.pte (ExecuTorch's own OpenVINO delegate).
//
// Heap allocations are counted by replacing malloc and its relatives in this executable, which every
// library in the process then calls; counting is off except inside an `allocs` block.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <executorch/runtime/platform/runtime.h>

#include "host_tensor.h"
#include "openvino_api/runtime.h"
#include "program_runner.h"
#include "runner/npy.h"
#include "runners.h"

// ---- Allocation counting ------------------------------------------------------------------------

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_all_threads{0};
thread_local bool t_counting = false;  // trivially initialised: no TLS wrapper, safe inside malloc
thread_local long t_this_thread = 0;

inline void note_allocation() {
  if (!g_counting.load(std::memory_order_relaxed)) return;
  g_all_threads.fetch_add(1, std::memory_order_relaxed);
  if (t_counting) ++t_this_thread;
}
}  // namespace

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t size) {
  note_allocation();
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  note_allocation();
  return __libc_calloc(count, size);
}
void* realloc(void* pointer, size_t size) {
  note_allocation();
  return __libc_realloc(pointer, size);
}
void* memalign(size_t alignment, size_t size) {
  note_allocation();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  note_allocation();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  note_allocation();
  void* pointer = __libc_memalign(alignment, size);
  if (pointer == nullptr) return ENOMEM;
  *out = pointer;
  return 0;
}
}  // extern "C"

namespace executorch_openvino::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using executorch::aten::ScalarType;

const char* const kUsage =
    "usage: bench_zoo_cpp serve DIR [--variants native,native-rebind,ours,ours-set-inputs,xnnpack,et-kernels,\n"
    "                                             et-openvino,ours-bf16]\n"
    "       bench_zoo_cpp load DIR --side native|native-file|native-import|ours|xnnpack|et-openvino|...\n"
    "                     [--preopen] [--cache DIR] [--runs N] [--loader file|mmap|buffer] [--scribble-model-bytes]\n"
    "       bench_zoo_cpp export DIR OUT\n"
    "See the comment at the top of bench/zoo/zoo_cpp.cpp.\n";

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// ---- Memory of this process ----------------------------------------------------------------------

long status_kb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(status, line)) {
    if (line.rfind(prefix, 0) == 0) return std::strtol(line.c_str() + prefix.size(), nullptr, 10);
  }
  return -1;
}

// Sets the high-water mark (VmHWM) back to the current RSS, so a later VmHWM is the peak of what
// follows alone. Linux 4.0 and later; false where /proc refuses.
bool reset_peak() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

// ---- The model folder ----------------------------------------------------------------------------

ScalarType scalar_type_of(runner::npy::DType dtype) {
  switch (dtype) {
    case runner::npy::DType::kFloat32: return ScalarType::Float;
    case runner::npy::DType::kInt64: return ScalarType::Long;
    case runner::npy::DType::kInt32: return ScalarType::Int;
    case runner::npy::DType::kBool: return ScalarType::Bool;
    case runner::npy::DType::kUInt8: return ScalarType::Byte;
    default: throw std::runtime_error(std::string("no OpenVINO counterpart for .npy dtype ") + runner::npy::descr(dtype));
  }
}

std::unique_ptr<HostTensor> host_tensor(const runner::npy::Array& array, bool with_data) {
  std::vector<int32_t> sizes(array.shape.begin(), array.shape.end());
  const ScalarType type = scalar_type_of(array.dtype);
  return with_data ? std::make_unique<HostTensor>(type, sizes, array.data) : std::make_unique<HostTensor>(type, sizes);
}

std::vector<std::string> numbered_files(const fs::path& folder, const std::string& stem) {
  std::vector<std::string> files;
  for (int i = 0; fs::exists(folder / (stem + std::to_string(i) + ".npy")); ++i) {
    files.push_back((folder / (stem + std::to_string(i) + ".npy")).string());
  }
  return files;
}

struct Folder {
  fs::path path;
  CompileSetup setup;
  std::vector<std::string> native_inputs;  // .npy files in the IR's input order
  std::vector<size_t> native_outputs;      // per IR output, the method output it is
  std::vector<std::string> method_inputs;  // .npy files in the method's input order
  std::vector<runner::npy::Array> reference_outputs;  // eager PyTorch's

  explicit Folder(const fs::path& folder) : path(folder) {
    std::ifstream spec(folder / "native.txt");
    if (!spec) throw std::runtime_error("no native.txt in " + folder.string() + " (written by bench/zoo/zoo.py)");
    std::string line;
    while (std::getline(spec, line)) {
      std::istringstream fields(line);
      std::string kind, key, value;
      fields >> kind >> key;
      if (kind == "device") {
        setup.device = key;
      } else if (kind == "property") {
        fields >> value;
        setup.properties.push_back({key, value});
      } else if (kind == "input") {
        native_inputs.push_back((folder / key).string());
      } else if (kind == "output") {
        native_outputs.push_back(std::stoul(key));
      }
    }
    method_inputs = numbered_files(folder, "input");
    for (const std::string& file : numbered_files(folder, "output")) reference_outputs.push_back(runner::npy::read(file));
    for (size_t position : native_outputs) {
      if (position >= reference_outputs.size()) throw std::runtime_error("native.txt names a missing output");
    }
  }
};

// Native OpenVINO's tensors: inputs from the files, outputs shaped like eager's.
struct NativeTensors {
  std::vector<std::unique_ptr<HostTensor>> inputs, outputs;

  explicit NativeTensors(const Folder& folder) {
    for (const std::string& file : folder.native_inputs) inputs.push_back(host_tensor(runner::npy::read(file), true));
    for (size_t position : folder.native_outputs) outputs.push_back(host_tensor(folder.reference_outputs[position], false));
  }
};

// The model as an application would hand it to OpenVINO, read from the folder (inside the timed
// load: reading the files is part of a native load as reading the .pte is part of ours).
NativeModel native_model(const Folder& folder, const std::string& side) {
  NativeModel model;
  if (side == "native") {
    model.kind = NativeModel::Kind::kIrInMemory;
    model.xml = testing::read_file(folder.path / "model.xml");
    model.weights = testing::read_file(folder.path / "model.bin");
  } else if (side == "native-file") {
    model.kind = NativeModel::Kind::kIrFromFiles;
    model.xml_path = folder.path / "model.xml";
    if (fs::file_size(folder.path / "model.bin") > 0) model.weights_path = folder.path / "model.bin";
  } else if (side == "native-import") {
    model.kind = NativeModel::Kind::kImported;
    model.exported = testing::read_file(folder.path / "native.exported");
  } else {
    throw std::runtime_error("not a native side: " + side);
  }
  return model;
}

// Our delegate, opened at run time rather than linked. Linked, it would register before ExecuTorch's
// own OpenVINO delegate could, and it takes that delegate's backend name too ("OpenvinoBackend")
// when the name is free, so ExecuTorch's programs would run on ours. Opened after that library, it
// leaves the name to it. EXECUTORCH_OPENVINO_LIBRARY overrides the build's library, as in Python.
struct OurLibrary {
  std::string path;
  const char* (*describe_runtime)() = nullptr;
  const char* (*backend_library)(const char*) = nullptr;  // newer libraries only; may be null
};

const OurLibrary& our_library() {
  static const OurLibrary library = [] {
    OurLibrary opened;
    const char* configured = std::getenv("EXECUTORCH_OPENVINO_LIBRARY");
    opened.path = configured != nullptr && configured[0] != '\0' ? configured : EOV_BENCH_DELEGATE_LIBRARY;
    void* handle = dlopen(opened.path.c_str(), RTLD_NOW | RTLD_GLOBAL);  // GLOBAL: ProgramRunner finds its errors
    if (handle == nullptr) throw std::runtime_error("cannot load " + opened.path + ": " + dlerror());
    const auto status = reinterpret_cast<int (*)()>(dlsym(handle, "executorch_openvino_registration_status"));
    opened.describe_runtime = reinterpret_cast<const char* (*)()>(dlsym(handle, "executorch_openvino_describe_runtime"));
    opened.backend_library =
        reinterpret_cast<const char* (*)(const char*)>(dlsym(handle, "executorch_openvino_backend_library"));
    if (status == nullptr || opened.describe_runtime == nullptr) throw std::runtime_error(opened.path + " is not our delegate");
    if (const int code = status(); code != 0) {
      throw std::runtime_error("registering our backend failed with ExecuTorch error " + std::to_string(code));
    }
    return opened;
  }();
  return library;
}

// The library whose backend runs programs of ExecuTorch's own OpenVINO delegate, when ours can say.
std::string openvino_backend_holder() {
  const OurLibrary& ours = our_library();
  return ours.backend_library != nullptr ? ours.backend_library("OpenvinoBackend") : "unknown";
}

// One of ExecuTorch's delegates from the executorch wheel, beside the libexecutorch.so we link:
// loading the library registers its backend in the same registry as ours.
void load_backend_library(const std::string& file) {
  static std::vector<std::string> loaded;
  if (std::find(loaded.begin(), loaded.end(), file) != loaded.end()) return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&executorch::runtime::runtime_init), &info) == 0 || info.dli_fname == nullptr) {
    throw std::runtime_error("cannot locate libexecutorch.so");
  }
  const fs::path library = fs::path(info.dli_fname).parent_path() / file;
  if (dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
    throw std::runtime_error("cannot load " + library.string() + ": " + dlerror());
  }
  loaded.push_back(file);
}

// The ExecuTorch programs serve can run: name -> (.pte, the delegate library it needs, how it is
// read, whether each call sets the inputs again).
struct ProgramVariant {
  const char* name;
  const char* pte;
  const char* library;  // nullptr: ours (linked) or none
  ProgramRunner::Loader loader;
  bool set_inputs;
};
const ProgramVariant kProgramVariants[] = {
    // The file loader, as executorch-openvino-run uses.
    {"ours", "ours.pte", nullptr, ProgramRunner::Loader::kFile, false},
    {"ours-set-inputs", "ours.pte", nullptr, ProgramRunner::Loader::kFile, true},
    {"xnnpack", "xnnpack.pte", "libexecutorch_backend_xnnpack.so", ProgramRunner::Loader::kFile, false},
    {"et-kernels", "kernels.pte", nullptr, ProgramRunner::Loader::kFile, false},
    // One buffer for the whole program: ExecuTorch's own OpenVINO delegate frees its segment right
    // after ov_core_import_model, and OpenVINO 2026 keeps reading the weights from it (with the file
    // loader that is a use after free, with mmap a crash; see bench/zoo/README.md).
    {"et-openvino", "et_openvino.pte", "libexecutorch_backend_openvino.so", ProgramRunner::Loader::kBuffer, false},
    {"ours-bf16", "ours_bf16.pte", nullptr, ProgramRunner::Loader::kFile, false},
    // ExecuTorch's own delegate's program run by ours (registered under its name when that library is
    // not in the process), read as executorch-openvino-run reads programs.
    {"ours-upstream", "et_openvino.pte", nullptr, ProgramRunner::Loader::kFile, false},
};

// ExecuTorch's own delegate opens OPENVINO_LIB_PATH as a file (or "libopenvino_c.so", which the pip
// wheel does not have); ours also takes a folder. Point both at the file our layer resolves.
void pin_openvino_library_file() {
  const fs::path library = runtime_or_throw().library_path();
  setenv("OPENVINO_LIB_PATH", library.c_str(), 1);
}

// ---- Sides ---------------------------------------------------------------------------------------

struct Variant {
  std::function<bool()> call;
  std::function<std::string()> failure;
  std::function<bool()> sets_inputs_every_call = [] { return false; };
  // Output i as bytes: native's host tensors, or the method's outputs.
  std::function<std::pair<const uint8_t*, size_t>(size_t)> output;
  double load_ms = 0;
};

struct Sides {
  Folder folder;
  std::unique_ptr<NativeTensors> native_tensors;
  std::unique_ptr<NativeRunner> native;
  std::map<std::string, std::unique_ptr<ProgramRunner>> programs;  // by .pte file (and delegate library)
  std::map<std::string, Variant> variants;

  explicit Sides(const fs::path& path) : folder(path) {}
};

Variant native_variant(NativeRunner* native, const NativeTensors* tensors, const std::vector<size_t>& positions) {
  Variant variant;
  variant.call = [native] { return native->run(); };
  variant.failure = [native] { return native->failure(); };
  // By method output index, like the program variants.
  variant.output = [tensors, positions](size_t i) -> std::pair<const uint8_t*, size_t> {
    for (size_t k = 0; k < positions.size(); ++k) {
      if (positions[k] == i) return {tensors->outputs[k]->data(), tensors->outputs[k]->nbytes()};
    }
    return {nullptr, 0};
  };
  return variant;
}

void add_native(Sides& sides, bool rebinding_too) {
  const Clock::time_point start = Clock::now();
  sides.native_tensors = std::make_unique<NativeTensors>(sides.folder);
  sides.native = std::make_unique<NativeRunner>(runtime_or_throw(), native_model(sides.folder, "native"),
                                                sides.folder.setup,
                                                pointers(sides.native_tensors->inputs),
                                                pointers(sides.native_tensors->outputs),
                                                sides.folder.path.filename().string());
  NativeRunner* native = sides.native.get();
  Variant bound = native_variant(native, sides.native_tensors.get(), sides.folder.native_outputs);
  bound.load_ms = elapsed_ms(start);
  sides.variants["native"] = bound;
  if (rebinding_too) {
    Variant rebinding = bound;
    rebinding.call = [native] { return native->run_rebinding(); };
    rebinding.load_ms = 0;
    sides.variants["native-rebind"] = rebinding;
  }
}

std::unique_ptr<ProgramRunner> load_program(const Folder& folder, const std::string& file, ProgramRunner::Loader loader) {
  return std::make_unique<ProgramRunner>(folder.path / file, loader, folder.method_inputs);
}

Variant program_variant(ProgramRunner* program, bool setting_inputs, double load_ms) {
  Variant variant;
  if (setting_inputs) {
    variant.call = [program] { return program->run_setting_inputs(); };
  } else {
    variant.call = [program] { return program->run(); };
  }
  variant.failure = [program] { return program->failure(); };
  variant.output = [program](size_t i) {
    return i < program->output_count() ? program->output_bytes(i) : std::pair<const uint8_t*, size_t>{nullptr, 0};
  };
  variant.sets_inputs_every_call = [program, setting_inputs] { return setting_inputs || program->sets_inputs_every_call(); };
  variant.load_ms = load_ms;
  return variant;
}

// ---- serve ---------------------------------------------------------------------------------------

// One figure per output set: the largest |a - b| over f32 outputs, 0/inf for exact/unequal others.
double compare(const Variant& variant, const std::function<std::pair<const uint8_t*, size_t>(size_t)>& reference,
               const std::vector<runner::npy::Array>& types) {
  double worst = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    const auto [a, a_size] = variant.output(i);
    const auto [b, b_size] = reference(i);
    if (a == nullptr || b == nullptr || a_size != b_size) return INFINITY;
    if (types[i].dtype == runner::npy::DType::kFloat32) {
      worst = std::max(worst, max_abs_diff_f32(a, b, a_size));
    } else if (std::memcmp(a, b, a_size) != 0) {
      return INFINITY;
    }
  }
  return worst;
}

int serve(const fs::path& path, const std::vector<std::string>& wanted) {
  Sides sides(path);
  std::map<std::string, std::string> failed;  // variant -> why it could not be loaded
  auto wants = [&](const std::string& name) { return std::find(wanted.begin(), wanted.end(), name) != wanted.end(); };
  try {
    if (wants("native") || wants("native-rebind")) add_native(sides, wants("native-rebind"));
    // ExecuTorch's own OpenVINO delegate opens OPENVINO_LIB_PATH as a file (ours also takes a folder),
    // and is loaded before ours so that it keeps its backend name.
    pin_openvino_library_file();
    if (wants("et-openvino")) load_backend_library("libexecutorch_backend_openvino.so");
    our_library();
    const std::string holder = openvino_backend_holder();
    const bool upstream_on_ours = holder == our_library().path ||
                                  (holder != "unknown" && fs::exists(holder) && fs::equivalent(holder, our_library().path));
    for (const ProgramVariant& program : kProgramVariants) {
      if (!wants(program.name)) continue;
      // A program that does not load is reported and left out; the others are still measured.
      try {
        if (std::string(program.name) == "ours-upstream" && !upstream_on_ours) {
          throw std::runtime_error("ExecuTorch's own OpenVINO delegate holds its backend name in this process");
        }
        if (std::string(program.name) == "et-openvino" && upstream_on_ours) {
          throw std::runtime_error("our delegate holds the OpenvinoBackend name, so it would run this program");
        }
        if (program.library != nullptr) load_backend_library(program.library);
        // Variants of one program share it (ours, ours-set-inputs), unless run by another delegate.
        const std::string key = program.library != nullptr ? program.pte + std::string("@") + program.library
                                                           : std::string(program.pte);
        double load_ms = 0;
        if (sides.programs.count(key) == 0) {
          const Clock::time_point start = Clock::now();
          std::unique_ptr<ProgramRunner> runner = load_program(sides.folder, program.pte, program.loader);
          load_ms = elapsed_ms(start);
          sides.programs[key] = std::move(runner);
        }
        sides.variants[program.name] = program_variant(sides.programs[key].get(), program.set_inputs, load_ms);
      } catch (const std::exception& error) {
        failed[program.name] = error.what();
      }
    }
    for (const std::string& name : wanted) {
      if (sides.variants.count(name) == 0 && failed.count(name) == 0) throw UsageError("unknown variant " + name);
    }
  } catch (const std::exception& error) {
    std::cout << "{\"error\": " << json_string(error.what()) << "}" << std::endl;
    return 1;
  }
  std::cout << "{\"ready\": true, \"load_ms\": {";
  bool first = true;
  for (const auto& [name, variant] : sides.variants) {
    std::cout << (first ? "" : ", ") << json_string(name) << ": " << json_number(variant.load_ms);
    first = false;
  }
  std::cout << "}, \"openvino_backend_holder\": " << json_string(openvino_backend_holder()) << ", \"failed\": {";
  first = true;
  for (const auto& [name, why] : failed) {
    std::cout << (first ? "" : ", ") << json_string(name) << ": " << json_string(why);
    first = false;
  }
  std::cout << "}}" << std::endl;

  std::vector<int64_t> samples;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string command, name;
    long count = 0;
    words >> command >> name >> count;
    if (command == "quit") break;
    if (command == "check") {
      std::cout << "{";
      const auto native_found = sides.variants.find("native");
      const auto native_output = [&](size_t i) -> std::pair<const uint8_t*, size_t> {
        if (native_found == sides.variants.end()) return {nullptr, 0};
        return native_found->second.output(i);
      };
      const auto reference = [&](size_t i) -> std::pair<const uint8_t*, size_t> {
        if (i >= sides.folder.reference_outputs.size()) return {nullptr, 0};
        const auto& data = sides.folder.reference_outputs[i].data;
        return {data.data(), data.size()};
      };
      // Every variant runs before any is compared: outputs stay in each variant's own buffers.
      // Twice: a program's first call checks whether its inputs survive a call (see ProgramRunner).
      std::map<std::string, bool> ran;
      for (const auto& [variant_name, variant] : sides.variants) ran[variant_name] = variant.call() && variant.call();
      bool first_variant = true;
      for (const auto& [variant_name, variant] : sides.variants) {
        std::cout << (first_variant ? "" : ", ") << json_string(variant_name)
                  << ": {\"ran\": " << (ran[variant_name] ? "true" : "false")
                  << ", \"vs_native\": " << json_number(compare(variant, native_output, sides.folder.reference_outputs))
                  << ", \"vs_eager\": " << json_number(compare(variant, reference, sides.folder.reference_outputs))
                  << ", \"sets_inputs_every_call\": " << (variant.sets_inputs_every_call() ? "true" : "false")
                  << (ran[variant_name] ? "" : ", \"failure\": " + json_string(variant.failure())) << "}";
        first_variant = false;
      }
      std::cout << "}" << std::endl;
      continue;
    }
    const auto found = sides.variants.find(name);
    if (found == sides.variants.end() || count < 1 || (command != "time" && command != "allocs")) {
      std::cout << "{\"error\": " << json_string("bad command: " + line) << "}" << std::endl;
      continue;
    }
    const Variant& variant = found->second;
    if (command == "time") {
      samples.clear();
      samples.reserve(static_cast<size_t>(count));
      bool ok = true;
      for (long i = 0; i < count && ok; ++i) {
        const Clock::time_point start = Clock::now();
        ok = variant.call();
        samples.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
      }
      if (!ok) {
        std::cout << "{\"error\": " << json_string(name + ": " + variant.failure()) << "}" << std::endl;
        continue;
      }
      std::cout << "{\"ns\": [";
      for (size_t i = 0; i < samples.size(); ++i) std::cout << (i ? "," : "") << samples[i];
      std::cout << "]}" << std::endl;
    } else {
      variant.call();  // not counted: a first call after another variant may (re)bind
      t_this_thread = 0;
      g_all_threads = 0;
      t_counting = true;
      g_counting = true;
      bool ok = true;
      for (long i = 0; i < count && ok; ++i) ok = variant.call();
      g_counting = false;
      t_counting = false;
      std::cout << "{\"calls\": " << count << ", \"this_thread\": " << t_this_thread
                << ", \"all_threads\": " << g_all_threads.load() << (ok ? "" : ", \"failed\": true") << "}" << std::endl;
    }
  }
  return 0;
}

// ---- load ----------------------------------------------------------------------------------------

struct LoadOptions {
  std::string side;
  bool preopen = false;
  std::optional<fs::path> cache;
  int runs = 3;
  ProgramRunner::Loader loader = ProgramRunner::Loader::kFile;
  bool loader_given = false;
  bool scribble_model_bytes = false;  // native sides: see NativeRunner::scribble_model_bytes
};

const ProgramVariant* find_program_variant(const std::string& name) {
  for (const ProgramVariant& program : kProgramVariants) {
    if (name == program.name) return &program;
  }
  return nullptr;
}

int load(const fs::path& path, const LoadOptions& options) {
  const Folder folder(path);
  const bool native_side = options.side.rfind("native", 0) == 0;
  const ProgramVariant* program_side = find_program_variant(options.side);
  if (!native_side && program_side == nullptr) throw UsageError("unknown side " + options.side);
  CompileSetup setup = folder.setup;
  if (options.cache) {
    // Native: CACHE_DIR with the other properties; ours: the variable its load-time defaults read.
    if (native_side) setup.properties.push_back({"CACHE_DIR", options.cache->string()});
    setenv("EXECUTORCH_OPENVINO_CACHE_DIR", options.cache->c_str(), 1);
  }
  if (program_side != nullptr && program_side->library != nullptr) {
    // ExecuTorch's OpenVINO delegate needs OPENVINO_LIB_PATH to name the file (this opens the runtime
    // library, as its own init would).
    pin_openvino_library_file();
    load_backend_library(program_side->library);
  }
  // Ours only where it runs the program: a native process holds OpenVINO and nothing of ours.
  const bool ours_side = options.side.rfind("ours", 0) == 0;
  if (ours_side) our_library();
  std::unique_ptr<NativeTensors> tensors;
  if (native_side) tensors = std::make_unique<NativeTensors>(folder);

  // With --preopen the runtime library, one core and its devices are ready before the clock starts,
  // the same work for every side (ours through its own copy of the runtime layer), so the timed part
  // is the model's load alone. Without it, a first load in a process is timed, runtime included.
  double preopen_ms = 0, runtime_ms = NAN, core_ms = NAN, devices_ms = NAN;
  if (options.preopen) {
    const Clock::time_point start = Clock::now();
    if (ours_side) {
      const std::string description = our_library().describe_runtime();
      if (description.find("loaded=1") == std::string::npos) throw std::runtime_error(description);
    } else {
      // Timed step by step: a delegate that does not share its core pays the last two per model.
      ov::Runtime& runtime = runtime_or_throw();
      runtime_ms = elapsed_ms(start);
      Clock::time_point step = Clock::now();
      if (!runtime.core().ok()) throw std::runtime_error("creating an OpenVINO core failed");
      core_ms = elapsed_ms(step);
      step = Clock::now();
      if (!runtime.available_devices().ok()) throw std::runtime_error("listing OpenVINO's devices failed");
      devices_ms = elapsed_ms(step);
    }
    preopen_ms = elapsed_ms(start);
  }

  const long rss_before = status_kb("VmRSS");
  const bool reset = reset_peak();
  Clock::time_point start = Clock::now();
  std::unique_ptr<NativeRunner> native;
  std::unique_ptr<ProgramRunner> program;
  if (native_side) {
    native = std::make_unique<NativeRunner>(runtime_or_throw(), native_model(folder, options.side), setup,
                                            pointers(tensors->inputs),
                                            pointers(tensors->outputs), path.filename().string());
  } else {
    program = load_program(folder, program_side->pte, options.loader_given ? options.loader : program_side->loader);
  }
  const double load_ms = elapsed_ms(start);
  const long rss_after_load = status_kb("VmRSS");
  const long peak_load = status_kb("VmHWM");
  const size_t scribbled = options.scribble_model_bytes && native ? native->scribble_model_bytes() : 0;

  const Variant loaded = native ? native_variant(native.get(), tensors.get(), folder.native_outputs)
                                : program_variant(program.get(), false, load_ms);
  start = Clock::now();
  if (!loaded.call()) throw std::runtime_error("first run failed: " + loaded.failure());
  const double first_ms = elapsed_ms(start);
  std::vector<double> runs;
  for (int i = 0; i < options.runs; ++i) {
    start = Clock::now();
    if (!loaded.call()) throw std::runtime_error("run failed: " + loaded.failure());
    runs.push_back(elapsed_ms(start));
  }
  std::sort(runs.begin(), runs.end());
  const long peak_run = status_kb("VmHWM");
  // The outputs against eager PyTorch's: shows, e.g., that a model imported from the cache still
  // computes in the precision it was compiled for.
  const double vs_eager = compare(loaded, [&](size_t i) -> std::pair<const uint8_t*, size_t> {
    return {folder.reference_outputs[i].data.data(), folder.reference_outputs[i].data.size()};
  }, folder.reference_outputs);
  std::cout << "{\"side\": " << json_string(options.side) << ", \"preopen\": " << (options.preopen ? "true" : "false")
            << ", \"preopen_ms\": " << json_number(preopen_ms) << ", \"runtime_ms\": " << json_number(runtime_ms)
            << ", \"core_ms\": " << json_number(core_ms) << ", \"devices_ms\": " << json_number(devices_ms)
            << ", \"load_ms\": " << json_number(load_ms)
            << ", \"first_ms\": " << json_number(first_ms)
            << ", \"run_ms\": " << json_number(runs.empty() ? NAN : runs[runs.size() / 2])
            << ", \"rss_before_kb\": " << rss_before << ", \"rss_after_load_kb\": " << rss_after_load
            << ", \"peak_load_kb\": " << peak_load << ", \"peak_run_kb\": " << peak_run
            << ", \"reset\": " << (reset ? "true" : "false") << ", \"vs_eager\": " << json_number(vs_eager)
            << ", \"scribbled_bytes\": " << scribbled
            << ", \"sets_inputs_every_call\": " << (loaded.sets_inputs_every_call() ? "true" : "false") << "}"
            << std::endl;
  return 0;
}

int export_compiled(const fs::path& path, const fs::path& out) {
  const Folder folder(path);
  NativeTensors tensors(folder);
  NativeRunner native(runtime_or_throw(), native_model(folder, "native"), folder.setup,
                      pointers(tensors.inputs), pointers(tensors.outputs),
                      path.filename().string());
  native.export_to(out);
  return 0;
}

int run(int argc, char** argv) {
  if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) throw UsageError("");
  if (argc < 3) throw UsageError("a mode and a model folder are required");
  const std::string mode = argv[1];
  const fs::path folder = argv[2];
  default_openvino_library_path();  // for every side
  executorch::runtime::runtime_init();
  if (mode == "export") {
    if (argc != 4) throw UsageError("export takes DIR and OUT");
    return export_compiled(folder, argv[3]);
  }
  std::vector<std::string> variants = {"native", "ours"};
  LoadOptions options;
  for (int i = 3; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--variants") {
      variants = split_list(value());
    } else if (flag == "--side") {
      options.side = value();
    } else if (flag == "--preopen") {
      options.preopen = true;
    } else if (flag == "--cache") {
      options.cache = fs::path(value());
    } else if (flag == "--runs") {
      options.runs = std::stoi(value());
    } else if (flag == "--scribble-model-bytes") {
      options.scribble_model_bytes = true;
    } else if (flag == "--loader") {
      options.loader = loader_from_name(value());
      options.loader_given = true;
    } else {
      throw UsageError("unknown option " + flag);
    }
  }
  if (mode == "serve") return serve(folder, variants);
  if (mode == "load") {
    if (options.side.empty()) throw UsageError("load needs --side");
    return load(folder, options);
  }
  throw UsageError("unknown mode " + mode);
}

}  // namespace
}  // namespace executorch_openvino::bench

int main(int argc, char** argv) {
  return executorch_openvino::bench::main_reporting_errors(argc, argv, executorch_openvino::bench::run,
                                                           executorch_openvino::bench::kUsage);
}
