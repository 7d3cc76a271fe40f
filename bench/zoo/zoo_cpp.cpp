// bench_zoo_cpp: the C++ side of the model zoo (bench/zoo/zoo.py). For one model folder written by
// zoo.py it runs native OpenVINO from C++ (the limit), our delegate through BackendInterface alone and
// inside an ExecuTorch program, XNNPACK and ExecuTorch's own OpenVINO delegate, in one of three modes:
//
//   serve DIR [--variants LIST]   load the variants (one that fails to load is reported and left out),
//                                 then obey commands on stdin, one line each, and answer each with
//                                 one JSON line on stdout, so that zoo.py can interleave blocks of
//                                 C++ calls with its Python variants:
//                                   time VARIANT N [S]  N calls (or, N 0, calls for S seconds), each
//                                                       timed alone -> {"ns": [...]}
//                                   allocs VARIANT N    heap allocations over N calls
//                                   check               outputs compared with native's and eager's
//                                   quit
//   load DIR --side SIDE [...]    one load in this (fresh) process: time, resident memory, first run
//   export DIR OUT                compile natively and write the compiled model (--side native-import)
//
// The folder: model.xml and model.bin (the IR our delegate got) and native.txt (device, properties,
// the method inputs feeding the IR and the method output each IR output is); delegate.bin (our
// delegate's blob) and delegate.txt (its compile specs and the call's arguments); input<i>.npy (the
// method's inputs), output<i>.npy (eager PyTorch's outputs), and the programs that lowered: ours.pte,
// ours_bf16.pte, xnnpack.pte and et_openvino.pte (ExecuTorch's own OpenVINO delegate).
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

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/runtime.h>
#include <executorch_openvino/backend.h>

#include "delegate_runner.h"
#include "native_runner.h"
#include "program_runner.h"
#include "runner/npy.h"

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
    "usage: bench_zoo_cpp serve DIR [--variants native,native-rebind,delegate,ours,ours-set-inputs,xnnpack,\n"
    "                                             et-openvino,ours-bf16,ours-upstream]\n"
    "       bench_zoo_cpp load DIR --side native|native-import|ours|xnnpack|et-openvino|ours-upstream\n"
    "                     [--preopen] [--cache DIR] [--runs N]\n"
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
    default: throw std::runtime_error(std::string("no tensor type for .npy dtype ") + runner::npy::descr(dtype));
  }
}

openvino_api::ElementType element_type_of(runner::npy::DType dtype) {
  switch (dtype) {
    case runner::npy::DType::kFloat32: return openvino_api::ElementType::kF32;
    case runner::npy::DType::kInt64: return openvino_api::ElementType::kI64;
    case runner::npy::DType::kInt32: return openvino_api::ElementType::kI32;
    case runner::npy::DType::kBool: return openvino_api::ElementType::kBoolean;
    case runner::npy::DType::kUInt8: return openvino_api::ElementType::kU8;
    default: throw std::runtime_error(std::string("no OpenVINO type for .npy dtype ") + runner::npy::descr(dtype));
  }
}

std::vector<std::string> numbered_files(const fs::path& folder, const std::string& stem) {
  std::vector<std::string> files;
  for (int i = 0; fs::exists(folder / (stem + std::to_string(i) + ".npy")); ++i) {
    files.push_back((folder / (stem + std::to_string(i) + ".npy")).string());
  }
  return files;
}

// A side's tensors: the inputs read from the files, outputs shaped like eager's (each side writes its own).
struct Arrays {
  std::vector<runner::npy::Array> inputs, outputs;
  std::vector<size_t> output_positions;  // per output, the method output it is
};

struct Folder {
  fs::path path;
  std::string device = "CPU";
  std::vector<openvino_api::Property> properties;
  std::vector<std::pair<std::string, std::string>> specs;  // the delegate's compile specs
  std::vector<std::string> method_inputs;                  // .npy files in the method's input order
  std::vector<runner::npy::Array> reference_outputs;       // eager PyTorch's
  std::vector<std::string> native_inputs, delegate_inputs;  // .npy files of the IR's inputs, the call's
  std::vector<size_t> native_outputs, delegate_outputs;     // the method output each output is

