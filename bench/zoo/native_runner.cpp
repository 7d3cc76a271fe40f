#include "native_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

namespace executorch_openvino::bench {
namespace {

template <typename T>
T value_or_throw(Outcome<T> outcome, const std::string& what) {
  if (!outcome.ok()) throw std::runtime_error(what + ": " + outcome.failure().message);
  return std::move(outcome).value();
}

}  // namespace

NativeRunner::NativeRunner(openvino_api::Runtime& runtime, NativeModel model, const std::string& device,
                           const std::vector<openvino_api::Property>& properties, const std::vector<HostBuffer>& inputs,
                           const std::vector<HostBuffer>& outputs)
    : runtime_(runtime), model_(std::move(model)), inputs_(inputs), outputs_(outputs) {
  if (model_.imported) {
    compiled_ = value_or_throw(openvino_api::import_model(runtime, model_.bytes.data(), model_.bytes.size(), device, properties),
                               "native: importing the exported model");
  } else {
    const openvino_api::ModelPtr read = value_or_throw(
        openvino_api::read_model(runtime, reinterpret_cast<const char*>(model_.xml.data()), model_.xml.size(),
                       model_.bytes.empty() ? nullptr : model_.bytes.data(), model_.bytes.size()),
        "native: reading the IR");
    compiled_ = value_or_throw(openvino_api::compile_model(runtime, read.get(), device, properties), "native: compiling");
  }
  const size_t input_count = value_or_throw(openvino_api::input_ports(runtime, compiled_.get()), "native").size();
  const size_t output_count = value_or_throw(openvino_api::output_ports(runtime, compiled_.get()), "native").size();
  if (input_count != inputs.size() || output_count != outputs.size()) {
    throw std::runtime_error("native: the model has " + std::to_string(input_count) + " inputs and " +
                             std::to_string(output_count) + " outputs, the folder " + std::to_string(inputs.size()) +
                             " and " + std::to_string(outputs.size()));
  }
  request_ = value_or_throw(openvino_api::create_infer_request(runtime, compiled_.get()), "native");
  // Bound once, as an application that reuses its buffers would: the timed call then does nothing
  // but infer, which is the floor the delegate is measured against.
  for (size_t i = 0; i < inputs_.size(); ++i) bound_.push_back(value_or_throw(wrap_and_set(inputs_[i], true, i), "native"));
  for (size_t i = 0; i < outputs_.size(); ++i) bound_.push_back(value_or_throw(wrap_and_set(outputs_[i], false, i), "native"));
}

Outcome<openvino_api::TensorPtr> NativeRunner::wrap_and_set(const HostBuffer& buffer, bool is_input, size_t index) {
  Outcome<openvino_api::TensorPtr> tensor =
      openvino_api::wrap_host_memory(runtime_, buffer.type, buffer.dims.data(), buffer.dims.size(), buffer.data);
  if (!tensor.ok()) return tensor;
  const Status done = is_input ? openvino_api::set_input(runtime_, request_.get(), index, tensor->get())
                               : openvino_api::set_output(runtime_, request_.get(), index, tensor->get());
  if (!done.ok()) return done.failure();
  return tensor;
}

bool NativeRunner::run_rebinding() {
  // The request keeps its own reference to each tensor; ours goes at the end of the statement, as
  // in a delegate that wraps afresh on every call.
  for (size_t i = 0; i < inputs_.size() + outputs_.size(); ++i) {
    const bool is_input = i < inputs_.size();
    const Outcome<openvino_api::TensorPtr> tensor =
        wrap_and_set(is_input ? inputs_[i] : outputs_[i - inputs_.size()], is_input, is_input ? i : i - inputs_.size());
    if (!tensor.ok()) {
      failure_ = tensor.failure().message;
      return false;
    }
  }
  return run();
}

void NativeRunner::export_to(const std::string& path) {
  const Status done = openvino_api::export_model(runtime_, compiled_.get(), path);
  if (!done.ok()) throw std::runtime_error("exporting to " + path + ": " + done.failure().message);
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

openvino_api::Runtime& runtime_or_throw() {
  Outcome<openvino_api::Runtime*> runtime = openvino_api::Runtime::instance();
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

}  // namespace executorch_openvino::bench
