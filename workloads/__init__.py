"""What tests/ and bench/ both run, defined in code with random weights (nothing is downloaded):
Hugging Face architectures built from configs at a test's size and at their real one (hf_zoo), and a
byte-level BPE tokenizer trained in code with prompts of whole-word tokens (tokenizer). tests/ and
bench/ never import each other; both import from here (with the checkout's root on sys.path)."""