  explicit Folder(const fs::path& folder) : path(folder) {
    read_lines("native.txt", native_inputs, native_outputs);
    read_lines("delegate.txt", delegate_inputs, delegate_outputs);
    method_inputs = numbered_files(folder, "input");
    for (const std::string& file : numbered_files(folder, "output")) reference_outputs.push_back(runner::npy::read(file));
    for (size_t position : native_outputs) {
      if (position >= reference_outputs.size()) throw std::runtime_error("native.txt names a missing output");
    }
  }

  void read_lines(const char* name, std::vector<std::string>& inputs, std::vector<size_t>& outputs) {
    std::ifstream spec(path / name);
    if (!spec) throw std::runtime_error(std::string("no ") + name + " in " + path.string() + " (bench/zoo/zoo.py writes it)");
    std::string line;
    while (std::getline(spec, line)) {
      std::istringstream fields(line);
      std::string kind, key, value;
      fields >> kind >> key >> value;
      if (kind == "device") device = key;
      if (kind == "property") properties.push_back({key, value});
      if (kind == "spec") specs.emplace_back(key, from_hex(value));
      if (kind == "input") inputs.push_back((path / key).string());
      if (kind == "output") outputs.push_back(std::stoul(key));
    }
  }

  static std::string from_hex(const std::string& hex) {
    std::string bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return bytes;
  }

  Arrays arrays(const std::vector<std::string>& input_files, const std::vector<size_t>& output_positions) const {
    Arrays made{{}, {}, output_positions};
    for (const std::string& file : input_files) made.inputs.push_back(runner::npy::read(file));
    for (size_t position : output_positions) {
      runner::npy::Array out = reference_outputs.at(position);
      std::fill(out.data.begin(), out.data.end(), 0);
      made.outputs.push_back(std::move(out));
    }
    return made;
  }
};

std::vector<HostBuffer> host_buffers(std::vector<runner::npy::Array>& arrays) {
  std::vector<HostBuffer> buffers;
  for (runner::npy::Array& array : arrays) buffers.push_back({element_type_of(array.dtype), array.shape, array.data.data()});
  return buffers;
}

std::vector<DelegateArgument> delegate_arguments(std::vector<runner::npy::Array>& arrays) {
  std::vector<DelegateArgument> arguments;
  for (runner::npy::Array& array : arrays) {
    arguments.push_back({scalar_type_of(array.dtype), std::vector<int32_t>(array.shape.begin(), array.shape.end()),
                         array.data.data()});
  }
  return arguments;
}

// The model as an application would hand it to OpenVINO, read from the folder (inside the timed
// load: reading the files is part of a native load as reading the .pte is part of ours).
NativeModel native_model(const Folder& folder, const std::string& side) {
  if (side == "native") return {false, read_file(folder.path / "model.xml"), read_file(folder.path / "model.bin")};
  if (side == "native-import") return {true, {}, read_file(folder.path / "native.exported")};
  throw std::runtime_error("not a native side: " + side);
}

// Our delegate, opened at run time rather than linked. Linked, it would register before ExecuTorch's
// own OpenVINO delegate could, and it takes that delegate's backend name too ("OpenvinoBackend")
// when the name is free, so ExecuTorch's programs would run on ours. Opened after that library, it
// leaves the name to it. EXECUTORCH_OPENVINO_LIBRARY overrides the build's library, as in Python.
struct OurLibrary {
  std::string path;
  const char* (*describe_runtime)() = nullptr;
  const char* (*backend_library)(const char*) = nullptr;
};

const OurLibrary& our_library() {
  static const OurLibrary library = [] {
    OurLibrary opened;
    const char* configured = std::getenv("EXECUTORCH_OPENVINO_LIBRARY");
    opened.path = configured != nullptr && configured[0] != '\0' ? configured : EOV_BENCH_DELEGATE_LIBRARY;
    void* handle = dlopen(opened.path.c_str(), RTLD_NOW | RTLD_GLOBAL);  // GLOBAL: ours_last_error finds it
    if (handle == nullptr) throw std::runtime_error("cannot load " + opened.path + ": " + dlerror());
    const auto status = reinterpret_cast<int (*)()>(dlsym(handle, "executorch_openvino_registration_status"));
    opened.describe_runtime = reinterpret_cast<const char* (*)()>(dlsym(handle, "executorch_openvino_describe_runtime"));
    opened.backend_library =
        reinterpret_cast<const char* (*)(const char*)>(dlsym(handle, "executorch_openvino_backend_library"));
    if (status == nullptr || opened.describe_runtime == nullptr || opened.backend_library == nullptr) {
      throw std::runtime_error(opened.path + " is not our delegate");
    }
    if (const int code = status(); code != 0) {
      throw std::runtime_error("registering our backend failed with ExecuTorch error " + std::to_string(code));
    }
    return opened;
  }();
  return library;
}

