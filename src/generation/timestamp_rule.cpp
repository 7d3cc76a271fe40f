#include "generation/timestamp_rule.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace executorch_openvino::generation {
namespace {

void refuse(TokenBits& allowed, int64_t from, int64_t to) {  // [from, to)
  for (int64_t token = std::max<int64_t>(from, 0); token < to; ++token) allowed[token / 32] &= ~(1u << (token % 32));
}

}  // namespace

Status TimestampRule::validate(size_t vocab) const {
  const auto size = static_cast<int64_t>(vocab);
  auto invalid = [](const std::string& message) { return Failure{FailureKind::kInvalidArgument, message}; };
  if (timestamp_begin <= 0 || timestamp_begin >= size)
    return invalid("the first timestamp id " + std::to_string(timestamp_begin) + " is outside the vocabulary of " +
                   std::to_string(vocab));
  if (no_timestamps < 0 || no_timestamps >= size)
    return invalid("the no-timestamps id " + std::to_string(no_timestamps) + " is outside the vocabulary");
  if (eos < 0 || eos > timestamp_begin)
    return invalid("the timestamp rules' end id " + std::to_string(eos) + " is not below the first timestamp id");
  if (max_initial < -1) return invalid("max_initial_timestamp must be -1 (none) or more");
  return ok_status();
}

void TimestampRule::restrict(const float* row, size_t vocab, const std::vector<int64_t>& history,
                             TokenBits& allowed) const {
  const auto size = static_cast<int64_t>(vocab);
  refuse(allowed, no_timestamps, no_timestamps + 1);
  const size_t start = std::min(begin_index, history.size());
  const size_t length = history.size() - start;
  const bool last_was_timestamp = length >= 1 && history.back() >= timestamp_begin;
  const bool penultimate_was_timestamp = length < 2 || history[history.size() - 2] >= timestamp_begin;
  if (last_was_timestamp) {
    if (penultimate_was_timestamp) {
      refuse(allowed, timestamp_begin, size);  // a pair is closed: text next
    } else {
      refuse(allowed, 0, eos);  // a lone timestamp: its pair, or the end
    }
  }
  // Never back in time; after a closed pair not the same timestamp again either.
  for (size_t i = history.size(); i > start; --i) {
    if (history[i - 1] < timestamp_begin) continue;
    const int64_t last = history[i - 1];
    refuse(allowed, timestamp_begin, last_was_timestamp && !penultimate_was_timestamp ? last : last + 1);
    break;
  }
  if (history.size() == begin_index) {
    refuse(allowed, 0, timestamp_begin);  // the window opens with a timestamp
    if (max_initial >= 0) refuse(allowed, timestamp_begin + max_initial + 1, size);
  }
  if (!from_probability) return;
  // log_softmax shifts every allowed token alike, so the timestamps' total probability against the
  // likeliest text token compares as log-sum-exp against the largest logit.
  const double lowest = -std::numeric_limits<double>::infinity();
  double text_max = lowest, stamp_max = lowest;
  for (int64_t token = 0; token < size; ++token) {
    if (!token_allowed(allowed, token)) continue;
    double& best = token < timestamp_begin ? text_max : stamp_max;
    best = std::max(best, static_cast<double>(row[token]));
  }
  if (stamp_max == lowest) return;
  double sum = 0;
  for (int64_t token = timestamp_begin; token < size; ++token)
    if (token_allowed(allowed, token)) sum += std::exp(static_cast<double>(row[token]) - stamp_max);
  if (stamp_max + std::log(sum) > text_max) refuse(allowed, 0, timestamp_begin);
}

}  // namespace executorch_openvino::generation
