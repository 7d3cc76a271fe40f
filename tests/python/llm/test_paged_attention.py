"""attention=paged: a language model's grown KV caches run by OpenVINO's paged attention, the model
rewritten at load by the state helper (src/openvino_state/paged_attention.cpp) and its caches held by
the delegate (src/delegate/conversation/paged_caches.cpp). Every call equals eager PyTorch on its static cache;
going back is an ordinary call at an earlier position; a saved prefix is a copy of its blocks; a
model the rewrite does not apply to runs as exported, and so does every model without the helper."""

from __future__ import annotations

import sys
import textwrap

import pytest
import torch

import executorch_openvino
from executorch_openvino.runtime import library
from executorch_openvino.runtime.errors import DelegateError
from llm_lowering import PROMPT, attentions, eager_of, load, lowered, ours_of
from lowering import run_without_state_helper
from llm_models import Conversation


def _same(calls, case, ours):
    eager = eager_of("dynamic_prompt", case.model)
    for tokens, position in calls:
        expected = eager(torch.tensor([tokens]), position)
        got = ours(torch.tensor([tokens]), position)
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5, msg=f"call at {position}: {tokens}")


def test_every_call_equals_eager_going_back_included(paged):
    """A prompt, steps, then calls at 11, 8, 3 and 1 (regenerate, edit the last turn), a prompt of
    several tokens after going back, and a new conversation: each call's logits are eager's. The
    model really runs paged: the compiled model says so."""
    case = lowered("dynamic_prompt")
    ours = ours_of("dynamic_prompt", load(case.pte))
    assert "paged" in attentions()
    calls = [(PROMPT, 0)] + [([30 + i], len(PROMPT) + i) for i in range(5)]
    for back in (11, 8, 3, 1):
        calls += [([60 + back], back), ([70 + back], back + 1), ([80 + back], back + 2)]
    calls += [([9, 8, 7, 6], 4), ([5, 6], 0), ([7], 2)]
    _same(calls, case, ours)


def test_greedy_generation_over_a_block_boundary_equals_eager(paged):
    """Past the first block of 32 positions, 40 greedy steps give eager's ids and last logits."""
    case = lowered("dynamic_prompt")
    ours = ours_of("dynamic_prompt", load(case.pte))
    expected, expected_logits = Conversation(eager_of("dynamic_prompt", case.model)).generate(PROMPT, 40)
    got, got_logits = Conversation(ours).generate(PROMPT, 40)
    assert got == expected
    torch.testing.assert_close(got_logits[-1], expected_logits[-1], rtol=1e-4, atol=1e-5)


def test_a_position_past_the_conversation_is_refused_and_changes_nothing(paged):
    case = lowered("dynamic_prompt")
    ours = ours_of("dynamic_prompt", load(case.pte))
    eager = eager_of("dynamic_prompt", case.model)
    ours(torch.tensor([PROMPT]), 0)
    eager(torch.tensor([PROMPT]), 0)
    with pytest.raises(DelegateError, match=r"starts at position 10, past the 7 positions of the conversation so far"):
        ours(torch.tensor([[4]]), 10)
    for offset, token in enumerate([50, 51]):
        torch.testing.assert_close(ours(torch.tensor([[token]]), len(PROMPT) + offset),
                                   eager(torch.tensor([[token]]), len(PROMPT) + offset), rtol=1e-4, atol=1e-5)


def test_a_saved_prefix_is_its_blocks_and_serves_later_conversations(paged):
    """The system prompt's blocks saved; each conversation restores them and continues; each equals
    eager computing the system prompt and its question from scratch, also after going back into the
    prefix and after a new conversation overwrote the blocks."""
    case = lowered("dynamic_prompt")
    system, first, second = PROMPT * 5, [20, 21, 22], [40, 41]  # 35 positions: more than a block
    ours = ours_of("dynamic_prompt", load(case.pte))
    ours(torch.tensor([system]), 0)
    executorch_openvino.save_state("system")
    try:
        for question in (first, second, first):
            executorch_openvino.restore_state("system")
            expected, expected_logits = Conversation(eager_of("dynamic_prompt", case.model)).generate(
                system + question, 6)
            got, got_logits = Conversation(ours).generate(question, 6, start=len(system))
            assert got == expected
            torch.testing.assert_close(got_logits[-1], expected_logits[-1], rtol=1e-4, atol=1e-5)
            ours(torch.tensor([[5]]), 3)
            ours(torch.tensor([[6, 7, 8, 9]]), 0)
    finally:
        assert executorch_openvino.forget_state("system") == 1


def test_with_precision_fast_the_caches_take_the_precision_the_device_computes_in(paged):
    """precision=fast: bf16 compute where the CPU has it, and OpenVINO's paged attention wants its caches
    in that precision; the paged program gives the grown one's greedy ids."""
    case = lowered("dynamic_prompt")
    with executorch_openvino.using_options(precision="fast"):
        with executorch_openvino.using_options(attention="grown"):
            grown = ours_of("dynamic_prompt", load(case.pte))
        ours = ours_of("dynamic_prompt", load(case.pte))  # paged: the fixture's
    assert "paged" in attentions()
    assert Conversation(ours).generate(PROMPT, 16)[0] == Conversation(grown).generate(PROMPT, 16)[0]