// The library whose backend runs programs of ExecuTorch's own OpenVINO delegate.
std::string openvino_backend_holder() { return our_library().backend_library("OpenvinoBackend"); }

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
  const char* library;  // nullptr: ours (opened) or none
  ProgramRunner::Loader loader;
  bool set_inputs;
};
const ProgramVariant kProgramVariants[] = {
    // The file loader, as executorch-openvino-run uses.
    {"ours", "ours.pte", nullptr, ProgramRunner::Loader::kFile, false},
    {"ours-set-inputs", "ours.pte", nullptr, ProgramRunner::Loader::kFile, true},
    {"xnnpack", "xnnpack.pte", "libexecutorch_backend_xnnpack.so", ProgramRunner::Loader::kFile, false},
    // One buffer for the whole program: ExecuTorch's own OpenVINO delegate frees its segment right
    // after ov_core_import_model, and OpenVINO 2026 keeps reading the weights from it (with the file
    // loader that is a use after free: docs/performance.md).
    {"et-openvino", "et_openvino.pte", "libexecutorch_backend_openvino.so", ProgramRunner::Loader::kBuffer, false},
    {"ours-bf16", "ours_bf16.pte", nullptr, ProgramRunner::Loader::kFile, false},
    // ExecuTorch's own delegate's program run by ours (registered under its name when that library is
    // not in the process).
    {"ours-upstream", "et_openvino.pte", nullptr, ProgramRunner::Loader::kFile, false},
};

const ProgramVariant* find_program_variant(const std::string& name) {
  for (const ProgramVariant& program : kProgramVariants) {
    if (name == program.name) return &program;
  }
  return nullptr;
}

// ExecuTorch's own delegate opens OPENVINO_LIB_PATH as a file (or "libopenvino_c.so", which the pip
// wheel does not have); ours also takes a folder. Point both at the file our layer resolves.
void pin_openvino_library_file() {
  const fs::path library = runtime_or_throw().library_path();
  setenv("OPENVINO_LIB_PATH", library.c_str(), 1);
}

// ---- Variants ------------------------------------------------------------------------------------

struct Variant {
  std::function<bool()> call;
  std::function<std::string()> failure;
  std::function<bool()> sets_inputs_every_call = [] { return false; };
  // Output i of the method as bytes (null when the variant does not produce it).
  std::function<std::pair<const uint8_t*, size_t>(size_t)> output;
  double load_ms = 0;
};

// Output i of the method, from a side's own arrays.
std::function<std::pair<const uint8_t*, size_t>(size_t)> array_output(Arrays* arrays) {
  return [arrays](size_t i) -> std::pair<const uint8_t*, size_t> {
    for (size_t k = 0; k < arrays->output_positions.size(); ++k) {
      if (arrays->output_positions[k] == i) return {arrays->outputs[k].data.data(), arrays->outputs[k].data.size()};
    }
    return {nullptr, 0};
  };
}

Variant native_variant(NativeRunner* native, Arrays* arrays, bool rebinding) {
  Variant variant;
  variant.call = rebinding ? std::function<bool()>([native] { return native->run_rebinding(); })
                           : std::function<bool()>([native] { return native->run(); });
  variant.failure = [native] { return native->failure(); };
  variant.output = array_output(arrays);
  return variant;
}

Variant program_variant(ProgramRunner* program, bool setting_inputs, double load_ms) {
  Variant variant;
  variant.call = setting_inputs ? std::function<bool()>([program] { return program->run_setting_inputs(); })
                                : std::function<bool()>([program] { return program->run(); });
  variant.failure = [program] { return program->failure(); };
  variant.output = [program](size_t i) {
    return i < program->output_count() ? program->output_bytes(i) : std::pair<const uint8_t*, size_t>{nullptr, 0};
  };
  variant.sets_inputs_every_call = [program, setting_inputs] { return setting_inputs || program->sets_inputs_every_call(); };
  variant.load_ms = load_ms;
  return variant;
}

