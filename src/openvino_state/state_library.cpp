// libexecutorch_openvino_state: OpenVINO's variable state through its C++ API, for a request made
// through its C API (state_abi.h says why and how).
#include "openvino_state/error_text.h"
#include "openvino_state/state_abi.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <openvino/runtime/infer_request.hpp>

// OpenVINO's C-API handle holds the C++ request (src/bindings/c/src/common.h); this helper is built
// against the same release's headers, and the delegate checks the release before opening it.
struct ov_infer_request {
  std::shared_ptr<ov::InferRequest> object;
};

struct eov_state_snapshot {
  std::vector<std::pair<std::string, ov::Tensor>> values;
};

namespace {

int fail(const std::string& message, char* error, size_t error_size) {
  executorch_openvino::openvino_state::write_error(message, error, error_size);
  return 1;
}

// Runs `body`, turning any exception into the error text.
template <typename Body>
int guarded(const char* what, char* error, size_t error_size, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return fail(std::string(what) + ": " + e.what(), error, error_size);
  } catch (...) {
    return fail(std::string(what) + ": an unknown exception", error, error_size);
  }
}

ov::Tensor deep_copy(const ov::Tensor& value) {
  ov::Tensor copy(value.get_element_type(), value.get_shape());
  // A cache before a request's first call is empty, and OpenVINO's copy_to crashes on it (2026.4):
  // there is nothing to copy.
  if (value.get_size() != 0) value.copy_to(copy);
  return copy;
}

bool named(const std::string& name, const char* const* names, size_t count) {
  if (count == 0) return true;
  for (size_t i = 0; i < count; ++i) {
    if (name == names[i]) return true;
  }
  return false;
}

// The request's states that `names` names (all when count is 0); every name must exist.
int select_states(ov::InferRequest& request, const char* const* names, size_t count,
                  std::vector<ov::VariableState>& chosen, char* error, size_t error_size) {
  std::vector<ov::VariableState> states = request.query_state();
  for (size_t i = 0; i < count; ++i) {
    const bool found = std::any_of(states.begin(), states.end(),
                                   [&](ov::VariableState& s) { return s.get_name() == names[i]; });
    if (!found) return fail(std::string("no variable named '") + names[i] + "' in this model", error, error_size);
  }
  for (ov::VariableState& state : states) {
    if (named(state.get_name(), names, count)) chosen.push_back(state);
  }
  return 0;
}

// The request's states whose names begin with `prefix`.
std::vector<ov::VariableState> states_beginning(ov::InferRequest& request, const char* prefix) {
  std::vector<ov::VariableState> chosen;
  for (ov::VariableState& state : request.query_state()) {
    if (state.get_name().rfind(prefix, 0) == 0) chosen.push_back(state);
  }
  return chosen;
}

}  // namespace

