// The bytes of a compiled model OpenVINO imports, which the imported model keeps reading in place: heap
// memory (a precompiled model copied out of the blob), or a read-only mapping of a model-cache file. A
// mapped file costs no copy and no anonymous memory: its pages are the page cache's, shared by every
// process that loads the same model and given back by the kernel under pressure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "delegate/compiling/aligned_bytes.h"

namespace executorch_openvino::delegate {

class ModelBytes {
 public:
  ModelBytes() = default;
  explicit ModelBytes(AlignedBytes heap);
  // The whole of `file`, mapped read-only; nullopt where it cannot be (a platform without the mapping
  // done here, an empty file, a failed call: `problem` says which), and the caller reads it instead.
  // The cache replaces files by renaming, never by writing into them, so a mapped file never changes.
  static std::optional<ModelBytes> map(const std::filesystem::path& file, std::string* problem);

  ModelBytes(ModelBytes&& other) noexcept;
  ModelBytes& operator=(ModelBytes&& other) noexcept;
  ModelBytes(const ModelBytes&) = delete;
  ModelBytes& operator=(const ModelBytes&) = delete;
  ~ModelBytes();

  const uint8_t* data() const { return mapping_ != nullptr ? static_cast<const uint8_t*>(mapping_) : heap_.data.get(); }
  size_t size() const { return mapping_ != nullptr ? mapping_size_ : heap_.size; }
  // "mapped", "copy" or "none", for the compiled models' description.
  const char* kind() const;

 private:
  void unmap();
  AlignedBytes heap_;
  void* mapping_ = nullptr;
  size_t mapping_size_ = 0;
};

}  // namespace executorch_openvino::delegate
