// Which of ExecuTorch's buffers the delegate reads in place (a read-only file mapping that is the
// buffer's own, as ExecuTorch's mmap loader makes for each segment) and which it copies (memory, a
// writable mapping, or a view into a larger mapping, which lives as long as somebody else's buffer),
// and that giving a mapping's pages back loses nothing. Tried once: a check of the one area holding the
// buffer's start fails AMappingSplit... (and copied a language model's segment ExecuTorch had locked);
// one without the first-page rule fails AViewIntoALargerMapping... (and would keep a program's inline
// data past the program).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "delegate/compiling/held_weights.h"
#include "scratch_path.h"

namespace executorch_openvino::delegate {
namespace {

using executorch::runtime::FreeableBuffer;

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

std::vector<uint8_t> pattern(size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 131 + 7);
  return bytes;
}

// A file of `pages` pages of pattern(), mapped as asked; unmapped and removed at the end.
class MappedFile {
 public:
  MappedFile(size_t pages, int protection, int flags) : scratch_("held_weights"), bytes_(pattern(pages * kPage)) {
    std::ofstream(scratch_.path(), std::ios::binary).write(reinterpret_cast<const char*>(bytes_.data()), bytes_.size());
    const int fd = ::open(scratch_.path().c_str(), protection & PROT_WRITE ? O_RDWR : O_RDONLY);
    data_ = static_cast<uint8_t*>(::mmap(nullptr, bytes_.size(), protection, flags, fd, 0));
    ::close(fd);
  }
  ~MappedFile() {
    if (data_ != MAP_FAILED && !handed_over_) ::munmap(data_, bytes_.size());
  }
  uint8_t* data() const { return data_; }
  size_t size() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  // A buffer that unmaps the whole file when freed, as ExecuTorch's mmap loader's buffers do.
  FreeableBuffer hand_over() {
    handed_over_ = true;
    return FreeableBuffer(data_, bytes_.size(), [](void*, void* data, size_t size) { ::munmap(data, size); });
  }

 private:
  testing::ScratchPath scratch_;
  std::vector<uint8_t> bytes_;
  uint8_t* data_ = static_cast<uint8_t*>(MAP_FAILED);
  bool handed_over_ = false;
};

TEST(HeldWeightsTest, ABuffersOwnReadOnlyFileMappingIsReadInPlace) {
  MappedFile file(4, PROT_READ, MAP_SHARED);
  ASSERT_NE(file.data(), MAP_FAILED);
  EXPECT_TRUE(in_read_only_file_mapping(file.data(), file.size()));
  EXPECT_TRUE(in_read_only_file_mapping(file.data() + 100, file.size() - 200))  // a segment within its pages
      << "ExecuTorch maps the pages around a segment: the data starts inside the first";
  MappedFile privately(4, PROT_READ, MAP_PRIVATE);
  EXPECT_TRUE(in_read_only_file_mapping(privately.data(), privately.size()));
}

TEST(HeldWeightsTest, AViewIntoALargerMappingMemoryOrAWritableMappingIsNot) {
  MappedFile file(4, PROT_READ, MAP_SHARED);
  // Inline data of a program: its pages are the program's, freed with it.
  EXPECT_FALSE(in_read_only_file_mapping(file.data() + kPage, kPage)) << "starts past the mapping's first page";
  EXPECT_FALSE(in_read_only_file_mapping(file.data(), 2 * kPage)) << "ends before the mapping's last page";
  const std::vector<uint8_t> heap = pattern(3 * kPage);
  EXPECT_FALSE(in_read_only_file_mapping(heap.data(), heap.size()));
  void* anonymous = ::mmap(nullptr, 2 * kPage, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_FALSE(in_read_only_file_mapping(anonymous, 2 * kPage));
  ::munmap(anonymous, 2 * kPage);
  MappedFile writable(2, PROT_READ | PROT_WRITE, MAP_PRIVATE);
  EXPECT_FALSE(in_read_only_file_mapping(writable.data(), writable.size())) << "its pages may differ from the file";
}

TEST(HeldWeightsTest, AMappingSplitByLockingPartOfItIsStillOneMapping) {
  // ExecuTorch's loaders lock what they map; a lock of part of it splits the kernel's areas.
  MappedFile file(6, PROT_READ, MAP_SHARED);
  if (::mlock(file.data() + 2 * kPage, 2 * kPage) != 0) GTEST_SKIP() << "mlock is not allowed here";
  EXPECT_TRUE(in_read_only_file_mapping(file.data(), file.size()));
  ::munlock(file.data() + 2 * kPage, 2 * kPage);
}

TEST(HeldWeightsTest, MappedWeightsAreTakenOverAndGivingTheirPagesBackLosesNothing) {
  MappedFile file(8, PROT_READ, MAP_SHARED);
  FreeableBuffer buffer = file.hand_over();
  const blob::Span weights{file.data() + 3 * kPage + 12, 4 * kPage};
  HeldWeights held = HeldWeights::from(buffer, weights);
  EXPECT_EQ(held.backing(), HeldWeights::Backing::kMapped);
  EXPECT_EQ(held.data(), weights.data) << "read in place";
  EXPECT_EQ(buffer.size(), 0u) << "taken over";
  held.after_compile();
  EXPECT_EQ(held.given_back(), file.size());
  EXPECT_EQ(std::memcmp(held.data(), file.bytes().data() + 3 * kPage + 12, weights.size), 0)
      << "pages given back are read again from the file";
  for (int call = 0; call < HeldWeights::kSettlingCalls + 3; ++call) held.after_call();
  EXPECT_EQ(held.given_back(), (1 + HeldWeights::kSettlingCalls) * file.size()) << "only the first calls";
  HeldWeights moved = std::move(held);
  EXPECT_EQ(moved.data(), weights.data);
  EXPECT_EQ(held.backing(), HeldWeights::Backing::kNone);  // NOLINT(bugprone-use-after-move): what a move leaves
}

TEST(HeldWeightsTest, MemoryIsCopiedAndLeftToItsOwner) {
  const std::vector<uint8_t> bytes = pattern(3 * kPage);
  bool freed = false;
  FreeableBuffer buffer(bytes.data(), bytes.size(), [](void* flag, void*, size_t) { *static_cast<bool*>(flag) = true; },
                        &freed);
  HeldWeights held = HeldWeights::from(buffer, blob::Span{bytes.data() + 10, 2 * kPage});
  EXPECT_EQ(held.backing(), HeldWeights::Backing::kCopy);
  EXPECT_NE(held.data(), bytes.data() + 10);
  EXPECT_EQ(std::memcmp(held.data(), bytes.data() + 10, 2 * kPage), 0);
  EXPECT_EQ(buffer.size(), bytes.size()) << "the owner frees its buffer";
  held.after_compile();
  held.after_call();
  EXPECT_EQ(held.given_back(), 0u);
  buffer.Free();
  EXPECT_TRUE(freed);
  EXPECT_EQ(HeldWeights::from(buffer, blob::Span{}).backing(), HeldWeights::Backing::kNone);
}

}  // namespace
}  // namespace executorch_openvino::delegate
