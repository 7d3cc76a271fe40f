#include "delegate/compiling/held_weights.h"

#include <cstdio>
#include <cstring>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace executorch_openvino::delegate {

using executorch::runtime::FreeableBuffer;

HeldWeights HeldWeights::from(FreeableBuffer& buffer, blob::Span weights) {
  HeldWeights held;
  if (weights.size == 0) return held;
  const blob::Span whole{static_cast<const uint8_t*>(buffer.data()), buffer.size()};
  if (in_read_only_file_mapping(whole.data, whole.size)) {
    held.mapping_.emplace(std::move(buffer));
    held.mapped_ = whole;
    held.weights_ = weights;
    held.backing_ = Backing::kMapped;
    unlock_pages(whole.data, whole.size);
    return held;
  }
  held.copy_ = AlignedBytes::copy_of(weights.data, weights.size);
  held.weights_ = blob::Span{held.copy_.data.get(), held.copy_.size};
  held.backing_ = Backing::kCopy;
  return held;
}

HeldWeights::HeldWeights(HeldWeights&& other) noexcept { take_from(other); }

HeldWeights& HeldWeights::operator=(HeldWeights&& other) noexcept {
  if (this != &other) take_from(other);
  return *this;
}

void HeldWeights::take_from(HeldWeights& other) {
  mapping_.reset();
  if (other.mapping_) mapping_.emplace(std::move(*other.mapping_));
  other.mapping_.reset();
  mapped_ = std::exchange(other.mapped_, blob::Span{});
  copy_ = std::move(other.copy_);
  weights_ = std::exchange(other.weights_, blob::Span{});
  backing_ = std::exchange(other.backing_, Backing::kNone);
  calls_ = other.calls_.load();
  given_back_ = other.given_back_.load();
}

void HeldWeights::after_compile() const {
  if (backing_ == Backing::kMapped) given_back_ += give_back_mapped_pages(mapped_.data, mapped_.size);
}

void HeldWeights::after_call() const {
  if (backing_ != Backing::kMapped) return;
  if (calls_.load(std::memory_order_relaxed) >= kSettlingCalls) return;  // the steady state: one load
  const int call = calls_.fetch_add(1) + 1;
  if (call > kSettlingCalls) return;
  given_back_ += give_back_mapped_pages(mapped_.data, mapped_.size);
}

const char* backing_name(HeldWeights::Backing backing) {
  switch (backing) {
    case HeldWeights::Backing::kNone: return "none";
    case HeldWeights::Backing::kCopy: return "copy";
    case HeldWeights::Backing::kMapped: return "mapped";
  }
  return "unknown";
}

#if defined(__linux__)

namespace {

// 0 where the system does not say (sysconf's -1 must not become a huge page).
uintptr_t page_size() {
  const long size = ::sysconf(_SC_PAGESIZE);
  return size > 0 ? static_cast<uintptr_t>(size) : 0;
}

}  // namespace

bool in_read_only_file_mapping(const void* data, size_t size) {
  const uintptr_t page = page_size();
  if (data == nullptr || size == 0 || page == 0) return false;
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t end = begin + size;
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return false;
  // The areas covering [begin, end), in address order: one mapping of a file, which locking part of it
  // (ExecuTorch's loaders lock what they map) splits into several areas.
  uintptr_t covered = 0;  // where the areas read so far end; 0 before the first
  unsigned long inode = 0, offset = 0;
  bool found = false;
  char line[4096];
  while (std::fgets(line, sizeof(line), maps) != nullptr) {
    unsigned long start = 0, stop = 0, area_offset = 0, area_inode = 0;
    char perms[8] = {0};
    char path[4096] = {0};
    // start-end perms offset dev inode [path]
    if (std::sscanf(line, "%lx-%lx %7s %lx %*s %lu %4095[^\n]", &start, &stop, perms, &area_offset, &area_inode,
                    path) < 5) {
      continue;
    }
    if (covered == 0) {
      if (begin < start || begin >= stop) continue;
      // The buffer's own mapping, which lives as long as the buffer (ExecuTorch maps the pages around
      // each segment it loads): starting at the buffer's first page. A view into a larger mapping (a
      // program's inline data) lives as long as its program.
      if (start != begin / page * page) break;
      inode = area_inode;
    } else if (start != covered || area_inode != inode || area_offset != offset) {
      break;  // not the same mapping going on
    }
    const char* name = path;
    while (*name == ' ') ++name;
    // Not writable (no page of it can differ from the file; ExecuTorch maps read-only), and a file's.
    if (perms[0] != 'r' || perms[1] != '-' || area_inode == 0 || name[0] != '/') break;
    covered = stop;
    offset = area_offset + (stop - start);
    if (covered >= end) {
      found = covered == (end + page - 1) / page * page;  // and ending at its last page
      break;
    }
  }
  std::fclose(maps);
  return found;
}

namespace {

// The whole pages inside [data, data + size): start and length, length 0 when there is none.
std::pair<void*, size_t> whole_pages(const void* data, size_t size) {
  const uintptr_t page = page_size();
  if (page == 0 || data == nullptr) return {nullptr, 0};
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + size) / page * page;
  if (last <= first) return {nullptr, 0};
  return {reinterpret_cast<void*>(first), last - first};
}

}  // namespace

void unlock_pages(const void* data, size_t size) {
  const auto [start, length] = whole_pages(data, size);
  if (length != 0) ::munlock(start, length);  // unlocking pages that are not locked is harmless
}

size_t give_back_mapped_pages(const void* data, size_t size) {
  const auto [start, length] = whole_pages(data, size);
  if (length == 0) return 0;
  return ::madvise(start, length, MADV_DONTNEED) == 0 ? length : 0;
}

#else

bool in_read_only_file_mapping(const void*, size_t) { return false; }
void unlock_pages(const void*, size_t) {}
size_t give_back_mapped_pages(const void*, size_t) { return 0; }

#endif

}  // namespace executorch_openvino::delegate
