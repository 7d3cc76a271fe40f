// Inputs from MethodMeta, .npy files and literals; outputs to .npy arrays (see method_values.h).
//
// Layout: a .npy file is C-ordered (logical order), while a method's tensor may be declared with
// another dim order (channels-last, say), in which case its bytes are laid out in that order. Both
// directions go through one strided copy, so a channels-last input or output is permuted rather
// than silently misread.
#include "runner/method_values.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/tag.h>

namespace executorch_openvino::runner {
namespace {

using executorch::aten::ScalarType;
using executorch::runtime::EValue;
using executorch::runtime::MethodMeta;
using executorch::runtime::Tag;
using executorch::runtime::TensorInfo;

std::string tag_name(Tag tag) {
  switch (tag) {
    case Tag::Int:
      return "an int";
    case Tag::Double:
      return "a float";
    case Tag::Bool:
      return "a bool";
    case Tag::String:
      return "a string";
    case Tag::None:
      return "None";
    default:
      return std::string("a ") + executorch::runtime::tag_to_string(tag);
  }
}

// The .npy type that holds a scalar type byte for byte, or false when there is none.
bool npy_dtype_for(ScalarType type, npy::DType& out) {
  switch (type) {
    case ScalarType::Half: out = npy::DType::kFloat16; return true;
    case ScalarType::Float: out = npy::DType::kFloat32; return true;
    case ScalarType::Double: out = npy::DType::kFloat64; return true;
    case ScalarType::Char: out = npy::DType::kInt8; return true;
    case ScalarType::Short: out = npy::DType::kInt16; return true;
    case ScalarType::Int: out = npy::DType::kInt32; return true;
    case ScalarType::Long: out = npy::DType::kInt64; return true;
    case ScalarType::Byte: out = npy::DType::kUInt8; return true;
    case ScalarType::Bool: out = npy::DType::kBool; return true;
    default: return false;
  }
}

size_t scalar_type_size(ScalarType type) {
  if (type == ScalarType::BFloat16) return 2;
  npy::DType dtype;
  if (!npy_dtype_for(type, dtype)) return 0;
  return npy::element_size(dtype);
}

std::vector<int64_t> to_shape(executorch::runtime::Span<const int32_t> sizes) {
  return std::vector<int64_t>(sizes.begin(), sizes.end());
}

bool is_contiguous_order(executorch::runtime::Span<const uint8_t> dim_order) {
  for (size_t i = 0; i < dim_order.size(); ++i) {
    if (dim_order[i] != i) return false;
  }
  return true;
}

// Element strides of a tensor of `shape` whose dimensions are laid out outermost to innermost in
// `dim_order` (the identity order gives C-order strides).
std::vector<int64_t> strides_for(const std::vector<int64_t>& shape, const std::vector<uint8_t>& dim_order) {
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t stride = 1;
  for (size_t k = dim_order.size(); k-- > 0;) {
    strides[dim_order[k]] = stride;
    stride *= std::max<int64_t>(shape[dim_order[k]], 1);
  }
  return strides;
}

// Copies every element of `shape` from `src` (element strides `src_strides`) to `dst` (element
// strides `dst_strides`), `elem` bytes each. Walks the logical index like an odometer.
void strided_copy(const uint8_t* src, const std::vector<int64_t>& src_strides, uint8_t* dst,
                  const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& shape, size_t elem) {
  const size_t count = npy::element_count(shape);
  if (count == 0) return;
  std::vector<int64_t> index(shape.size(), 0);
  int64_t src_offset = 0, dst_offset = 0;
  for (size_t n = 0; n < count; ++n) {
    std::memcpy(dst + dst_offset * static_cast<int64_t>(elem), src + src_offset * static_cast<int64_t>(elem), elem);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) {
        src_offset += src_strides[d];
        dst_offset += dst_strides[d];
        break;
      }
      src_offset -= src_strides[d] * (shape[d] - 1);
      dst_offset -= dst_strides[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

// SplitMix64: a tiny generator with a fixed seed, so default inputs are the same on every run and
// every machine (std:: distributions are not specified bit for bit).
class Sequence {
 public:
  explicit Sequence(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1), on a 2^-23 grid so every value is exact in float32.
  float next_unit() { return static_cast<float>(next() >> 40) * (1.0f / 8388608.0f) - 1.0f; }

 private:
  uint64_t state_;
};

template <typename T>
void store(std::vector<uint8_t>& data, size_t i, T value) {
  std::memcpy(data.data() + i * sizeof(T), &value, sizeof(T));
}

// Deterministic values for input `index`, in storage order (the values are arbitrary, so the
// dim order does not matter).
std::vector<uint8_t> generate(ScalarType type, size_t count, size_t index) {
  const size_t elem = scalar_type_size(type);
  std::vector<uint8_t> data(count * elem);
  Sequence sequence(0x5EED0000ull + index);
  for (size_t i = 0; i < count; ++i) {
    switch (type) {
      case ScalarType::Float: store(data, i, sequence.next_unit()); break;
      case ScalarType::Double: store(data, i, static_cast<double>(sequence.next_unit())); break;
      case ScalarType::Half: store(data, i, executorch::aten::Half(sequence.next_unit()).x); break;
      case ScalarType::BFloat16: store(data, i, executorch::aten::BFloat16(sequence.next_unit()).x); break;
      case ScalarType::Byte: store(data, i, static_cast<uint8_t>(i % 7)); break;
      case ScalarType::Char: store(data, i, static_cast<int8_t>(i % 7)); break;
      case ScalarType::Short: store(data, i, static_cast<int16_t>(i % 7)); break;
      case ScalarType::Int: store(data, i, static_cast<int32_t>(i % 7)); break;
      case ScalarType::Long: store(data, i, static_cast<int64_t>(i % 7)); break;
      case ScalarType::Bool: store(data, i, static_cast<uint8_t>(i % 2 == 0)); break;
      default: break;  // refused by the caller
    }
  }
  return data;
}

std::string input_name(size_t index, const std::string& spec) {
  std::string name = "input " + std::to_string(index);
  if (!spec.empty() && spec != "default") name += " (" + spec + ")";
  return name;
}

// A literal scalar from "int:5", "float:0.5" or "bool:true", checked against the declared tag.
EValue parse_scalar(const std::string& spec, Tag tag, size_t index) {
  const size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string text = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const std::string name = input_name(index, spec);
  const char* expected = tag == Tag::Int ? "int" : tag == Tag::Double ? "float" : "bool";
  const bool kind_matches = (tag == Tag::Int && kind == "int") ||
                            (tag == Tag::Double && (kind == "float" || kind == "double")) ||
                            (tag == Tag::Bool && kind == "bool");
  if (!kind_matches) {
    throw ValueError(name + ": the method declares " + tag_name(tag) + " here; pass --input " + expected + ":VALUE");
  }
  char* end = nullptr;
  errno = 0;
  if (tag == Tag::Int) {
    long long value = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE) throw ValueError(name + ": '" + text + "' is not an integer");
    return EValue(static_cast<int64_t>(value));
  }
  if (tag == Tag::Double) {
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE) throw ValueError(name + ": '" + text + "' is not a number");
    return EValue(value);
  }
  if (text == "true" || text == "True" || text == "1") return EValue(true);
  if (text == "false" || text == "False" || text == "0") return EValue(false);
  throw ValueError(name + ": '" + text + "' is not a bool (true/false/1/0)");
}

bool is_scalar_spec(const std::string& spec) {
  for (const char* prefix : {"int:", "float:", "double:", "bool:"}) {
    if (spec.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

PreparedInput tensor_input(const TensorInfo& info, const std::string& spec, size_t index) {
  const ScalarType type = info.scalar_type();
  const std::vector<int64_t> declared = to_shape(info.sizes());
  const std::vector<uint8_t> dim_order(info.dim_order().begin(), info.dim_order().end());
  const std::vector<executorch::aten::SizesType> declared_sizes(info.sizes().begin(), info.sizes().end());
  const std::string name = input_name(index, spec);
  if (scalar_type_size(type) == 0) {
    throw ValueError(name + ": the method declares a " + scalar_type_name(type) +
                     " tensor, which the runner cannot provide");
  }

  PreparedInput input;
  if (spec.empty() || spec == "default") {
    input.tensor = executorch::extension::make_tensor_ptr(declared_sizes, generate(type, npy::element_count(declared), index),
                                                          dim_order, {}, type);
    input.description = describe(info) + ", deterministic";
  } else {
    if (is_scalar_spec(spec)) throw ValueError(name + ": the method declares a tensor here (" + describe(info) + ")");
    npy::DType wanted;
    if (!npy_dtype_for(type, wanted)) {
      throw ValueError(name + ": the method declares a " + scalar_type_name(type) +
                       " tensor, which a .npy file cannot hold; leave this input to the runner with --input default");
    }
    npy::Array array;
    try {
      array = npy::read(spec);
    } catch (const npy::Error& error) {
      throw ValueError("input " + std::to_string(index) + ": " + error.what());
    }
    if (array.dtype != wanted) {
      throw ValueError(name + ": dtype " + npy::numpy_name(array.dtype) + " does not match the method's declared " +
                       describe(info) + "; convert with array.astype(numpy." + npy::numpy_name(wanted) + ")");
    }
    // Equal shapes, or (for a method exported with dynamic shapes, whose declared sizes are the
    // upper bounds) a same-rank shape within them. ExecuTorch's set_input has the final word on
    // the latter.
    bool fits = array.shape.size() == declared.size();
    for (size_t d = 0; fits && d < declared.size(); ++d) fits = array.shape[d] <= declared[d];
    if (!fits) {
      throw ValueError(name + ": shape " + npy::shape_string(array.shape) +
                       " does not match the method's declared input " + describe(info));
    }
    std::vector<executorch::aten::SizesType> sizes(array.shape.begin(), array.shape.end());
    std::vector<uint8_t> data = std::move(array.data);
    if (!is_contiguous_order(info.dim_order())) {
      std::vector<uint8_t> permuted(data.size());
      const std::vector<uint8_t> identity = [&] {
        std::vector<uint8_t> order(array.shape.size());
        std::iota(order.begin(), order.end(), 0);
        return order;
      }();
      strided_copy(data.data(), strides_for(array.shape, identity), permuted.data(),
                   strides_for(array.shape, dim_order), array.shape, npy::element_size(wanted));
      data = std::move(permuted);
    }
    input.tensor = executorch::extension::make_tensor_ptr(std::move(sizes), std::move(data), dim_order, {}, type);
    input.description = scalar_type_name(type) + " " + npy::shape_string(array.shape) + " from " + spec;
  }
  input.value = EValue(*input.tensor);
  return input;
}

}  // namespace

std::string scalar_type_name(ScalarType type) {
  switch (type) {
    case ScalarType::Byte: return "uint8";
    case ScalarType::Char: return "int8";
    case ScalarType::Short: return "int16";
    case ScalarType::Int: return "int32";
    case ScalarType::Long: return "int64";
    case ScalarType::Half: return "float16";
    case ScalarType::Float: return "float32";
    case ScalarType::Double: return "float64";
    case ScalarType::Bool: return "bool";
    case ScalarType::BFloat16: return "bfloat16";
    default: return "scalar type " + std::to_string(static_cast<int>(type));
  }
}

std::string describe(const TensorInfo& info) {
  std::string text = scalar_type_name(info.scalar_type()) + " " + npy::shape_string(to_shape(info.sizes()));
  if (!is_contiguous_order(info.dim_order())) {
    text += " dim order (";
    for (size_t i = 0; i < info.dim_order().size(); ++i) {
      text += (i ? ", " : "") + std::to_string(info.dim_order()[i]);
    }
    text += ")";
  }
  return text;
}

std::string describe(const EValue& value) {
  switch (value.tag) {
    case Tag::Tensor: {
      const auto& tensor = value.toTensor();
      return scalar_type_name(tensor.scalar_type()) + " " +
             npy::shape_string(std::vector<int64_t>(tensor.sizes().begin(), tensor.sizes().end()));
    }
    case Tag::Int: return "int " + std::to_string(value.toInt());
    case Tag::Double: return "float " + std::to_string(value.toDouble());
    case Tag::Bool: return std::string("bool ") + (value.toBool() ? "true" : "false");
    default: return tag_name(value.tag);
  }
}

std::vector<PreparedInput> prepare_inputs(const MethodMeta& meta, const std::vector<std::string>& specs) {
  const size_t count = meta.num_inputs();
  if (!specs.empty() && specs.size() != count) {
    throw ValueError("method '" + std::string(meta.name()) + "' takes " + std::to_string(count) + " input" +
                     (count == 1 ? "" : "s") + " but " + std::to_string(specs.size()) +
                     " --input were given (give one per input, in order; 'default' generates one)");
  }
  std::vector<PreparedInput> inputs;
  for (size_t i = 0; i < count; ++i) {
    const std::string spec = specs.empty() ? "" : specs[i];
    auto tag = meta.input_tag(i);
    if (!tag.ok()) throw ValueError("input " + std::to_string(i) + ": the program does not describe it");
    switch (tag.get()) {
      case Tag::Tensor: {
        auto info = meta.input_tensor_meta(i);
        if (!info.ok()) throw ValueError("input " + std::to_string(i) + ": the program does not describe its tensor");
        inputs.push_back(tensor_input(info.get(), spec, i));
        break;
      }
      case Tag::Int:
      case Tag::Double:
      case Tag::Bool: {
        if (spec.empty() || spec == "default") {
          const char* kind = tag.get() == Tag::Int ? "int" : tag.get() == Tag::Double ? "float" : "bool";
          throw ValueError("input " + std::to_string(i) + " is " + tag_name(tag.get()) +
                           ", which has no default; pass it with --input " + kind +
                           ":VALUE (the value the program was exported with), and one --input per input");
        }
        PreparedInput input;
        input.value = parse_scalar(spec, tag.get(), i);
        input.description = describe(input.value);
        inputs.push_back(std::move(input));
        break;
      }
      case Tag::None: {
        PreparedInput input;  // EValue() is None; the runner leaves such inputs unset
        input.description = "None";
        inputs.push_back(std::move(input));
        break;
      }
      default:
        throw ValueError("input " + std::to_string(i) + " is " + tag_name(tag.get()) +
                         ", which the runner cannot provide");
    }
  }
  return inputs;
}

npy::Array output_to_array(const EValue& value, size_t index) {
  npy::Array array;
  switch (value.tag) {
    case Tag::Int:
      array.dtype = npy::DType::kInt64;
      array.data.resize(8);
      store(array.data, 0, value.toInt());
      return array;
    case Tag::Double:
      array.dtype = npy::DType::kFloat64;
      array.data.resize(8);
      store(array.data, 0, value.toDouble());
      return array;
    case Tag::Bool:
      array.dtype = npy::DType::kBool;
      array.data.resize(1);
      store(array.data, 0, static_cast<uint8_t>(value.toBool()));
      return array;
    case Tag::Tensor:
      break;
    default:
      throw ValueError("output " + std::to_string(index) + " is " + tag_name(value.tag) +
                       ", which has no .npy form");
  }

  const auto& tensor = value.toTensor();
  const ScalarType type = tensor.scalar_type();
  array.shape.assign(tensor.sizes().begin(), tensor.sizes().end());
  const std::vector<int64_t> strides(tensor.strides().begin(), tensor.strides().end());
  const size_t count = npy::element_count(array.shape);
  const auto* source = static_cast<const uint8_t*>(tensor.const_data_ptr());
  if (count > 0 && source == nullptr) throw ValueError("output " + std::to_string(index) + " has no data");

  std::vector<int64_t> c_order(array.shape.size(), 1);
  for (size_t d = array.shape.size(); d-- > 1;) c_order[d - 1] = c_order[d] * std::max<int64_t>(array.shape[d], 1);

  if (type == ScalarType::BFloat16) {
    // Widened element by element: bfloat16 is the upper half of a float32.
    std::vector<uint8_t> ordered(count * 2);
    strided_copy(source, strides, ordered.data(), c_order, array.shape, 2);
    array.dtype = npy::DType::kFloat32;
    array.data.resize(count * 4);
    for (size_t i = 0; i < count; ++i) {
      uint16_t bits;
      std::memcpy(&bits, ordered.data() + 2 * i, 2);
      const uint32_t widened = static_cast<uint32_t>(bits) << 16;
      std::memcpy(array.data.data() + 4 * i, &widened, 4);
    }
    return array;
  }
  if (!npy_dtype_for(type, array.dtype)) {
    throw ValueError("output " + std::to_string(index) + " is a " + scalar_type_name(type) +
                     " tensor, which has no .npy form");
  }
  array.data.resize(count * npy::element_size(array.dtype));
  strided_copy(source, strides, array.data.data(), c_order, array.shape, npy::element_size(array.dtype));
  return array;
}

}  // namespace executorch_openvino::runner