// Everything serve (or load) made, kept alive while its variants run.
struct Sides {
  Folder folder;
  Arrays native_arrays, delegate_arrays;
  std::unique_ptr<NativeRunner> native;
  std::unique_ptr<DelegateRunner> delegate;
  std::map<std::string, std::unique_ptr<ProgramRunner>> programs;  // by .pte file (and delegate library)
  std::map<std::string, Variant> variants;

  explicit Sides(const fs::path& path) : folder(path) {}

  void add_native(const std::string& side, const std::vector<openvino_api::Property>& properties) {
    const Clock::time_point start = Clock::now();
    native_arrays = folder.arrays(folder.native_inputs, folder.native_outputs);
    native = std::make_unique<NativeRunner>(runtime_or_throw(), native_model(folder, side), folder.device, properties,
                                            host_buffers(native_arrays.inputs), host_buffers(native_arrays.outputs));
    variants["native"] = native_variant(native.get(), &native_arrays, false);
    variants["native"].load_ms = elapsed_ms(start);
    variants["native-rebind"] = native_variant(native.get(), &native_arrays, true);
  }

  void add_delegate() {
    our_library();
    executorch::runtime::BackendInterface* backend = executorch::runtime::get_backend_class(EXECUTORCH_OPENVINO_BACKEND_ID);
    if (backend == nullptr) throw std::runtime_error("no backend " EXECUTORCH_OPENVINO_BACKEND_ID " is registered");
    const Clock::time_point start = Clock::now();
    delegate_arrays = folder.arrays(folder.delegate_inputs, folder.delegate_outputs);
    delegate = std::make_unique<DelegateRunner>(backend, read_file(folder.path / "delegate.bin"), folder.specs,
                                                delegate_arguments(delegate_arrays.inputs),
                                                delegate_arguments(delegate_arrays.outputs));
    Variant variant;
    DelegateRunner* runner = delegate.get();
    variant.call = [runner] { return runner->run(); };
    variant.failure = [] { return ours_last_error(); };
    variant.output = array_output(&delegate_arrays);
    variant.load_ms = elapsed_ms(start);
    variants["delegate"] = variant;
  }

  void add_program(const ProgramVariant& program) {
    if (program.library != nullptr) load_backend_library(program.library);
    // Variants of one program share it (ours, ours-set-inputs), unless run by another delegate.
    const std::string key = program.library != nullptr ? program.pte + std::string("@") + program.library
                                                       : std::string(program.pte);
    double load_ms = 0;
    if (programs.count(key) == 0) {
      const Clock::time_point start = Clock::now();
      programs[key] = std::make_unique<ProgramRunner>(folder.path / program.pte, program.loader, folder.method_inputs);
      load_ms = elapsed_ms(start);
    }
    variants[program.name] = program_variant(programs[key].get(), program.set_inputs, load_ms);
  }
};

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

// ---- serve ---------------------------------------------------------------------------------------

void print_check(Sides& sides) {
  const auto native_found = sides.variants.find("native");
  const auto native_output = [&](size_t i) -> std::pair<const uint8_t*, size_t> {
    return native_found == sides.variants.end() ? std::pair<const uint8_t*, size_t>{nullptr, 0}
                                                : native_found->second.output(i);
  };
  const auto reference = [&](size_t i) -> std::pair<const uint8_t*, size_t> {
    const auto& data = sides.folder.reference_outputs.at(i).data;
    return {data.data(), data.size()};
  };
  // Every variant runs before any is compared: outputs stay in each variant's own buffers. Twice: a
  // program's first call checks whether its inputs survive it (see ProgramRunner).
  std::map<std::string, bool> ran;
  for (const auto& [name, variant] : sides.variants) ran[name] = variant.call() && variant.call();
  std::cout << "{";
  bool first = true;
  for (const auto& [name, variant] : sides.variants) {
    std::cout << (first ? "" : ", ") << json_string(name) << ": {\"ran\": " << (ran[name] ? "true" : "false")
              << ", \"vs_native\": " << json_number(compare(variant, native_output, sides.folder.reference_outputs))
              << ", \"vs_eager\": " << json_number(compare(variant, reference, sides.folder.reference_outputs))
              << ", \"sets_inputs_every_call\": " << (variant.sets_inputs_every_call() ? "true" : "false")
              << (ran[name] ? "" : ", \"failure\": " + json_string(variant.failure())) << "}";
    first = false;
  }
  std::cout << "}" << std::endl;
}

