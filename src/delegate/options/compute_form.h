// How the CPU computes layers whose weights the exporter compressed: the group size in which the CPU
// plugin quantizes their activations on the fly (DYNAMIC_QUANTIZATION_GROUP_SIZE), where it has fast
// integer instructions. OpenVINO's default is groups of 32 whatever the weights; for int8 weights (one
// scale per output channel) groups of 128 made decode 1.04-1.15x faster and prompts about 0.8x the
// time at SmolLM2-135M's and Qwen2.5-0.5B's shapes, a little less exactly (docs/quantization.md has the
// figures). For int4 in groups of 128 the same made decode slower, so int4 keeps OpenVINO's default.
// Its own room: the "dynamic_quantization" option and the rule that reads the program's "weights" spec.
#pragma once

#include "delegate/options/compile_options.h"

namespace executorch_openvino::delegate {

inline constexpr const char* kDynamicQuantization = "DYNAMIC_QUANTIZATION_GROUP_SIZE";
// Values of the dynamic_quantization option besides a group size: "auto" (the rule below) and "on"
// (OpenVINO's own default); "off" is stored as "0".
inline constexpr const char* kAutoComputeForm = "auto";
inline constexpr const char* kDeviceComputeForm = "on";
// The activations' group for int8 weights (one scale per output channel).
inline constexpr int kPerChannelActivationGroup = 128;

// The group "auto" gives a CPU program whose weights spec is `weights` ("int8:0", "int4:128"), or 0
// when OpenVINO's default stays: kPerChannelActivationGroup for int8 and int8_sym; int4, and programs
// whose weights were not compressed at export, keep OpenVINO's default.
int activation_group_for(const std::string& weights);

// Resolves the option into the property compile_model gets: "auto" or nothing set gives the rule's
// group on the CPU (virtual devices, GPU and NPU: OpenVINO's default); "on" removes the property
// (OpenVINO's default); a number, from the program's compile_options or an option, is kept.
void resolve_compute_form(CompileOptions& options);

}  // namespace executorch_openvino::delegate
