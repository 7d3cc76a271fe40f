#include "delegate/compiling/named_weights.h"

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

std::string what_is_kept(const blob::NamedWeights& weights) {
  return "this program keeps its OpenVINO weights (" + std::to_string(weights.size) +
         " bytes) in named data under '" + weights.key + "'";
}

Failure loaded_without_data(const blob::NamedWeights& weights) {
  return Failure{FailureKind::kInvalidArgument,
                 what_is_kept(weights) + ", but it was loaded without named data: " + kHowToLoad};
}

Failure not_held(const blob::NamedWeights& weights, const std::string& detail) {
  return Failure{FailureKind::kInvalidArgument, what_is_kept(weights) + ", which its named data does not hold" +
                                                    detail + ": the data file is missing or is from another export; " +
                                                    kHowToLoad};
}

// Whether `map` lists `key`; nullopt when the map cannot list its keys (fetching will tell).
std::optional<bool> lists_key(const NamedDataMap& map, const std::string& key) {
  Result<uint32_t> count = map.get_num_keys();
  if (!count.ok()) return std::nullopt;
  for (uint32_t i = 0; i < count.get(); ++i) {
    Result<const char*> listed = map.get_key(i);
    if (!listed.ok()) return std::nullopt;
    if (listed.get() != nullptr && key == listed.get()) return true;
  }
  return false;
}

}  // namespace

Outcome<FreeableBuffer> fetch_named_weights(const NamedDataMap* map, const blob::NamedWeights& weights) {
  if (map == nullptr) return loaded_without_data(weights);
  Result<FreeableBuffer> data = map->get_data(weights.key.c_str());
  if (!data.ok()) {
    return not_held(weights, " (ExecuTorch error " + std::to_string(static_cast<unsigned>(data.error())) + ")");
  }
  FreeableBuffer buffer = std::move(data.get());
  if (buffer.size() != weights.size) {
    return Failure{FailureKind::kInvalidBlob, what_is_kept(weights) + ", but the data under that key is " +
                                                  std::to_string(buffer.size()) + " bytes: the data file is corrupt"};
  }
  if (blob::crc32(static_cast<const uint8_t*>(buffer.data()), buffer.size()) != weights.crc) {
    return Failure{FailureKind::kInvalidBlob,
                   what_is_kept(weights) + ", but the data under that key fails its checksum: the data file is corrupt"};
  }
  return buffer;
}

Outcome<IrWeights> IrWeights::of(const blob::ParsedBlob& parsed, const NamedDataMap* map) {
  if (!parsed.named_weights) return IrWeights(parsed.ir_weights, map, std::nullopt);
  if (map == nullptr) return loaded_without_data(*parsed.named_weights);
  if (lists_key(*map, parsed.named_weights->key) == false) return not_held(*parsed.named_weights, "");
  return IrWeights({}, map, parsed.named_weights);
}

Outcome<HeldWeights> IrWeights::take(FreeableBuffer& blob) {
  if (!named_) return HeldWeights::from(blob, in_blob_);
  if (!fetched_) {
    Outcome<FreeableBuffer> fetched = fetch_named_weights(map_, *named_);
    if (!fetched.ok()) return fetched.failure();
    fetched_.emplace(std::move(fetched).value());
  }
  return HeldWeights::from(*fetched_, blob::Span{static_cast<const uint8_t*>(fetched_->data()), fetched_->size()});
}

void IrWeights::release() {
  if (fetched_) fetched_->Free();
}

}  // namespace executorch_openvino::delegate
