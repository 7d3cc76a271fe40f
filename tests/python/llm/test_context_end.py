"""Conversations that reach the very end of a context that is not a multiple of paged attention's
block of 32 positions (100: three whole blocks and four positions of a fourth), in the default form
(paged on the CPU): plain greedy decoding to the last position, the process exiting cleanly after it,
and speculative decoding with either drafter stopping at the context with plain decoding's ids."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

import executorch_openvino
from executorch_openvino.generation import DraftModel, LookupDrafter, generate
from executorch_openvino.llm import text_program
from llm_lowering import PROMPT, attentions
from llm_models import Conversation, eager_step, et_llama, et_llama_draft, export_et_llama

CONTEXT = 100
DRAFT_CONTEXT = 64  # a draft that must stop drafting before the target's end


def _lower(model, context, path):
    from executorch.exir import to_edge_transform_and_lower

    program = to_edge_transform_and_lower(export_et_llama(model, context=context),
                                          partitioner=[executorch_openvino.OpenvinoPartitioner()],
                                          constant_methods={"get_max_seq_len": context - 1,
                                                            "get_max_context_len": context})
    path.write_bytes(program.to_executorch().buffer)
    return str(path)


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """The program (every position's logits) and a draft of its first layer with a shorter context, with
    eager PyTorch's greedy ids from the prompt to the end of the context and one more: the choice
    after the last position."""
    folder = tmp_path_factory.mktemp("context_end")
    target = et_llama(True, generate_full_logits=True, max_seq_len=CONTEXT, max_context_len=CONTEXT)
    draft = et_llama_draft(layers=1, max_seq_len=DRAFT_CONTEXT, max_context_len=DRAFT_CONTEXT)
    expected, logits = Conversation(eager_step(target)).generate(PROMPT, CONTEXT - len(PROMPT))
    expected.append(int(logits[-1][0, -1].argmax()))
    return SimpleNamespace(target=_lower(target, CONTEXT, folder / "target.pte"),
                           draft=_lower(draft, DRAFT_CONTEXT, folder / "draft.pte"), expected=expected)


def test_plain_decoding_fills_the_context_and_the_process_exits_cleanly(programs, library_path):
    """In a process of its own: greedy decoding stops by the context with eager's ids, a call at the
    last position (99) gives eager's next choice, one at 100 is refused, and the process then exits
    with status 0. Guards against paged caches allocated one block short (paged_layout's blocks as
    context / 32, rounded down): tried, OpenVINO fails a call past position 96 (a Reshape with
    dimensions read from overwritten memory) and the process aborts (status -6), without a sanitizer;
    every earlier test model's context (96) is a multiple of the block, so they pass it. In process,
    the same variant brings the test runner itself down (a segmentation fault)."""
    script = textwrap.dedent("""
        import json, sys
        sys.path[:0] = sys.argv[2:]
        import executorch_openvino
        from executorch_openvino.generation import generate
        from executorch_openvino.llm import text_program
        from executorch_openvino.runtime.errors import DelegateError
        program = text_program.load(sys.argv[1])
        result = generate(program.model, [5, 17, 99, 3, 42, 7, 64], 1000)
        last = program.model.step([result.tokens[-1]], result.held)
        try:
            program.model.step([1], result.held + 1)
            refused = False
        except DelegateError:
            refused = True
        print(json.dumps({"tokens": result.tokens, "stopped_by": result.stopped_by, "held": result.held,
                          "next": int(last[-1].argmax()), "refused": refused,
                          "attentions": [m.get("attention") for m in executorch_openvino.compiled_models()]}))
    """)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, EXECUTORCH_OPENVINO_LIBRARY=str(library_path))
    done = subprocess.run([sys.executable, "-c", script, programs.target, os.path.join(here, "..", "..", "python")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["attentions"] == ["paged"]
    assert (got["stopped_by"], got["held"]) == ("context", CONTEXT - 1)
    assert got["tokens"] + [got["next"]] == programs.expected
    assert got["refused"]


@pytest.mark.parametrize("drafter", ["lookup", "shorter_draft"])
def test_speculative_decoding_stops_at_the_context_with_plain_decodings_ids(programs, drafter):
    """Prompt lookup, and a draft program of the target's first layer with a context of 64, which must
    stop drafting there: each stops by the context with plain greedy decoding's ids, drafts accepted on
    the way. Guards against drafts allowed past a context: tried, the loop's span without
    `model.context - position - 1` fails the lookup case (the delegate refuses a call of 6 tokens
    near the end: the mask has no row for each), and DraftModel.draft without its own check of its
    context fails the draft's ("the prompt ends at position 65, past the model's context of 64");
    no earlier test decodes to the end of a context."""
    target = text_program.load(programs.target)
    assert "paged" in attentions()
    plain = generate(target.model, PROMPT, 1000)
    assert plain.stopped_by == "context" and plain.tokens == programs.expected[:-1]
    chosen = LookupDrafter(max_draft=5) if drafter == "lookup" else DraftModel(text_program.load(programs.draft).model)
    speculative = generate(target.model, PROMPT, 1000, drafter=chosen, max_draft=5)
    # The last token is fed too when it was an accepted draft.
    assert speculative.stopped_by == "context" and speculative.held in (CONTEXT - 1, CONTEXT)
    assert speculative.tokens == plain.tokens
    assert speculative.statistics.accepted > 0, speculative.statistics
