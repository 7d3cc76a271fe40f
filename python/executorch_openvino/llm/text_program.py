"""An ExecuTorch language-model program as the decoding loop's TextModel (generation/decoding.py):
its calling convention read from the method's signature, its limits and special ids from the
constant methods LLM exports write (ExecuTorch's export_llm, optimum-executorch, text_runner_metadata).

Two conventions are known: (tokens [1, n], start position [1]), ExecuTorch's export_llm, and
(input_ids [1, n], cache_position [n]), optimum-executorch's and transformers'. A method whose output
is [1, n, vocab] returns every position's logits (speculative decoding can verify drafts with it);
[1, vocab] the last one's only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

import numpy as np

from ..generation.decoding import TextModel


@dataclass
class TextProgram:
    model: TextModel
    bos_id: Optional[int]
    eos_ids: List[int]
    method: object  # executorch.runtime.Method, kept alive with its program


def _constant(program, name: str):
    if name not in program.method_names:
        return None
    values = program.load_method(name).execute([])
    return values[0] if len(values) == 1 else list(values)


def load(pte: Path, data: Optional[Path] = None, method_name: str = "forward") -> TextProgram:
    """Loads `pte` (its weights from `data` when kept apart) for the loop. Raises ValueError for a
    method of another signature."""
    import torch

    import executorch_openvino  # noqa: F401  (loads our library with ExecuTorch's runtime)
    from executorch.runtime import Runtime

    program = Runtime.get().load_program(Path(pte), data_path=data)
    if method_name not in program.method_names:
        raise ValueError(f"{pte} has no method {method_name!r} (it has {sorted(program.method_names)})")
    method = program.load_method(method_name)
    meta = method.metadata
    if meta.num_inputs() != 2 or meta.num_outputs() < 1:
        raise ValueError(f"{pte}: {method_name} takes {meta.num_inputs()} inputs; a language model's takes the "
                         "tokens and their position")
    tokens_shape = tuple(meta.input_tensor_meta(0).sizes())
    position_shape = tuple(meta.input_tensor_meta(1).sizes())
    logits_rank = len(meta.output_tensor_meta(0).sizes())
    if len(tokens_shape) != 2 or len(position_shape) != 1 or logits_rank not in (2, 3):
        raise ValueError(f"{pte}: {method_name} takes {tokens_shape} and {position_shape} and returns rank "
                         f"{logits_rank}; expected tokens [1, n], a position [1] or [n], and logits")
    start_only = position_shape == (1,)
    max_call_tokens = tokens_shape[1]
    context = _constant(program, "get_max_context_len") or _constant(program, "get_max_seq_len")
    context = int(context) if context else max_call_tokens + (1 if start_only else 0)

    def step(tokens: Sequence[int], position: int) -> np.ndarray:
        ids = torch.tensor([list(tokens)], dtype=torch.long)
        where = (torch.tensor([position], dtype=torch.long) if start_only
                 else torch.arange(position, position + len(tokens), dtype=torch.long))
        return method.execute([ids, where])[0].numpy()

    eos = _constant(program, "get_eos_ids")
    eos = [int(i) for i in (eos if isinstance(eos, list) else [eos])] if eos is not None else []
    bos = _constant(program, "get_bos_id")
    model = TextModel(step=step, context=context, max_call_tokens=max_call_tokens, all_logits=logits_rank == 3)
    return TextProgram(model=model, bos_id=int(bos) if bos is not None else None, eos_ids=eos, method=(program, method))
