// Weights a program keeps in ExecuTorch's named data (a .ptd file, or the .pte's own data segment)
// instead of in our blob: fetched by the key the blob records, and checked against its size and
// CRC-32 before OpenVINO reads them, so a .ptd from another export is refused, never computed with.
#pragma once

#include <optional>
#include <utility>

#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/named_data_map.h>

#include "blob/delegate_blob.h"
#include "delegate/compiling/held_weights.h"
#include "common/outcome.h"

namespace executorch_openvino::delegate {

// `map` is the method's (BackendInitContext::get_named_data_map(); null when the program was
// loaded without data).
Outcome<executorch::runtime::FreeableBuffer> fetch_named_weights(const executorch::runtime::NamedDataMap* map,
                                                                 const blob::NamedWeights& weights);

// The IR's weights of one blob, for compile(): the blob's own section, or the program's named data
// fetched on the first read(). Only compiling the IR reads them; a compiled model alive in this
// process or imported from the model cache does not, so a hit never reads hundreds of megabytes
// from the data file.
class IrWeights {
 public:
  // Fails at once when the blob names weights and the program has no named data, or (where the map
  // lists its keys) none under that key: a program lacking its data file fails to load whether or not
  // a compiled model of it is at hand. Size and checksum are checked by read().
  static Outcome<IrWeights> of(const blob::ParsedBlob& parsed, const executorch::runtime::NamedDataMap* map);

  // The weights for the compiled model (held_weights.h): the blob's own section, inside `blob` (ExecuTorch's
  // buffer of the delegate blob), or the named data, fetched now (size and checksum checked). A mapped
  // buffer is taken over; any other is copied from and left to be released.
  Outcome<HeldWeights> take(executorch::runtime::FreeableBuffer& blob);
  // Frees fetched named data not taken over (ExecuTorch's buffer); the blob's own weights go with the blob.
  void release();

 private:
  IrWeights(blob::Span in_blob, const executorch::runtime::NamedDataMap* map,
            std::optional<blob::NamedWeights> named)
      : in_blob_(in_blob), map_(map), named_(std::move(named)) {}

  blob::Span in_blob_;
  const executorch::runtime::NamedDataMap* map_;
  std::optional<blob::NamedWeights> named_;
  std::optional<executorch::runtime::FreeableBuffer> fetched_;
};

}  // namespace executorch_openvino::delegate