void print_times(const std::string& name, const Variant& variant, long count, double seconds) {
  std::vector<int64_t> samples;
  samples.reserve(count > 0 ? static_cast<size_t>(count) : 1 << 16);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  bool ok = true;
  while (ok && (count > 0 ? static_cast<long>(samples.size()) < count : samples.empty() || Clock::now() < deadline)) {
    const Clock::time_point start = Clock::now();
    ok = variant.call();
    samples.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
  }
  if (!ok) {
    std::cout << "{\"error\": " << json_string(name + ": " + variant.failure()) << "}" << std::endl;
    return;
  }
  std::cout << "{\"ns\": [";
  for (size_t i = 0; i < samples.size(); ++i) std::cout << (i ? "," : "") << samples[i];
  std::cout << "]}" << std::endl;
}

void print_allocations(const Variant& variant, long count) {
  variant.call();  // not counted: a first call after another variant may (re)bind
  t_this_thread = 0;
  g_all_threads = 0;
  t_counting = true;
  g_counting = true;
  bool ok = true;
  for (long i = 0; i < count && ok; ++i) ok = variant.call();
  g_counting = false;
  t_counting = false;
  std::cout << "{\"calls\": " << count << ", \"this_thread\": " << t_this_thread << ", \"all_threads\": "
            << g_all_threads.load() << (ok ? "" : ", \"failed\": true") << "}" << std::endl;
}

