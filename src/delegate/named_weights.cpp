#include "delegate/named_weights.h"

#include <string>
#include <utility>

#include "blob/crc32.h"

namespace executorch_openvino::delegate {

using executorch::runtime::FreeableBuffer;
using executorch::runtime::NamedDataMap;
using executorch::runtime::Result;

namespace {

// How a user supplies the data, said in every message about missing weights.
constexpr const char* kHowToLoad =
    "load the program with the data file its export wrote (Python: Runtime.load_program(pte, data_path=ptd); "
    "C++: Module(pte, ptd); ExecuTorch's LLM runner: its data path)";

}  // namespace

Outcome<FreeableBuffer> fetch_named_weights(const NamedDataMap* map, const blob::NamedWeights& weights) {
  const std::string what = "this program keeps its OpenVINO weights (" + std::to_string(weights.size) +
                           " bytes) in named data under '" + weights.key + "'";
  if (map == nullptr) {
    return Failure{FailureKind::kInvalidArgument, what + ", but it was loaded without named data: " + kHowToLoad};
  }
  Result<FreeableBuffer> data = map->get_data(weights.key.c_str());
  if (!data.ok()) {
    return Failure{FailureKind::kInvalidArgument,
                   what + ", which its named data does not hold (ExecuTorch error " +
                       std::to_string(static_cast<unsigned>(data.error())) +
                       "): the data file is missing or is from another export; " + kHowToLoad};
  }
  FreeableBuffer buffer = std::move(data.get());
  if (buffer.size() != weights.size) {
    return Failure{FailureKind::kInvalidBlob, what + ", but the data under that key is " +
                                                  std::to_string(buffer.size()) + " bytes: the data file is corrupt"};
  }
  if (blob::crc32(static_cast<const uint8_t*>(buffer.data()), buffer.size()) != weights.crc) {
    return Failure{FailureKind::kInvalidBlob, what + ", but the data under that key fails its checksum: the data "
                                                     "file is corrupt"};
  }
  return buffer;
}

}  // namespace executorch_openvino::delegate
