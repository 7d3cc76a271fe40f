// Why the state helper leaves a model as it was (EOV_STATE_LEFT): thrown by its checks, caught at its
// C entry points, and handed to the delegate as the log line's reason.
#pragma once

#include <string>

namespace executorch_openvino::openvino_state {

struct Left {
  std::string why;
};

}  // namespace executorch_openvino::openvino_state
