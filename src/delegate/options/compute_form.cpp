#include "delegate/options/compute_form.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace executorch_openvino::delegate {

int activation_group_for(const std::string& weights) {
  const size_t colon = weights.find(':');
  const std::string mode = weights.substr(0, colon);
  const int group = colon == std::string::npos ? 0 : std::atoi(weights.c_str() + colon + 1);
  if (mode.rfind("int8", 0) == 0) return kPerChannelActivationGroup;
  if (mode.rfind("int4", 0) != 0) return 0;
  if (group == -1) return kPerChannelActivationGroup;
  return group > 32 && group % 32 == 0 ? group : 0;
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
