// Runs the "forward" method of a .pte with ExecuTorch's Module API. The OpenVINO delegate needs no
// code here: linking executorch_openvino::backend registers it.
//
//   run_pte MODEL.pte [INPUT.bin OUTPUT.bin]
// INPUT.bin holds the first input's data (raw, in its declared dtype and shape; other inputs are
// filled with ones); OUTPUT.bin receives the first output's raw data.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch_openvino/backend.h>

using executorch::extension::Module;
using executorch::extension::TensorPtr;

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    std::fprintf(stderr, "usage: %s MODEL.pte [INPUT.bin OUTPUT.bin]\n", argv[0]);
    return 2;
  }
  Module module(argv[1], Module::LoadMode::Mmap);  // the weights read where they lie (docs/memory.md)
  auto meta = module.method_meta("forward");
  if (!meta.ok()) {
    std::fprintf(stderr, "cannot load %s: error 0x%x %s\n", argv[1], static_cast<unsigned>(meta.error()),
                 executorch_openvino_last_error());
    return 1;
  }

  // One tensor per declared input, in its declared dtype and shape; all ones (one byte per element
  // set to 1 gives 1 for any integer type; floats get 1.0 below).
  std::vector<std::vector<uint8_t>> storage;
  std::vector<TensorPtr> inputs;
  for (size_t i = 0; i < meta->num_inputs(); ++i) {
    auto info = meta->input_tensor_meta(i);
    if (!info.ok()) {
      std::fprintf(stderr, "input %zu is not a tensor; this example feeds tensors only\n", i);
      return 1;
    }
    std::vector<uint8_t> bytes(info->nbytes());
    if (i == 0 && argc == 4) {
      std::ifstream in(argv[2], std::ios::binary);
      std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (file.size() != bytes.size()) {
        std::fprintf(stderr, "%s has %zu bytes; input 0 needs %zu\n", argv[2], file.size(), bytes.size());
        return 1;
      }
      bytes = std::move(file);
    } else if (info->scalar_type() == executorch::aten::ScalarType::Float) {
      auto* values = reinterpret_cast<float*>(bytes.data());
      for (size_t k = 0; k < bytes.size() / sizeof(float); ++k) values[k] = 1.0f;
    }
    storage.push_back(std::move(bytes));
    std::vector<executorch::aten::SizesType> sizes(info->sizes().begin(), info->sizes().end());
    inputs.push_back(executorch::extension::from_blob(storage.back().data(), sizes, info->scalar_type()));
  }

  std::vector<executorch::runtime::EValue> args(inputs.begin(), inputs.end());
  auto outputs = module.forward(args);
  if (!outputs.ok()) {
    std::fprintf(stderr, "forward failed: error 0x%x %s\n", static_cast<unsigned>(outputs.error()),
                 executorch_openvino_last_error());
    return 1;
  }
  const auto& first = outputs->at(0).toTensor();
  std::printf("forward: %zu output(s); output 0 has %zd elements", outputs->size(), first.numel());
  if (first.scalar_type() == executorch::aten::ScalarType::Float && first.numel() > 0) {
    std::printf(", first value %g", first.const_data_ptr<float>()[0]);
  }
  std::printf("\n");
  if (argc == 4) {
    std::ofstream out(argv[3], std::ios::binary);
    out.write(static_cast<const char*>(first.const_data_ptr()), static_cast<std::streamsize>(first.nbytes()));
  }
  return 0;
}