int serve(const fs::path& path, const std::vector<std::string>& wanted) {
  Sides sides(path);
  std::map<std::string, std::string> failed;  // variant -> why it could not be loaded
  auto wants = [&](const std::string& name) { return std::find(wanted.begin(), wanted.end(), name) != wanted.end(); };
  auto attempt = [&](const std::string& name, const std::function<void()>& add) {
    try {  // a variant that does not load is reported and left out; the others are still measured
      add();
    } catch (const std::exception& error) {
      failed[name] = error.what();
    }
  };
  try {
    if (wants("native") || wants("native-rebind")) attempt("native", [&] { sides.add_native("native", sides.folder.properties); });
    // ExecuTorch's own OpenVINO delegate is loaded before ours so that it keeps its backend name.
    pin_openvino_library_file();
    if (wants("et-openvino")) load_backend_library("libexecutorch_backend_openvino.so");
    our_library();
    const std::string holder = openvino_backend_holder();
    const bool upstream_on_ours = holder == our_library().path ||
                                  (fs::exists(holder) && fs::equivalent(holder, our_library().path));
    if (wants("delegate")) attempt("delegate", [&] { sides.add_delegate(); });
    for (const ProgramVariant& program : kProgramVariants) {
      if (!wants(program.name)) continue;
      attempt(program.name, [&] {
        if (std::string(program.name) == "ours-upstream" && !upstream_on_ours) {
          throw std::runtime_error("ExecuTorch's own OpenVINO delegate holds its backend name in this process");
        }
        if (std::string(program.name) == "et-openvino" && upstream_on_ours) {
          throw std::runtime_error("our delegate holds the OpenvinoBackend name, so it would run this program");
        }
        sides.add_program(program);
      });
    }
    for (const std::string& name : wanted) {
      if (sides.variants.count(name) == 0 && failed.count(name) == 0 && !(name == "native-rebind" && failed.count("native"))) {
        throw UsageError("unknown variant " + name);
      }
    }
    for (auto it = sides.variants.begin(); it != sides.variants.end();) it = wants(it->first) ? std::next(it) : sides.variants.erase(it);
  } catch (const std::exception& error) {
    std::cout << "{\"error\": " << json_string(error.what()) << "}" << std::endl;
    return 1;
  }
  std::cout << "{\"ready\": true, \"openvino_backend_holder\": " << json_string(openvino_backend_holder())
            << ", \"failed\": {";
  bool first = true;
  for (const auto& [name, why] : failed) {
    std::cout << (first ? "" : ", ") << json_string(name) << ": " << json_string(why);
    first = false;
  }
  std::cout << "}}" << std::endl;

  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string command, name;
    long count = 0;
    double seconds = 0;
    words >> command >> name >> count >> seconds;
    if (command == "quit") break;
    if (command == "check") {
      print_check(sides);
      continue;
    }
    const auto found = sides.variants.find(name);
    if (found == sides.variants.end() || (count < 1 && !(command == "time" && seconds > 0)) ||
        (command != "time" && command != "allocs")) {
      std::cout << "{\"error\": " << json_string("bad command: " + line) << "}" << std::endl;
    } else if (command == "time") {
      print_times(name, found->second, count, seconds);
    } else {
      print_allocations(found->second, count);
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
};

int load(const fs::path& path, const LoadOptions& options) {
  Sides sides(path);
  const bool native_side = options.side.rfind("native", 0) == 0;
  const ProgramVariant* program_side = find_program_variant(options.side);
  if (!native_side && program_side == nullptr) throw UsageError("unknown side " + options.side);
  std::vector<openvino_api::Property> properties = sides.folder.properties;
  if (options.cache) {
    // Native: CACHE_DIR with the other properties; ours: the variable its load-time defaults read.
    if (native_side) properties.push_back({"CACHE_DIR", options.cache->string()});
    setenv("EXECUTORCH_OPENVINO_CACHE_DIR", options.cache->c_str(), 1);
  }
  if (program_side != nullptr && program_side->library != nullptr) pin_openvino_library_file();
  // Ours only where it runs the program: a native process holds OpenVINO and nothing of ours.
  const bool ours_side = options.side.rfind("ours", 0) == 0;
  if (ours_side) our_library();

  // With --preopen the runtime library, one core and its devices are ready before the clock starts,
  // the same work for every side (ours through its own copy of the runtime layer), so the timed part
  // is the model's load alone.
  if (options.preopen) {
    if (ours_side) {
      const std::string description = our_library().describe_runtime();
      if (description.find("loaded=1") == std::string::npos) throw std::runtime_error(description);
    } else if (!runtime_or_throw().core().ok() || !runtime_or_throw().available_devices().ok()) {
      throw std::runtime_error("opening OpenVINO's core and devices failed");
    }
  }

  const long rss_before = status_kb("VmRSS");
  const bool reset = reset_peak();
  const Clock::time_point start = Clock::now();
  if (native_side) {
    sides.add_native(options.side, properties);
  } else {
    sides.add_program(*program_side);
  }
  const double load_ms = elapsed_ms(start);
  const long peak_load = status_kb("VmHWM");
  const Variant& loaded = sides.variants.at(native_side ? "native" : options.side);
  if (!loaded.call()) throw std::runtime_error("first run failed: " + loaded.failure());
  for (int i = 0; i < options.runs; ++i) {
    if (!loaded.call()) throw std::runtime_error("run failed: " + loaded.failure());
  }
  const long peak_run = status_kb("VmHWM");
  // The outputs against eager PyTorch's: shows, e.g., that a model imported from the cache still
  // computes in the precision it was compiled for.
  const double vs_eager = compare(loaded, [&](size_t i) -> std::pair<const uint8_t*, size_t> {
    return {sides.folder.reference_outputs[i].data.data(), sides.folder.reference_outputs[i].data.size()};
  }, sides.folder.reference_outputs);
  std::cout << "{\"side\": " << json_string(options.side) << ", \"load_ms\": " << json_number(load_ms)
            << ", \"rss_before_kb\": " << rss_before << ", \"peak_load_kb\": " << peak_load
            << ", \"peak_run_kb\": " << peak_run << ", \"reset\": " << (reset ? "true" : "false")
            << ", \"vs_eager\": " << json_number(vs_eager) << "}" << std::endl;
  return 0;
}

int export_compiled(const fs::path& path, const fs::path& out) {
  Sides sides(path);
  sides.add_native("native", sides.folder.properties);
  sides.native->export_to(out.string());
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
