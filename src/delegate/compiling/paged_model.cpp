#include "delegate/compiling/paged_model.h"

#include <algorithm>
#include <string>

#include "openvino_api/helper_library.h"

namespace executorch_openvino::delegate {

namespace {

// The element type of paged caches: the precision the device computes in, f32 unless asked otherwise
// (the CPU plugin's paged attention keeps its caches in its compute precision).
std::string paged_cache_type(openvino_api::Runtime& runtime, const CompileOptions& options) {
  const std::string* hint = find_property(options, "INFERENCE_PRECISION_HINT");
  if (hint != nullptr) return *hint;
  Outcome<std::string> device_default =
      openvino_api::device_property(runtime, options.device, "INFERENCE_PRECISION_HINT");
  return device_default.ok() ? device_default.value() : "f32";
}

}  // namespace

Outcome<std::optional<std::string>> page_attention(openvino_api::Runtime& runtime, const CompileOptions& options,
                                                   openvino_api::ov_model* model, Notes& notes) {
  const openvino_api::ProcessHelper& helper = openvino_api::process_helper(runtime);
  std::string left, type;
  if (!is_cpu_device(options.device)) {
    left = "paged attention is run on CPU only, and the device is " + options.device;
  } else if (helper.library == nullptr) {
    left = "it needs the state helper: " + helper.why_not;
  } else {
    type = paged_cache_type(runtime, options);
    if (type != "f32" && type != "bf16" && type != "f16") {
      left = "caches in " + type + " are not supported";
    } else {
      Outcome<std::string> paged = helper.library->page_attention(model, type, kPagedBlockSize);
      if (!paged.ok()) return paged.failure();
      left = paged.value();
    }
  }
  if (left.empty()) return std::optional<std::string>(type);
  notes.push_back("attention=" + options.attention + ": the model runs as exported: " + left);
  return std::optional<std::string>();
}

std::vector<openvino_api::Property> paged_properties(std::vector<openvino_api::Property> properties,
                                                     const std::string& cache_type) {
  properties.erase(std::remove_if(properties.begin(), properties.end(),
                                  [](const openvino_api::Property& p) { return p.key == "KV_CACHE_PRECISION"; }),
                   properties.end());
  properties.push_back({"KV_CACHE_PRECISION", cache_type});
  return properties;
}

bool is_paged_cache(const openvino_api::PortInfo& port) { return port.name.rfind(kPagedCachePrefix, 0) == 0; }

Outcome<std::optional<PagedLayout>> paged_layout(const std::vector<openvino_api::PortInfo>& inputs,
                                                 const std::optional<openvino_api::PortInfo>& computed_mask,
                                                 size_t outputs) {
  const auto first = std::find_if(inputs.begin(), inputs.end(), is_paged_cache);
  if (first == inputs.end()) return std::optional<PagedLayout>();
  PagedLayout layout;
  layout.first_cache = static_cast<size_t>(first - inputs.begin());
  const std::string not_ours = "the model's paged attention is not in the form this library makes";
  if (!std::all_of(first, inputs.end(), is_paged_cache)) {
    return Failure{FailureKind::kInvalidBlob, not_ours + ": its caches are not its last inputs"};
  }
  if (layout.first_cache < kPlanInputCount) return Failure{FailureKind::kInvalidBlob, not_ours + ": it has no plan"};
  layout.plan = layout.first_cache - kPlanInputCount;
  for (size_t i = 0; i < kPlanInputCount; ++i) {
    const openvino_api::PortInfo& port = inputs[layout.plan + i];
    if (port.name != std::string(kPlanPrefix) + kPlanInputs[i] || port.type != openvino_api::ElementType::kI32) {
      return Failure{FailureKind::kInvalidBlob, not_ours + ": input " + std::to_string(layout.plan + i) + " is " +
                                                    port.name + ", not the plan's " + kPlanInputs[i]};
    }
  }
  bool mask = false, tokens = false;
  for (size_t i = 0; i < layout.plan; ++i) {
    if (inputs[i].name == kCausalMaskInput) layout.mask = i, mask = true;
    if (inputs[i].name == kTokensInput) layout.tokens = i, tokens = true;
  }
  if (!mask && computed_mask) layout.mask = outputs, layout.mask_computed = mask = true;
  if (!mask || !tokens) return Failure{FailureKind::kInvalidBlob, not_ours + ": no mask or token input"};
  const openvino_api::PortInfo& mask_port = layout.mask_computed ? *computed_mask : inputs[layout.mask];
  const std::vector<openvino_api::Dimension>& context = mask_port.dims;
  if (context.size() != 2 || context[1].min != context[1].max || context[1].max <= 0 ||
      mask_port.type != openvino_api::ElementType::kBoolean) {
    return Failure{FailureKind::kInvalidBlob, not_ours + ": its mask is " + mask_port.shape_text()};
  }
  layout.blocks = (context[1].max + kPagedBlockSize - 1) / kPagedBlockSize;
  // [blocks, KV heads, block, width]: the plugin reports the number of blocks as open.
  for (auto port = first; port != inputs.end(); ++port) {
    const std::vector<openvino_api::Dimension>& dims = port->dims;
    const bool fits = dims.size() == 4 && std::all_of(dims.begin() + 1, dims.end(), [](const openvino_api::Dimension& d) {
      return d.min == d.max && d.max > 0;
    });
    if (!fits || dims[2].max != kPagedBlockSize) {
      return Failure{FailureKind::kInvalidBlob, not_ours + ": cache " + port->name + " is " + port->shape_text()};
    }
  }
  return std::optional<PagedLayout>(layout);
}

}  // namespace executorch_openvino::delegate
