"""Running lowered programs: finding OpenVINO's runtime (pip's or OPENVINO_LIB_PATH), loading our
library into the process after ExecuTorch's bindings, run-time options, the delegate's messages in
ExecuTorch's exceptions, and what this CPU does with OpenVINO. None of it imports torch."""
