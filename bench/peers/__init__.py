"""The runtimes the LLM benchmarks (llm/, hf_recipe/, serving/) run beside ours, in one place:
OpenVINO GenAI on optimum-intel's export of the same weights (genai; needs requirements-bench.txt),
llama.cpp built from llama-cpp-python's sdist on the same weights as GGUF (llamacpp), and the greedy
loop every runner of ours and every eager reference decodes with (decoding). Native OpenVINO and
XNNPACK are the package's (executorch_openvino.benchmark.backends); optimum-executorch's recipes are
hf_recipe's, in optimum-executorch's own environment."""
