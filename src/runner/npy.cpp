// The .npy reader and writer (see npy.h). The format: the magic "\x93NUMPY", a version byte pair,
// a little-endian header length (2 bytes in version 1, 4 bytes in versions 2 and 3), then a
// Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded with spaces and
// a newline, then the raw elements. The header is untrusted input, so every length and count is
// checked before it is used to index or allocate.
#include "runner/npy.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

// Elements are copied byte for byte between files and tensors, which is only right on a
// little-endian host (every platform the delegate targets).
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npy reader and writer assume a little-endian host"
#endif

namespace executorch_openvino::runner::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct TypeInfo {
  DType dtype;
  const char* descr;
  const char* numpy_name;
  size_t size;
};

constexpr TypeInfo kTypes[] = {
    {DType::kFloat16, "<f2", "float16", 2}, {DType::kFloat32, "<f4", "float32", 4},
    {DType::kFloat64, "<f8", "float64", 8}, {DType::kInt8, "|i1", "int8", 1},
    {DType::kInt16, "<i2", "int16", 2},     {DType::kInt32, "<i4", "int32", 4},
    {DType::kInt64, "<i8", "int64", 8},     {DType::kUInt8, "|u1", "uint8", 1},
    {DType::kBool, "|b1", "bool", 1},
};

const TypeInfo& info(DType dtype) {
  for (const TypeInfo& type : kTypes) {
    if (type.dtype == dtype) return type;
  }
  throw Error("internal error: unknown npy dtype");
}

std::string supported_list() {
  std::string list;
  for (const TypeInfo& type : kTypes) list += (list.empty() ? "" : " ") + std::string(type.descr);
  return list;
}

// A recursive-descent reader for the one dict literal NumPy writes. Positions are reported so a
// hand-edited or foreign header gets a message pointing at the problem.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& name) : text_(text), name_(name) {}

  void parse(std::string& descr, bool& fortran_order, std::vector<int64_t>& shape) {
    bool seen_descr = false, seen_order = false, seen_shape = false;
    skip_space();
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = parse_string();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() == '[') throw Error(name_ + ": structured arrays (a list 'descr') are not supported");
        descr = parse_string();
        seen_descr = true;
      } else if (key == "fortran_order") {
        fortran_order = parse_bool();
        seen_order = true;
      } else if (key == "shape") {
        shape = parse_shape();
        seen_shape = true;
      } else {
        fail("unexpected key '" + key + "' in the header");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}'");
    }
    ++pos_;  // the closing brace
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the header's closing brace");
    if (!seen_descr || !seen_order || !seen_shape) {
      fail("the header lacks one of 'descr', 'fortran_order' and 'shape'");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(name_ + ": malformed .npy header (" + what + " at offset " + std::to_string(pos_) + ")");
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  std::string parse_string() {
    char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) fail("unterminated string");
    std::string value = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return value;
  }

  bool parse_bool() {
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }

  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> shape;
    expect('(');
    skip_space();
    while (peek() != ')') {
      if (peek() < '0' || peek() > '9') fail("expected a non-negative dimension");
      int64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        int digit = peek() - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) fail("dimension too large");
        value = value * 10 + digit;
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long literals, in files written by old NumPy
      shape.push_back(value);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != ')') {
        fail("expected ',' or ')' in the shape");
      }
    }
    ++pos_;
    return shape;
  }

  const std::string& text_;
  const std::string& name_;
  size_t pos_ = 0;
};

DType dtype_from_descr(const std::string& descr, const std::string& name) {
  for (const TypeInfo& type : kTypes) {
    if (descr == type.descr) return type.dtype;
  }
  std::string hint;
  if (!descr.empty() && descr[0] == '>') {
    hint = " (big-endian data: convert with array.astype(array.dtype.newbyteorder('<')))";
  }
  throw Error(name + ": unsupported .npy element type '" + descr + "'" + hint + "; supported: " +
              supported_list());
}

uint32_t read_le(const uint8_t* bytes, size_t count) {
  uint32_t value = 0;
  for (size_t i = 0; i < count; ++i) value |= static_cast<uint32_t>(bytes[i]) << (8 * i);
  return value;
}

}  // namespace

size_t element_size(DType dtype) { return info(dtype).size; }
const char* descr(DType dtype) { return info(dtype).descr; }
const char* numpy_name(DType dtype) { return info(dtype).numpy_name; }

