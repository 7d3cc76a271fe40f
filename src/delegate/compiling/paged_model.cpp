#include "delegate/compiling/paged_model.h"

#include <algorithm>
#include <string>

namespace executorch_openvino::delegate {

Outcome<std::optional<PagedLayout>> paged_layout(const CompiledModel& compiled) {
  const std::vector<openvino_api::PortInfo>& inputs = compiled.inputs;
  auto is_cache = [](const openvino_api::PortInfo& port) { return port.name.rfind(kPagedCachePrefix, 0) == 0; };
  const auto first = std::find_if(inputs.begin(), inputs.end(), is_cache);
  if (first == inputs.end()) return std::optional<PagedLayout>();
  PagedLayout layout;
  layout.first_cache = static_cast<size_t>(first - inputs.begin());
  const std::string not_ours = "the model's paged attention is not in the form this library makes";
  if (!std::all_of(first, inputs.end(), is_cache)) {
    return Failure{FailureKind::kInvalidBlob, not_ours + ": its caches are not its last inputs"};
  }
  bool mask = false, tokens = false;
  for (size_t i = 0; i < layout.first_cache; ++i) {
    if (inputs[i].name == kCausalMaskInput) layout.mask = i, mask = true;
    if (inputs[i].name == kTokensInput) layout.tokens = i, tokens = true;
  }
  if (!mask && compiled.computed_mask) layout.mask = compiled.outputs.size(), layout.mask_computed = mask = true;
  if (!mask || !tokens) return Failure{FailureKind::kInvalidBlob, not_ours + ": no mask or token input"};
  const openvino_api::PortInfo& mask_port = layout.mask_computed ? *compiled.computed_mask : inputs[layout.mask];
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
