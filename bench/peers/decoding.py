"""Greedy decoding as the benchmarks time it: the prompt in one call, then one call a token."""

from __future__ import annotations

import time
from typing import Callable, List


class Conversation(dict):
    """prefill_ms (the prompt's call and its argmax), decode_ms (all steps), ids (steps + 1: the
    prompt's token, then one a step), logits (a row for the prompt's last position and one a step;
    None unless kept), and whatever else a runner measures (GenAI's own metrics, ...)."""


def greedy(step: Callable[[List[int], int], object], prompt: List[int], steps: int,
           keep_logits: bool = False) -> Conversation:
    """executorch_openvino.generation.greedy (the engine), timed: `step(tokens, position)` returns the last
    position's logits (a torch row, which the next call may overwrite: copied when kept). The prefill
    ends when the prompt's call returns (the engine's argmax after it is not counted in it)."""
    import torch

    from executorch_openvino.generation import greedy as greedy_tokens

    rows, returned = [], []

    def timed(tokens, position):
        logits = step(tokens, position)
        returned.append(time.perf_counter())
        if keep_logits:
            rows.append(logits.clone())
        return logits

    start = time.perf_counter()
    ids = greedy_tokens(timed, list(prompt), steps + 1)
    done = time.perf_counter()
    prefilled = returned[0]
    return Conversation(prefill_ms=(prefilled - start) * 1e3, decode_ms=(done - prefilled) * 1e3, ids=ids,
                        logits=torch.stack(rows).float() if keep_logits else None)


def compare(ids: List[int], logits, reference_ids: List[int], reference_logits, steps: int) -> dict:
    """Greedy ids (the first `steps`) and, where both have them, logits against a reference: equal or
    where they part, and the logits' largest difference on the prompt and up to that step."""
    ids, eager = list(ids)[:steps], list(reference_ids)[:steps]
    same = next((i for i, (a, b) in enumerate(zip(ids, eager)) if a != b), min(len(ids), len(eager)))
    result = {"steps": len(eager), "ids_equal": ids == eager, "first_divergence": same,
              "agreement": sum(a == b for a, b in zip(ids, eager)) / max(1, len(eager))}
    if logits is not None and reference_logits is not None:
        upto = min(same + 1, len(logits), len(reference_logits))
        diff = (logits[:upto] - reference_logits[:upto]).abs()
        result.update(prompt_max_abs=float(diff[0].max()), max_abs=float(diff.max()),
                      logit_scale=float(reference_logits[0].abs().max()))
    return result


def correctness(check: dict) -> str:
    """A compare() result as the reports show it."""
    if not check:
        return "–"
    if check.get("ids_equal") is None:
        return "– (no ids)"
    text = (f"ids = eager ({check['steps']}/{check['steps']})" if check["ids_equal"] else
            f"ids differ from step {check['first_divergence']} ({check['agreement'] * 100:.0f}% equal)")
    if "max_abs" in check:
        text += f"; logits max abs err {check['prompt_max_abs']:.2g} (prompt), {check['max_abs']:.2g} (to divergence)"
    return text
