"""OpenVINO delegate for ExecuTorch (the Python side grows in the next release: partitioner,
preprocess, runtime discovery). Today: the delegate blob format and the backend id."""

BACKEND_ID = "ExecutorchOpenvinoBackend"

__all__ = ["BACKEND_ID"]
