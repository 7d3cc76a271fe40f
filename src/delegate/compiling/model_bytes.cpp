#include "delegate/compiling/model_bytes.h"

#include <cerrno>
#include <cstring>
#include <utility>

#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace executorch_openvino::delegate {

ModelBytes::ModelBytes(AlignedBytes heap) : heap_(std::move(heap)) {}

std::optional<ModelBytes> ModelBytes::map(const std::filesystem::path& file, std::string* problem) {
#if defined(_WIN32)
  (void)file;
  *problem = "files are read, not mapped, on Windows";
  return std::nullopt;
#else
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *problem = std::string("open: ") + std::strerror(errno);
    return std::nullopt;
  }
  struct stat status {};
  std::optional<ModelBytes> bytes;
  if (::fstat(fd, &status) != 0) {
    *problem = std::string("fstat: ") + std::strerror(errno);
  } else if (status.st_size <= 0) {
    *problem = "the file is empty";
  } else {
    const auto size = static_cast<size_t>(status.st_size);
    void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping == MAP_FAILED) {
      *problem = std::string("mmap: ") + std::strerror(errno);
    } else {
      bytes.emplace();
      bytes->mapping_ = mapping;
      bytes->mapping_size_ = size;
    }
  }
  ::close(fd);  // the mapping keeps the file
  return bytes;
#endif
}

ModelBytes::ModelBytes(ModelBytes&& other) noexcept
    : heap_(std::move(other.heap_)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_size_(std::exchange(other.mapping_size_, 0)) {}

ModelBytes& ModelBytes::operator=(ModelBytes&& other) noexcept {
  if (this != &other) {
    unmap();
    heap_ = std::move(other.heap_);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_size_ = std::exchange(other.mapping_size_, 0);
  }
  return *this;
}

ModelBytes::~ModelBytes() { unmap(); }

void ModelBytes::unmap() {
#if !defined(_WIN32)
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
#endif
  mapping_ = nullptr;
  mapping_size_ = 0;
}

const char* ModelBytes::kind() const {
  if (mapping_ != nullptr) return "mapped";
  return heap_.data ? "copy" : "none";
}

}  // namespace executorch_openvino::delegate
