"""The backend id: the one Python source of the name the library registers under (the C++ source
is EXECUTORCH_OPENVINO_BACKEND_ID in include/executorch_openvino/backend.h; a test compares them)."""

BACKEND_ID = "ExecutorchOpenvinoBackend"
