// A model behind a callback (callback_model.h).
#include "generation/callback_model.h"

namespace executorch_openvino::generation {

Outcome<Logits> CallbackModel::step(const std::vector<int64_t>& tokens, int64_t position) {
  const size_t needed = tokens.size() * vocab_;
  if (needed > capacity_) {
    logits_.reset(new float[needed]);  // default-initialized: pages the callback never writes stay untouched
    capacity_ = needed;
  }
  size_t rows = 0;
  char error[1024] = "";
  if (step_(user_, tokens.data(), tokens.size(), position, logits_.get(), &rows, error, sizeof error) != 0) {
    error[sizeof error - 1] = '\0';
    return Failure{FailureKind::kOpenVinoError, std::string("the model's call failed: ") + error};
  }
  if (rows != 1 && rows != tokens.size())
    return Failure{FailureKind::kInvalidArgument, "the model's call returned " + std::to_string(rows) + " rows for " +
                                                      std::to_string(tokens.size()) + " tokens (1 or every one)"};
  return Logits{logits_.get(), rows};
}

}  // namespace executorch_openvino::generation
