// A model behind a callback (callback_model.h).
#include "generation/callback_model.h"

namespace executorch_openvino::generation {

Outcome<Logits> CallbackModel::step(const std::vector<int64_t>& tokens, int64_t position) {
  logits_.resize(tokens.size() * vocab_);  // the callback writes the rows it returns
  size_t rows = 0;
  char error[1024] = "";
  if (step_(user_, tokens.data(), tokens.size(), position, logits_.data(), &rows, error, sizeof error) != 0) {
    error[sizeof error - 1] = '\0';
    return Failure{FailureKind::kOpenVinoError, std::string("the model's call failed: ") + error};
  }
  if (rows != 1 && rows != tokens.size())
    return Failure{FailureKind::kInvalidArgument, "the model's call returned " + std::to_string(rows) + " rows for " +
                                                      std::to_string(tokens.size()) + " tokens (1 or every one)"};
  return Logits{logits_.data(), rows};
}

}  // namespace executorch_openvino::generation
