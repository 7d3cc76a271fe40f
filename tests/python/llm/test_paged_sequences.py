"""Several sequences in one call of a paged Hugging Face program (executorch_openvino_set_sequences, the
delegate's side of continuous batching): each sequence continues its own slot of the caches, and its
rows of the call's logits are what transformers gives that sequence alone. A plan that does not fit the
call is refused before anything runs, and the slots hold what they held."""

from __future__ import annotations

import ctypes
import functools

import pytest
import torch

from executorch_openvino.runtime import library
from executorch_openvino.runtime.errors import DelegateError
from llm_lowering import PROMPT, load, lowered
from llm_models import hf_llama


@functools.lru_cache(maxsize=None)
def _plain_llama():
    return hf_llama()


def _transformers(sequence):
    with torch.no_grad():
        return _plain_llama()(input_ids=torch.tensor([sequence]), use_cache=False).logits[0]


def _plan(slots, counts):
    """The calling thread's next call carries these sequences (the method runs on this thread)."""
    function = library.load().handle.executorch_openvino_set_sequences
    function.argtypes = [ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t]
    function.restype = None
    function((ctypes.c_int64 * len(slots))(*slots), (ctypes.c_int64 * len(counts))(*counts), len(slots))


def _call(method, sequences):
    """One call of (slot, tokens, first position) sequences; each one's rows of the logits."""
    tokens = [token for _, ids, _ in sequences for token in ids]
    positions = [start + i for _, ids, start in sequences for i in range(len(ids))]
    _plan([slot for slot, _, _ in sequences], [len(ids) for _, ids, _ in sequences])
    logits = method.execute([torch.tensor([tokens]), torch.tensor(positions)])[0][0]
    rows, at = [], 0
    for _, ids, _ in sequences:
        rows.append(logits[at:at + len(ids)])
        at += len(ids)
    return rows


def test_sequences_in_one_call_each_equal_transformers_alone(paged):
    """Three conversations, slots 0, 1 and 5 (the caches grow to six slots on the way), fed their prompts
    in one call, then decoded together past a block boundary (32 positions), then one goes back: every
    sequence's rows are transformers' for that sequence alone. Guards each slot's own blocks (a table
    without the slot's offset mixes the conversations) and the rows' order."""
    method = load(lowered("hf_static_cache").pte)
    texts = {0: list(PROMPT), 1: [3, 9, 4, 1, 7], 5: [42] * 12}
    rows = _call(method, [(slot, ids, 0) for slot, ids in texts.items()])
    for (slot, ids), got in zip(texts.items(), rows):
        torch.testing.assert_close(got, _transformers(ids), rtol=1e-4, atol=1e-5, msg=f"slot {slot}")
    for step in range(30):
        sequences = [(slot, [int(_transformers(ids)[-1].argmax())], len(ids)) for slot, ids in texts.items()]
        for (slot, token, _), got in zip(sequences, _call(method, sequences)):
            texts[slot] = texts[slot] + token
            torch.testing.assert_close(got, _transformers(texts[slot])[-1:], rtol=1e-4, atol=1e-5,
                                       msg=f"slot {slot}, step {step}")
    back = texts[1][:4] + [11, 12]
    (got,) = _call(method, [(1, [11, 12], 4)])
    torch.testing.assert_close(got, _transformers(back)[-2:], rtol=1e-4, atol=1e-5)
    # Slot 0 is also what a call without a plan continues.
    token = int(_transformers(texts[0])[-1].argmax())
    got = method.execute([torch.tensor([[token]]), torch.tensor([len(texts[0])])])[0][0]
    torch.testing.assert_close(got, _transformers(texts[0] + [token])[-1:], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("plan, why", [
    (([0, 1], [2, 2]), "hold 4 tokens and the call gives 3"),
    (([0, 64], [1, 2]), "slots 0 to 63"),
    (([0, 0], [1, 2]), "two sequences of the call are in slot 0"),
    (([0, 2], [1, 2]), "past the 0 positions"),
])
def test_a_plan_that_does_not_fit_the_call_is_refused_and_changes_nothing(paged, plan, why):
    """Counts that do not add up to the call's tokens, a slot past the last, one slot twice, a sequence
    starting past what its slot holds: refused before the call, with the reason; slot 0 then continues
    as if the call had not been made, and the plan is not left for the next call."""
    method = load(lowered("hf_static_cache").pte)
    _call(method, [(0, list(PROMPT), 0)])
    start = len(PROMPT)
    _plan(*plan)
    with pytest.raises(DelegateError, match=why):
        method.execute([torch.tensor([[5, 6, 7]]), torch.tensor([start, start + 1, start + 2])])
    got = method.execute([torch.tensor([[8]]), torch.tensor([start])])[0][0]
    torch.testing.assert_close(got, _transformers(list(PROMPT) + [8])[-1:], rtol=1e-4, atol=1e-5)


def test_a_program_that_gives_the_first_position_only_takes_one_sequence_a_call(paged):
    """ExecuTorch's Llama gives a call's first position, not each token's: a plan of two sequences is
    refused with that reason."""
    method = load(lowered("dynamic_prompt").pte)
    _plan([0, 1], [1, 1])
    with pytest.raises(DelegateError, match="gives the first position only"):
        method.execute([torch.tensor([[1, 2]]), torch.tensor([0])])
