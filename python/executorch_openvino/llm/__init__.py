"""Large language models through the delegate, from the user's side: ExecuTorch's LLM export lowering
to ours (export_llm.py), Hugging Face causal LMs with a static cache (hf_export.py), and the metadata
ExecuTorch's runner reads (runner_metadata.py). The rewrites that make an LLM fast (state, growing
caches, rotary) are IR passes like any other (ir_passes/)."""
