// NumPy .npy files, read and written without NumPy and without ExecuTorch: the runner's inputs and
// outputs. Only what a model's tensors need: little-endian, C order, nine element types. Anything
// else (big-endian, Fortran order, object or structured dtypes, ...) is refused with a message
// that says what the file holds, rather than guessed at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace executorch_openvino::runner::npy {

// The element types the runner exchanges, named after their .npy descr.
enum class DType {
  kFloat16,  // <f2
  kFloat32,  // <f4
  kFloat64,  // <f8
  kInt8,     // |i1
  kInt16,    // <i2
  kInt32,    // <i4
  kInt64,    // <i8
  kUInt8,    // |u1
  kBool,     // |b1
};

size_t element_size(DType dtype);
// The .npy descr ("<f4"), which is also how messages name the type.
const char* descr(DType dtype);
// NumPy's name ("float32"), for messages aimed at people.
const char* numpy_name(DType dtype);

// A C-order array: `data` holds product(shape) * element_size(dtype) bytes, little-endian.
// An empty shape is a 0-d array (one element).
struct Array {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

// Every reading or writing failure; what() names the file and the problem.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads a whole .npy file (format versions 1, 2 and 3). Throws Error when the file cannot be read,
// is not a .npy file, is truncated or has trailing bytes, or holds a type or layout listed above
// as unsupported.
Array read(const std::string& path);

// Parses .npy bytes already in memory; `name` is only used in messages. Same checks as read().
Array parse(const uint8_t* bytes, size_t size, const std::string& name);

// Writes `array` as a version 1.0 file (2.0 when the header would not fit), replacing any file
// there. Throws Error when the data size does not match the shape or the file cannot be written.
void write(const std::string& path, const Array& array);

// The number of elements of `shape` (1 for a 0-d shape). Throws Error on negative dimensions or
// overflow, so a hostile header cannot make the reader under-allocate.
size_t element_count(const std::vector<int64_t>& shape);

// "(1, 3, 224, 224)", the way NumPy prints shapes.
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace executorch_openvino::runner::npy
