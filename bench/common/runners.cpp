#include "runners.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include <dlfcn.h>

#include <executorch_openvino/backend.h>

#include "blob/delegate_blob.h"

namespace executorch_openvino::bench {
namespace {

using executorch::aten::ScalarType;

template <typename T>
T value_or_throw(Outcome<T> outcome, const std::string& what) {
  if (!outcome.ok()) throw std::runtime_error(what + ": " + outcome.failure().message);
  return std::move(outcome).value();
}

// The dtypes the case files use (see testing::scalar_type_from_name).
ov::ElementType element_type_of(ScalarType type) {
  switch (type) {
    case ScalarType::Float: return ov::ElementType::kF32;
    case ScalarType::Long: return ov::ElementType::kI64;
    case ScalarType::Int: return ov::ElementType::kI32;
    case ScalarType::Bool: return ov::ElementType::kBoolean;
    case ScalarType::Byte: return ov::ElementType::kU8;
    default: throw std::runtime_error("dtype without an OpenVINO counterpart in the benchmark");
  }
}

// OpenVINO calls only the benchmark makes (the delegate never does), resolved from the runtime the
// delegate layer already opened. Declared here, after the C API's documented signatures.
struct ExtraApi {
  ov::StatusCode (*read_model)(const ov::ov_core*, const char* xml_path, const char* bin_path, ov::ov_model**);
  ov::StatusCode (*import_model)(const ov::ov_core*, const char* content, size_t size, const char* device,
                                 ov::ov_compiled_model**);
  ov::StatusCode (*export_model)(const ov::ov_compiled_model*, const char* path);
  // Variadic: reads exactly one key/value pair of C strings per call.
  ov::StatusCode (*set_property)(const ov::ov_core*, const char* device, ...);
};

const ExtraApi& extra_api(const ov::Runtime& runtime) {
  static const ExtraApi api = [&] {
    // RTLD_NOLOAD: the library is open already; this only gets a handle to look symbols up in.
    void* library = dlopen(runtime.library_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) throw std::runtime_error("cannot reopen " + runtime.library_path().string());
    auto symbol = [&](const char* name) {
      void* address = dlsym(library, name);
      if (address == nullptr) throw std::runtime_error(std::string("OpenVINO exports no ") + name);
      return address;
    };
    ExtraApi resolved{};
    resolved.read_model = reinterpret_cast<decltype(resolved.read_model)>(symbol("ov_core_read_model"));
    resolved.import_model = reinterpret_cast<decltype(resolved.import_model)>(symbol("ov_core_import_model"));
    resolved.export_model =
        reinterpret_cast<decltype(resolved.export_model)>(symbol("ov_compiled_model_export_model"));
    resolved.set_property = reinterpret_cast<decltype(resolved.set_property)>(symbol("ov_core_set_property"));
    return resolved;
  }();
  return api;
}

void check(ov::Runtime& runtime, ov::StatusCode status, const std::string& what) {
  if (status != ov::kOk) throw std::runtime_error(runtime.failure(status, what).message);
}

}  // namespace

CompileSetup compile_setup(const IrCase& ir_case) {
  CompileSetup setup;
  for (const auto& [key, value] : ir_case.specs) {
    if (key == EXECUTORCH_OPENVINO_SPEC_DEVICE) {
      setup.device = value;
    } else {
      setup.properties.push_back({key, value});
    }
  }
  return setup;
}

int main_reporting_errors(int argc, char** argv, int (*run)(int, char**), const char* usage) {
  try {
    return run(argc, argv);
  } catch (const UsageError& error) {
    const bool help = error.what()[0] == '\0';
    if (!help) std::fprintf(stderr, "error: %s\n", error.what());
    std::fputs(usage, help ? stdout : stderr);
    return help ? 0 : 2;
  } catch (const std::exception& error) {
    std::fflush(stdout);  // what was measured so far comes before the error
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}

void default_openvino_library_path() {
#ifdef EOV_BENCH_DEFAULT_OPENVINO_LIBS
  const char* configured = std::getenv("OPENVINO_LIB_PATH");
  if (configured == nullptr || configured[0] == '\0') setenv("OPENVINO_LIB_PATH", EOV_BENCH_DEFAULT_OPENVINO_LIBS, 1);
#endif
}

ov::Runtime& runtime_or_throw() {
  Outcome<ov::Runtime*> runtime = ov::Runtime::instance();
  if (!runtime.ok()) throw std::runtime_error(runtime.failure().message);
  return *runtime.value();
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::istringstream parts(text);
  std::string item;
  while (std::getline(parts, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::vector<HostTensor*> pointers(const std::vector<std::unique_ptr<HostTensor>>& tensors) {
  std::vector<HostTensor*> result;
  for (const auto& tensor : tensors) result.push_back(tensor.get());
  return result;
}

double max_abs_diff_f32(const uint8_t* a, const uint8_t* b, size_t bytes) {
  double worst = 0;
  for (size_t i = 0; i + sizeof(float) <= bytes; i += sizeof(float)) {
    float x, y;
    std::memcpy(&x, a + i, sizeof x);
    std::memcpy(&y, b + i, sizeof y);
    const double diff = std::fabs(static_cast<double>(x) - static_cast<double>(y));
    worst = std::isnan(diff) ? INFINITY : std::max(worst, diff);
  }
  return worst;
}

NativeModel NativeModel::from_blob(const std::vector<uint8_t>& blob) {
  blob::ParseResult parsed = blob::parse(blob.data(), blob.size());
  if (!parsed.blob) throw std::runtime_error("invalid delegate blob: " + parsed.error);
  const blob::Span xml = parsed.blob->ir_xml;
  const blob::Span weights = parsed.blob->ir_weights;
  NativeModel model;
  model.xml.assign(xml.data, xml.data + xml.size);
  if (weights.size > 0) model.weights.assign(weights.data, weights.data + weights.size);
  return model;
}

NativeRunner::NativeRunner(ov::Runtime& runtime, NativeModel model, const CompileSetup& setup,
                           const std::vector<HostTensor*>& inputs, const std::vector<HostTensor*>& outputs,
                           const std::string& name)
    : runtime_(runtime), model_(std::move(model)) {
  const std::string where = name + " (native)";
  const auto compile = [&](const ov::ModelPtr& read) {
    return value_or_throw(ov::compile_model(runtime, read.get(), setup.device, setup.properties),
                          where + ": compiling");
  };
  switch (model_.kind) {
    case NativeModel::Kind::kIrInMemory:
      compiled_ = compile(value_or_throw(
          ov::read_model(runtime, reinterpret_cast<const char*>(model_.xml.data()), model_.xml.size(),
                         model_.weights.empty() ? nullptr : model_.weights.data(), model_.weights.size()),
          where + ": reading the IR"));
      break;
    case NativeModel::Kind::kIrFromFiles: {
      const ExtraApi& extra = extra_api(runtime);
      ov::ov_core* core = value_or_throw(runtime.core(), where);
      ov::ov_model* raw = nullptr;
      const std::string xml = model_.xml_path.string(), weights = model_.weights_path.string();
      check(runtime, extra.read_model(core, xml.c_str(), weights.empty() ? nullptr : weights.c_str(), &raw),
            where + ": reading " + xml);
      compiled_ = compile(ov::ModelPtr(raw, {runtime.api().ov_model_free}));
      break;
    }
    case NativeModel::Kind::kImported: {
      // import_model takes no properties, and the CPU plugin does not restore INFERENCE_PRECISION_HINT
      // from the exported model (OpenVINO 2026.4: imported into a plain core, a model compiled for
      // f32 runs in bf16 on a CPU with bf16), so the properties go on the core's device first.
      const ExtraApi& extra = extra_api(runtime);
      ov::ov_core* core = value_or_throw(runtime.core(), where);
      for (const ov::Property& property : setup.properties) {
        check(runtime, extra.set_property(core, setup.device.c_str(), property.key.c_str(), property.value.c_str()),
              where + ": setting " + property.key + " on the core");
      }
      ov::ov_compiled_model* raw = nullptr;
      check(runtime, extra.import_model(core, reinterpret_cast<const char*>(model_.exported.data()),
                                        model_.exported.size(), setup.device.c_str(), &raw),
            where + ": importing the exported model");
      compiled_ = ov::CompiledModelPtr(raw, {runtime.api().ov_compiled_model_free});
      break;
    }
  }
  const std::vector<ov::PortInfo> input_ports = value_or_throw(ov::input_ports(runtime, compiled_.get()), where);
  const std::vector<ov::PortInfo> output_ports = value_or_throw(ov::output_ports(runtime, compiled_.get()), where);
  if (input_ports.size() != inputs.size() || output_ports.size() != outputs.size()) {
    throw std::runtime_error(where + ": the model has " + std::to_string(input_ports.size()) + " inputs and " +
                             std::to_string(output_ports.size()) + " outputs, the case " +
                             std::to_string(inputs.size()) + " and " + std::to_string(outputs.size()));
  }
  request_ = value_or_throw(ov::create_infer_request(runtime, compiled_.get()), where);

  // Bound once, as an application that reuses its buffers would: the timed call then does nothing
  // but infer, which is the floor the delegate is measured against.
  auto describe = [&](HostTensor& host, const ov::PortInfo& port, bool is_input, size_t index) {
    if (element_type_of(host.type()) != port.type) {
      throw std::runtime_error(where + ": dtype of " + (is_input ? "input " : "output ") + std::to_string(index) +
                               " differs from the model's");
    }
    const auto sizes = host.tensor().sizes();
    return Bound{&host, port.type, std::vector<int64_t>(sizes.begin(), sizes.end()), is_input, index};
  };
  for (size_t i = 0; i < inputs.size(); ++i) bound_.push_back(describe(*inputs[i], input_ports[i], true, i));
  for (size_t i = 0; i < outputs.size(); ++i) bound_.push_back(describe(*outputs[i], output_ports[i], false, i));
  for (const Bound& bound : bound_) tensors_.push_back(value_or_throw(wrap_and_set(bound), where + ": binding"));
}

Outcome<ov::TensorPtr> NativeRunner::wrap_and_set(const Bound& bound) {
  Outcome<ov::TensorPtr> tensor =
      ov::wrap_host_memory(runtime_, bound.type, bound.dims.data(), bound.dims.size(), bound.host->data());
  if (!tensor.ok()) return tensor;
  const Status done = bound.is_input ? ov::set_input(runtime_, request_.get(), bound.index, tensor->get())
                                     : ov::set_output(runtime_, request_.get(), bound.index, tensor->get());
  if (!done.ok()) return done.failure();
  return tensor;
}

bool NativeRunner::run_rebinding() {
  for (const Bound& bound : bound_) {
    // The request keeps its own reference; ours goes at the end of this iteration, as in a delegate
    // that wraps afresh on every call.
    if (const Outcome<ov::TensorPtr> tensor = wrap_and_set(bound); !tensor.ok()) {
      failure_ = tensor.failure().message;
      return false;
    }
  }
  return run();
}

size_t NativeRunner::scribble_model_bytes() {
  size_t overwritten = 0;
  for (std::vector<uint8_t>* bytes : {&model_.xml, &model_.weights, &model_.exported}) {
    std::fill(bytes->begin(), bytes->end(), 0xFF);
    overwritten += bytes->size();
  }
  return overwritten;
}

void NativeRunner::export_to(const std::filesystem::path& path) {
  const std::string text = path.string();
  check(runtime_, extra_api(runtime_).export_model(compiled_.get(), text.c_str()), "exporting to " + text);
}

}  // namespace executorch_openvino::bench
