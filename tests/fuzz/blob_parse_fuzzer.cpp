// libFuzzer target: the delegate blob parser (src/blob), fed every input twice, as given and with
// its checksums repaired (see blob_checksums.h), so the checks behind the CRCs are reached too.
// Besides the sanitizers' findings it stops on a broken promise of parse():
//   - a refusal always says why, in a message of bounded size (it ends up in logs);
//   - an accepted blob's XML, weights and precompiled models lie inside the input, the XML
//     non-empty, each precompiled model naming its device and OpenVINO version;
//   - what it accepted, written again with build(), parses to the same content: every section
//     parse() reads (XML, weights, precompiled models, input arguments, named weights, input bounds);
//   - in the seed replay test (tests/fuzz/replay.cmake), every seed is accepted.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "blob/delegate_blob.h"
#include "blob_checksums.h"

namespace {

using executorch_openvino::blob::InputArguments;
using executorch_openvino::blob::InputBound;
using executorch_openvino::blob::NamedWeights;
using executorch_openvino::blob::ParsedBlob;
using executorch_openvino::blob::ParseResult;
using executorch_openvino::blob::PrecompiledInput;
using executorch_openvino::blob::Span;

// Longer messages would mean echoing input bytes into the log; none of parse()'s needs it.
constexpr size_t kMaxErrorLength = 512;

[[noreturn]] void broken(const char* promise, const ParseResult& result) {
  std::fprintf(stderr, "blob_parse_fuzzer: parse() broke its promise: %s (error: '%.200s', %zu bytes)\n", promise,
               result.error.c_str(), result.error.size());
  std::abort();
}

bool inside(const Span& span, const uint8_t* data, size_t size) {
  if (span.size == 0) return true;
  return span.data >= data && span.data <= data + size && span.size <= static_cast<size_t>(data + size - span.data);
}

std::vector<uint8_t> bytes(const Span& span) { return {span.data, span.data + span.size}; }

bool same(const Span& a, const Span& b) {
  return a.size == b.size && (a.size == 0 || std::memcmp(a.data, b.data, a.size) == 0);
}

bool same_arguments(const std::optional<InputArguments>& a, const std::optional<InputArguments>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->call_inputs == b->call_inputs && a->of_ir_input == b->of_ir_input);
}

bool same_named_weights(const std::optional<NamedWeights>& a, const std::optional<NamedWeights>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->key == b->key && a->size == b->size && a->crc == b->crc);
}

bool same_bounds(const std::vector<InputBound>& a, const std::vector<InputBound>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].input != b[i].input || a[i].low != b[i].low || a[i].high != b[i].high) return false;
  }
  return true;
}

// Every section parse() reads (a kind it skips has no content here); the minor version is not
// content (build() writes the newest kind's, a writer may have written a higher one).
bool same_content(const ParsedBlob& a, const ParsedBlob& b) {
  if (!same(a.ir_xml, b.ir_xml) || !same(a.ir_weights, b.ir_weights)) return false;
  if (a.precompiled.size() != b.precompiled.size()) return false;
  for (size_t i = 0; i < a.precompiled.size(); ++i) {
    const auto& x = a.precompiled[i];
    const auto& y = b.precompiled[i];
    if (x.device != y.device || x.openvino_version != y.openvino_version || x.properties != y.properties ||
        !same(x.model, y.model)) {
      return false;
    }
  }
  return same_arguments(a.input_arguments, b.input_arguments) && same_named_weights(a.named_weights, b.named_weights) &&
         same_bounds(a.input_bounds, b.input_bounds) && a.grown_caches == b.grown_caches;
}

// Set by the seed replay test (tests/fuzz/replay.cmake): every seed is a valid blob.
const bool seeds_are_valid = std::getenv("EOV_FUZZ_SEEDS_ARE_VALID") != nullptr;

void check(const uint8_t* data, size_t size, bool must_parse) {
  const ParseResult result = executorch_openvino::blob::parse(data, size);
  if (!result.blob && must_parse) broken("a seed was refused", result);
  if (!result.blob) {
    if (result.error.empty()) broken("a refusal without a message", result);
    if (result.error.size() > kMaxErrorLength) broken("a message longer than 512 bytes", result);
    return;
  }
  if (!result.error.empty()) broken("an accepted blob with an error message", result);
  const Span xml = result.blob->ir_xml;
  const Span weights = result.blob->ir_weights;
  if (xml.size == 0) broken("an accepted blob without XML", result);
  if (!inside(xml, data, size) || !inside(weights, data, size)) broken("a view outside the input", result);
  std::vector<PrecompiledInput> precompiled;
  for (const auto& model : result.blob->precompiled) {
    if (!inside(model.model, data, size)) broken("a precompiled model outside the input", result);
    if (model.device.empty() || model.openvino_version.empty()) broken("a precompiled model unnamed", result);
    precompiled.push_back({model.device, model.openvino_version, model.properties, bytes(model.model)});
  }

  const std::string xml_text(reinterpret_cast<const char*>(xml.data), xml.size);
  const ParsedBlob& parsed = *result.blob;
  const std::vector<uint8_t> rebuilt =
      executorch_openvino::blob::build({xml_text, bytes(weights), precompiled, parsed.input_arguments,
                                        parsed.named_weights, parsed.input_bounds, parsed.grown_caches});
  const ParseResult again = executorch_openvino::blob::parse(rebuilt.data(), rebuilt.size());
  if (!again.blob) broken("build() of an accepted blob's content is refused", again);
  if (!same_content(*result.blob, *again.blob)) broken("build() then parse() changes the content", again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check(data, size, seeds_are_valid);
  // An exact-size copy, so AddressSanitizer catches a read one byte past the end.
  std::vector<uint8_t> repaired(data, data + size);
  if (executorch_openvino::fuzz::repair_checksums(repaired)) check(repaired.data(), repaired.size(), false);
  return 0;
}