def test_with_a_model_cache_a_paged_model_is_not_stored(paged, tmp_path):
    """OpenVINO's CPU plugin exports a model with paged attention without what it needs to import it
    back, so such a model is not stored in the model cache: loads compile it from the IR, and compute
    eager's ids."""
    case = lowered("dynamic_prompt")
    executorch_openvino.set_options(cache_dir=str(tmp_path))
    try:
        for _ in range(2):
            ours = ours_of("dynamic_prompt", load(case.pte))
            (model,) = [m for m in library.load().describe_compiled_models() if m.get("attention") == "paged"]
            assert model["source"] == "ir"
            expected, _ = Conversation(eager_of("dynamic_prompt", case.model)).generate(PROMPT, 8)
            assert Conversation(ours).generate(PROMPT, 8)[0] == expected
            del ours, model
    finally:
        executorch_openvino.set_options(cache_dir=None)
    assert not list(tmp_path.iterdir())


def test_a_model_whose_mask_is_computed_as_numbers_runs_as_exported(paged):
    """ExecuTorch's Llama exported for one token at a time computes its mask in the graph as numbers
    (an additive float mask, which the delegate does not check): the rewrite leaves it grown, and it
    equals eager as before. (A boolean mask computed in the graph is paged: test_paged_attention_hf.py.)"""
    case = lowered("one_token")
    ours = ours_of("one_token", load(case.pte))
    assert attentions() == ["grown"] * len(attentions())
    eager = eager_of("one_token", case.model)
    for position, token in enumerate(PROMPT):
        torch.testing.assert_close(ours(torch.tensor([[token]]), position), eager(torch.tensor([[token]]), position),
                                   rtol=1e-4, atol=1e-5)


def test_an_unknown_attention_is_refused_naming_both():
    with pytest.raises(executorch_openvino.OptionError, match="auto .* grown .* or paged"):
        executorch_openvino.set_options(attention="flash")


@pytest.mark.parametrize("attention", ["paged", "auto"])
def test_without_the_helper_the_model_runs_as_exported(library_path, attention):
    """attention=paged, and the default (auto), where the helper is missing (as on Windows): the
    program loads grown and computes eager's ids; the log says why."""
    script = textwrap.dedent("""
        import sys
        sys.path[:0] = sys.argv[2:]
        import executorch_openvino
        from executorch_openvino.runtime import library
        from llm_lowering import PROMPT, lowered, load, ours_of, eager_of
        from llm_models import Conversation
        executorch_openvino.set_options(attention=sys.argv[1])
        case = lowered("dynamic_prompt")
        ours = ours_of("dynamic_prompt", load(case.pte))
        assert all("attention" not in m for m in library.load().describe_compiled_models())
        expected, _ = Conversation(eager_of("dynamic_prompt", case.model)).generate(PROMPT, 8)
        assert Conversation(ours).generate(PROMPT, 8)[0] == expected
        print("ok")
    """)
    done = run_without_state_helper(script, library_path, attention)
    assert f"attention={attention}: the model runs as exported: it needs the state helper" in done.stderr, \
        done.stderr[-3000:]


def test_saved_prefixes_belong_each_to_its_method(paged):
    """Two methods of one program (one compiled model, caches each) hold prefixes of 35 and 40
    positions, saved by one call; each then runs a conversation of 45 positions over its blocks, and a
    third method, loaded after the save, begins one; restored by one call, each of the two continues
    from its own prefix as eager's, and the third, left alone, from where it was. Guards against paged
    caches kept per compiled model rather than per method, and against a prefix kept once per name
    (the last method's blocks) rather than by each method: tried, each fails at method a's first
    step; the rest of this file, test_conversation_state.py (which checks saved states per program
    grown only) and test_generate_options.py pass the second."""
    case = lowered("dynamic_prompt")
    a, b = (ours_of("dynamic_prompt", load(case.pte)) for _ in range(2))
    prefixes = {"a": PROMPT * 5, "b": list(reversed(PROMPT)) * 5 + [1, 2, 3, 4, 5]}
    a(torch.tensor([prefixes["a"]]), 0)
    b(torch.tensor([prefixes["b"]]), 0)
    executorch_openvino.save_state("prefixes")
    try:
        c = ours_of("dynamic_prompt", load(case.pte))
        for ours in (a, b):
            ours(torch.tensor([[(5 * i + 2) % 128 for i in range(45)]]), 0)
        c(torch.tensor([PROMPT]), 0)
        executorch_openvino.restore_state("prefixes")
        for name, ours in (("a", a), ("b", b), ("c", c)):
            held = prefixes.get(name, PROMPT)
            eager = eager_of("dynamic_prompt", case.model)
            eager(torch.tensor([held]), 0)
            for offset, token in enumerate([20, 21]):
                torch.testing.assert_close(ours(torch.tensor([[token]]), len(held) + offset),
                                           eager(torch.tensor([[token]]), len(held) + offset),
                                           rtol=1e-4, atol=1e-5, msg=f"method {name}, step {offset}")
    finally:
        assert executorch_openvino.forget_state("prefixes") == 2
