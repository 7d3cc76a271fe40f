// The IR's weights for as long as the compiled model may read them. Where ExecuTorch hands them over
// in a mapping of the program's file (its Python runtime, its LLM runner and Module's Mmap load modes
// map the file), they are read in place, never copied, and the pages OpenVINO has stopped reading are
// given back to the kernel after compiling and after the first calls: OpenVINO's CPU plugin repacks
// most weights into its own layouts by then, and a page of a read-only file mapping read again later is
// only read again from the file, never lost. Memory of any other kind is copied once, as its lifetime
// may be its program's while a compiled model is shared beyond it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <executorch/runtime/core/freeable_buffer.h>

#include "blob/delegate_blob.h"
#include "delegate/compiling/aligned_bytes.h"

namespace executorch_openvino::delegate {

class HeldWeights {
 public:
  // Where the bytes live: "none" (no weights), "copy" (ExecuTorch's buffer is memory, whose lifetime
  // may be its program's: copied once, the buffer freed by the caller), "mapped" (a read-only mapping
  // of a file, which lives as long as its buffer: taken over and read in place).
  enum class Backing { kNone, kCopy, kMapped };

  HeldWeights() = default;
  // The weights `weights`, which lie inside `buffer`: in place when `buffer` is a read-only file
  // mapping (then taken over, `buffer` left empty, and its pages unlocked at once: ExecuTorch's
  // loaders may lock them, and locked the kernel could not reclaim them under memory pressure while
  // OpenVINO compiles), else copied (`buffer` untouched). Throws std::bad_alloc like new.
  static HeldWeights from(executorch::runtime::FreeableBuffer& buffer, blob::Span weights);
  HeldWeights(HeldWeights&& other) noexcept;
  HeldWeights& operator=(HeldWeights&& other) noexcept;
  HeldWeights(const HeldWeights&) = delete;
  HeldWeights& operator=(const HeldWeights&) = delete;

  const uint8_t* data() const { return weights_.data; }
  size_t size() const { return weights_.size; }
  Backing backing() const { return backing_; }

  // Give all the pages of a mapped buffer (the blob's XML and other sections too) back to the kernel
  // (no-ops for a copy): once the model is compiled (the CPU plugin repacks what static shapes let it),
  // and after each of the first kSettlingCalls inferences (a prompt's prefill and the first decode step
  // use different kernels, each preparing its weights at its first call). Thread-safe.
  void after_compile() const;
  void after_call() const;
  // Bytes given back so far.
  size_t given_back() const { return given_back_.load(); }

  static constexpr int kSettlingCalls = 2;

 private:
  void take_from(HeldWeights& other);

  std::optional<executorch::runtime::FreeableBuffer> mapping_;  // optional: FreeableBuffer cannot be move-assigned
  blob::Span mapped_{};                                          // the mapping's whole range
  AlignedBytes copy_;
  blob::Span weights_{};
  Backing backing_ = Backing::kNone;
  mutable std::atomic<int> calls_{0};
  mutable std::atomic<size_t> given_back_{0};
};

const char* backing_name(HeldWeights::Backing backing);

// Whether [data, data + size) lies in one read-only mapping of a file (Linux: read from
// /proc/self/maps; elsewhere never). Exposed for tests.
bool in_read_only_file_mapping(const void* data, size_t size);

// Unlocks the whole pages inside [data, data + size), so the kernel may reclaim them.
void unlock_pages(const void* data, size_t size);

// Gives the whole pages inside [data, data + size) back to the kernel; the caller knows they are a
// read-only file mapping, unlocked (locked pages cannot be dropped). Returns the bytes given back, 0 where unsupported
// or refused.
size_t give_back_mapped_pages(const void* data, size_t size);

}  // namespace executorch_openvino::delegate
