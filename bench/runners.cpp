#include "runners.h"

#include <array>
#include <stdexcept>

#include <executorch_openvino/backend.h>

#include "blob/delegate_blob.h"

namespace executorch_openvino::bench {
namespace {

using executorch::aten::ScalarType;
using executorch::runtime::BackendInitContext;
using executorch::runtime::CompileSpec;
using executorch::runtime::Error;
using executorch::runtime::FreeableBuffer;

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

NativeRunner::NativeRunner(ov::Runtime& runtime, const IrCase& ir_case, const std::vector<HostTensor*>& inputs,
                           const std::vector<HostTensor*>& outputs)
    : runtime_(runtime), blob_(ir_case.blob) {
  const std::string where = ir_case.name + " (native)";
  // The same container the delegate receives, so both sides read byte-identical IR and weights.
  blob::ParseResult parsed = blob::parse(blob_.data(), blob_.size());
  if (!parsed.blob) throw std::runtime_error(where + ": invalid delegate blob: " + parsed.error);
  const blob::Span xml = parsed.blob->ir_xml;
  const blob::Span weights = parsed.blob->ir_weights;
  model_ = value_or_throw(ov::read_model(runtime, reinterpret_cast<const char*>(xml.data), xml.size,
                                         weights.size > 0 ? weights.data : nullptr, weights.size),
                          where + ": reading the IR");
  const CompileSetup setup = compile_setup(ir_case);
  compiled_ = value_or_throw(ov::compile_model(runtime, model_.get(), setup.device, setup.properties),
                             where + ": compiling");
  const std::vector<ov::PortInfo> input_ports = value_or_throw(ov::input_ports(runtime, compiled_.get()), where);
  const std::vector<ov::PortInfo> output_ports = value_or_throw(ov::output_ports(runtime, compiled_.get()), where);
  if (input_ports.size() != inputs.size() || output_ports.size() != outputs.size()) {
    throw std::runtime_error(where + ": the model's inputs/outputs do not match the case's spec.txt");
  }
  request_ = value_or_throw(ov::create_infer_request(runtime, compiled_.get()), where);

  // Bound once, as an application that reuses its buffers would: the timed call then does nothing
  // but infer, which is the floor the delegate is measured against.
  auto bind = [&](HostTensor& host, const ov::PortInfo& port, bool is_input, size_t index) {
    if (element_type_of(host.type()) != port.type) {
      throw std::runtime_error(where + ": dtype of " + (is_input ? "input " : "output ") + std::to_string(index) +
                               " differs from the model's");
    }
    const auto sizes = host.tensor().sizes();
    std::vector<int64_t> dims(sizes.begin(), sizes.end());
    ov::TensorPtr tensor = value_or_throw(
        ov::wrap_host_memory(runtime_, port.type, dims.data(), dims.size(), host.data()), where + ": wrapping");
    const Status bound = is_input ? ov::set_input(runtime_, request_.get(), index, tensor.get())
                                  : ov::set_output(runtime_, request_.get(), index, tensor.get());
    if (!bound.ok()) throw std::runtime_error(where + ": " + bound.failure().message);
    tensors_.push_back(std::move(tensor));
  };
  for (size_t i = 0; i < inputs.size(); ++i) bind(*inputs[i], input_ports[i], true, i);
  for (size_t i = 0; i < outputs.size(); ++i) bind(*outputs[i], output_ports[i], false, i);
}

DelegateRunner::DelegateRunner(executorch::runtime::BackendInterface* backend, const IrCase& ir_case,
                               const std::vector<HostTensor*>& inputs, const std::vector<HostTensor*>& outputs)
    : backend_(backend),
      blob_(ir_case.blob),
      // No free function: blob_ owns the bytes; the delegate only tells us when it is done with them.
      processed_(blob_.data(), blob_.size(), nullptr),
      arena_(64 * 1024),
      allocator_(static_cast<uint32_t>(arena_.size()), arena_.data()) {
  // CompileSpecs point into our own copies, which stay put for the runner's life.
  spec_values_.reserve(2 * ir_case.specs.size());
  for (const auto& [key, value] : ir_case.specs) {
    spec_values_.push_back(key);
    spec_values_.push_back(value);
  }
  for (size_t i = 0; i < ir_case.specs.size(); ++i) {
    std::string& value = spec_values_[2 * i + 1];
    specs_.push_back(CompileSpec{spec_values_[2 * i].c_str(), {value.data(), value.size()}});
  }
  BackendInitContext init_context(&allocator_);
  auto handle = backend_->init(init_context, &processed_,
                               executorch::runtime::ArrayRef<CompileSpec>(specs_.data(), specs_.size()));
  if (!handle.ok()) throw std::runtime_error(ir_case.name + " (delegate): init failed: " + failure());
  handle_ = handle.get();

  // Inputs then outputs, as ExecuTorch lays out a delegate call's arguments; built once so the timed
  // call does not copy or allocate anything on our side.
  for (HostTensor* tensor : inputs) arg_storage_.push_back(tensor->value());
  for (HostTensor* tensor : outputs) arg_storage_.push_back(tensor->value());
  args_ = executorch::runtime::Span<executorch::runtime::EValue*>(arg_storage_.data(), arg_storage_.size());
}

DelegateRunner::~DelegateRunner() {
  if (handle_ != nullptr) backend_->destroy(handle_);
  processed_.Free();  // as the Method does after destroy(); a no-op if the delegate freed it already
}

std::string DelegateRunner::failure() const { return executorch_openvino_last_error(); }

}  // namespace executorch_openvino::bench
