"""Serving: the model worker ExecuTorch's OpenAI-compatible server drives (executorch-openvino-worker),
named sessions on one load of the weights, and the protocol lines it reads and writes."""