size_t element_count(const std::vector<int64_t>& shape) {
  size_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0) throw Error("negative dimension in shape " + shape_string(shape));
    if (dim != 0 && count > std::numeric_limits<size_t>::max() / static_cast<uint64_t>(dim)) {
      throw Error("shape " + shape_string(shape) + " has too many elements");
    }
    count *= static_cast<size_t>(dim);
  }
  return count;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

Array parse(const uint8_t* bytes, size_t size, const std::string& name) {
  if (size < kMagicSize + 2 || std::memcmp(bytes, kMagic, kMagicSize) != 0) {
    throw Error(name + ": not a .npy file (no \\x93NUMPY magic)");
  }
  const uint8_t major = bytes[kMagicSize];
  if (major < 1 || major > 3) {
    throw Error(name + ": unsupported .npy format version " + std::to_string(major) + "." +
                std::to_string(bytes[kMagicSize + 1]));
  }
  const size_t length_size = major == 1 ? 2 : 4;
  const size_t prefix = kMagicSize + 2 + length_size;
  if (size < prefix) throw Error(name + ": truncated .npy file (header length missing)");
  const size_t header_size = read_le(bytes + kMagicSize + 2, length_size);
  if (header_size > size - prefix) {
    throw Error(name + ": truncated .npy file (header of " + std::to_string(header_size) +
                " bytes, file of " + std::to_string(size) + ")");
  }
  const std::string header(reinterpret_cast<const char*>(bytes + prefix), header_size);

  std::string descr_text;
  bool fortran_order = false;
  Array array;
  HeaderParser(header, name).parse(descr_text, fortran_order, array.shape);
  array.dtype = dtype_from_descr(descr_text, name);
  if (fortran_order) {
    throw Error(name + ": the array is stored in Fortran order; save a C-ordered copy "
                       "(numpy.ascontiguousarray) instead");
  }

  size_t count;
  try {
    count = element_count(array.shape);
  } catch (const Error& error) {
    throw Error(name + ": " + error.what());
  }
  const size_t elem = element_size(array.dtype);
  if (count > std::numeric_limits<size_t>::max() / elem) {
    throw Error(name + ": shape " + shape_string(array.shape) + " is too large");
  }
  const size_t data_size = count * elem;
  const size_t available = size - prefix - header_size;
  if (available != data_size) {
    throw Error(name + ": " + (available < data_size ? "truncated" : "trailing bytes in") + " .npy file: shape " +
                shape_string(array.shape) + " of " + descr_text + " needs " + std::to_string(data_size) +
                " data bytes, the file has " + std::to_string(available));
  }
  array.data.assign(bytes + prefix + header_size, bytes + size);
  return array;
}

Array read(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw Error(path + ": read error");
  return parse(bytes.data(), bytes.size(), path);
}

void write(const std::string& path, const Array& array) {
  const size_t expected = element_count(array.shape) * element_size(array.dtype);
  if (array.data.size() != expected) {
    throw Error(path + ": internal error: " + std::to_string(array.data.size()) + " data bytes for shape " +
                shape_string(array.shape) + " of " + descr(array.dtype));
  }
  std::string header = std::string("{'descr': '") + descr(array.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape_string(array.shape) + ", }";
  // NumPy pads the header with spaces and ends it with a newline so the data starts at a multiple
  // of 64 bytes; readers that map the file rely on that alignment.
  auto padded = [&header](size_t prefix) {
    std::string text = header;
    const size_t unpadded = prefix + text.size() + 1;
    text.append((64 - unpadded % 64) % 64, ' ');
    return text + '\n';
  };
  uint8_t major = 1;
  std::string text = padded(kMagicSize + 2 + 2);
  if (text.size() > 0xFFFF) {
    major = 2;
    text = padded(kMagicSize + 2 + 4);
  }

  std::string prefix(kMagic, kMagicSize);
  prefix += static_cast<char>(major);
  prefix += '\0';
  const size_t length_size = major == 1 ? 2 : 4;
  for (size_t i = 0; i < length_size; ++i) prefix += static_cast<char>((text.size() >> (8 * i)) & 0xFF);

  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(path + ": cannot create (" + std::strerror(errno) + ")");
  file.write(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.write(reinterpret_cast<const char*>(array.data.data()), static_cast<std::streamsize>(array.data.size()));
  file.close();
  if (!file) throw Error(path + ": write error (" + std::strerror(errno) + ")");
}

}  // namespace executorch_openvino::runner::npy
