// Feeding a prompt in pieces (language_model.h).
#include "generation/language_model.h"

#include <algorithm>

namespace executorch_openvino::generation {

Outcome<Logits> feed(LanguageModel& model, const std::vector<int64_t>& tokens, int64_t start) {
  if (tokens.empty()) return Failure{FailureKind::kInvalidArgument, "nothing to feed: the prompt is empty"};
  const int64_t end = start + static_cast<int64_t>(tokens.size());
  if (end > model.context())
    return Failure{FailureKind::kInvalidArgument,
                   "the prompt ends at position " + std::to_string(end) + ", past the model's context of " +
                       std::to_string(model.context()) + " positions (" + std::to_string(tokens.size()) +
                       " tokens from position " + std::to_string(start) + ")"};
  const auto piece = static_cast<size_t>(std::max<int64_t>(model.max_call_tokens(), 1));
  Outcome<Logits> last = Logits{};
  for (size_t begin = 0; begin < tokens.size(); begin += piece) {
    const size_t stop = std::min(tokens.size(), begin + piece);
    last = model.step({tokens.begin() + begin, tokens.begin() + stop}, start + static_cast<int64_t>(begin));
    if (!last) return last;
  }
  return last;
}

}  // namespace executorch_openvino::generation
