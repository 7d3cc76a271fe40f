#include "delegate/compiling/compiled_model.h"

#include <algorithm>

namespace executorch_openvino::delegate {
namespace {

std::string read_back_properties(openvino_api::Runtime& runtime, const openvino_api::ov_compiled_model* model) {
  std::string text;
  for (const char* key : {"EXECUTION_DEVICES", "PERFORMANCE_HINT", "INFERENCE_NUM_THREADS", "NUM_STREAMS",
                          "INFERENCE_PRECISION_HINT", "DYNAMIC_QUANTIZATION_GROUP_SIZE", "PERF_COUNT"}) {
    // Virtual devices do not report every property; what they do not know is left out.
    Outcome<std::string> value = openvino_api::compiled_model_property(runtime, model, key);
    if (value.ok()) text += (text.empty() ? "" : " ") + std::string(key) + "=" + value.value();
  }
  return text;
}

}  // namespace

const char* source_name(CompiledModel::Source source) {
  switch (source) {
    case CompiledModel::Source::kIr: return "ir";
    case CompiledModel::Source::kPrecompiled: return "precompiled";
    case CompiledModel::Source::kModelCache: return "cache";
    case CompiledModel::Source::kUpstream: return "upstream";
  }
  return "unknown";
}

Status describe(openvino_api::Runtime& runtime, const CompileOptions& options, CompiledModel& result) {
  Outcome<std::vector<openvino_api::PortInfo>> inputs = openvino_api::input_ports(runtime, result.model.get());
  if (!inputs.ok()) return inputs.failure();
  Outcome<std::vector<openvino_api::PortInfo>> outputs = openvino_api::output_ports(runtime, result.model.get());
  if (!outputs.ok()) return outputs.failure();
  if (outputs->empty()) {
    // Found by fuzzing: OpenVINO reads an IR with mangled layer types, or a Parameter without a
    // Result, as a model with no outputs; such a model computes nothing and is never ours.
    return Failure{FailureKind::kInvalidBlob,
                   "the model has no outputs (OpenVINO read " + std::to_string(inputs->size()) +
                       " inputs and no outputs from the IR): the delegate blob is corrupt or was not written by "
                       "executorch_openvino; re-export the model"};
  }
  result.inputs = std::move(inputs).value();
  result.outputs = std::move(outputs).value();
  result.effective_properties = read_back_properties(runtime, result.model.get());
  const bool paged = std::any_of(result.inputs.begin(), result.inputs.end(), is_paged_cache);
  if (paged && result.outputs.size() > 1 && result.outputs.back().name == kComputedMaskOutput) {
    result.computed_mask = std::move(result.outputs.back());
    result.outputs.pop_back();
  }
  Outcome<std::optional<PagedLayout>> layout =
      paged_layout(result.inputs, result.computed_mask, result.outputs.size());
  if (!layout.ok()) return layout.failure();
  result.paged = layout.value();
  const std::string* profiling = find_property(options, "PERF_COUNT");
  result.profiling = profiling != nullptr && *profiling == "YES";
  return ok_status();
}

}  // namespace executorch_openvino::delegate