extern "C" {

int eov_state_abi_version(void) { return EOV_STATE_ABI_VERSION; }

int eov_state_reset(ov_infer_request_t* request, const char* const* names, size_t count, char* error,
                    size_t error_size) {
  if (request == nullptr || !request->object) return fail("reset: no infer request", error, error_size);
  return guarded("reset", error, error_size, [&] {
    std::vector<ov::VariableState> chosen;
    if (int failed = select_states(*request->object, names, count, chosen, error, error_size)) return failed;
    for (ov::VariableState& state : chosen) state.reset();
    return 0;
  });
}

int eov_state_reset_prefix(ov_infer_request_t* request, const char* prefix, char* error, size_t error_size) {
  if (request == nullptr || !request->object || prefix == nullptr) {
    return fail("reset: no infer request", error, error_size);
  }
  return guarded("reset", error, error_size, [&] {
    std::vector<ov::VariableState> chosen = states_beginning(*request->object, prefix);
    if (chosen.empty()) return fail(std::string("no variable named '") + prefix + "...' in this model", error, error_size);
    for (ov::VariableState& state : chosen) state.reset();
    return 0;
  });
}

int eov_state_truncate(ov_infer_request_t* request, const char* prefix, int axis, int64_t length, char* error,
                       size_t error_size) {
  if (request == nullptr || !request->object || prefix == nullptr) {
    return fail("truncate: no infer request", error, error_size);
  }
  if (length < 0) return fail("truncate: a negative length", error, error_size);
  return guarded("truncate", error, error_size, [&] {
    std::vector<ov::VariableState> chosen = states_beginning(*request->object, prefix);
    if (chosen.empty()) return fail(std::string("no variable named '") + prefix + "...' in this model", error, error_size);
    // Every value is read and checked first, so a refusal changes nothing.
    std::vector<ov::Tensor> values;
    for (ov::VariableState& state : chosen) {
      ov::Tensor value = state.get_state();
      const ov::Shape shape = value.get_shape();
      if (axis < 0 || static_cast<size_t>(axis) >= shape.size()) {
        return fail("truncate: variable '" + state.get_name() + "' of shape " + shape.to_string() +
                        " has no dimension " + std::to_string(axis), error, error_size);
      }
      if (static_cast<uint64_t>(length) > shape[axis]) {
        return fail("truncate: variable '" + state.get_name() + "' holds " + std::to_string(shape[axis]) +
                        " positions, fewer than " + std::to_string(length), error, error_size);
      }
      values.push_back(value);
    }
    for (size_t i = 0; i < chosen.size(); ++i) {
      const ov::Shape shape = values[i].get_shape();
      if (shape[axis] == static_cast<size_t>(length)) continue;
      ov::Coordinate begin(shape.size(), 0), end(shape.begin(), shape.end());
      end[axis] = static_cast<size_t>(length);
      chosen[i].set_state(ov::Tensor(values[i], begin, end));  // the plugin copies the view in
    }
    return 0;
  });
}

int eov_state_read_int(ov_infer_request_t* request, const char* name, int64_t* value, char* error,
                       size_t error_size) {
  if (request == nullptr || !request->object || name == nullptr || value == nullptr) {
    return fail("read: no infer request", error, error_size);
  }
  return guarded("read", error, error_size, [&] {
    for (ov::VariableState& state : request->object->query_state()) {
      if (state.get_name() != name) continue;
      const ov::Tensor held = state.get_state();
      if (held.get_size() == 0) return fail(std::string("read: variable '") + name + "' is empty", error, error_size);
      switch (held.get_element_type()) {
        case ov::element::i64: *value = held.data<const int64_t>()[0]; return 0;
        case ov::element::i32: *value = held.data<const int32_t>()[0]; return 0;
        default: return fail(std::string("read: variable '") + name + "' is not an integer", error, error_size);
      }
    }
    return fail(std::string("no variable named '") + name + "' in this model", error, error_size);
  });
}

int eov_state_snapshot_take(ov_infer_request_t* request, eov_state_snapshot** snapshot, char* error,
                            size_t error_size) {
  if (request == nullptr || !request->object || snapshot == nullptr) {
    return fail("snapshot: no infer request", error, error_size);
  }
  return guarded("snapshot", error, error_size, [&] {
    auto taken = std::make_unique<eov_state_snapshot>();
    for (ov::VariableState& state : request->object->query_state()) {
      taken->values.emplace_back(state.get_name(), deep_copy(state.get_state()));
    }
    *snapshot = taken.release();
    return 0;
  });
}

int eov_state_snapshot_restore(ov_infer_request_t* request, const eov_state_snapshot* snapshot, char* error,
                               size_t error_size) {
  if (request == nullptr || !request->object || snapshot == nullptr) {
    return fail("restore: no infer request or snapshot", error, error_size);
  }
  return guarded("restore", error, error_size, [&] {
    std::vector<ov::VariableState> states = request->object->query_state();
    if (states.size() != snapshot->values.size()) {
      return fail("restore: the snapshot holds " + std::to_string(snapshot->values.size()) +
                      " variables, this model " + std::to_string(states.size()), error, error_size);
    }
    for (ov::VariableState& state : states) {
      auto match = std::find_if(snapshot->values.begin(), snapshot->values.end(),
                                [&](const auto& value) { return value.first == state.get_name(); });
      if (match == snapshot->values.end()) {
        return fail("restore: the snapshot has no variable '" + state.get_name() + "'", error, error_size);
      }
    }
    for (ov::VariableState& state : states) {
      for (const auto& [name, value] : snapshot->values) {
        if (name == state.get_name()) state.set_state(value);
      }
    }
    return 0;
  });
}

void eov_state_snapshot_free(eov_state_snapshot* snapshot) { delete snapshot; }

}  // extern "C"
