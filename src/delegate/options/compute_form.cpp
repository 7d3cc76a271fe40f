#include "delegate/options/compute_form.h"

#include <algorithm>
#include <string>

namespace executorch_openvino::delegate {

int activation_group_for(const std::string& weights) {
  return weights.rfind("int8", 0) == 0 ? kPerChannelActivationGroup : 0;
}

void resolve_compute_form(CompileOptions& options) {
  auto found = std::find_if(options.properties.begin(), options.properties.end(),
                            [](const openvino_api::Property& p) { return p.key == kDynamicQuantization; });
  if (found != options.properties.end() && found->value != kAutoComputeForm && found->value != kDeviceComputeForm) {
    return;  // a group size the program or an option asked for
  }
  const bool automatic = found == options.properties.end() || found->value == kAutoComputeForm;
  if (found != options.properties.end()) options.properties.erase(found);
  const int group = is_cpu_device(options.device) ? activation_group_for(options.weights) : 0;
  if (automatic && group > 0) options.properties.push_back({kDynamicQuantization, std::to_string(group)});
}

}  // namespace executorch_openvino::delegate
