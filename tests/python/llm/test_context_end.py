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
from executorch_openvino.generation import Conversation, Program
from llm_lowering import PROMPT, attentions
from llm_models import Conversation as EagerConversation, eager_step, et_llama, et_llama_draft, export_et_llama

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
    expected, logits = EagerConversation(eager_step(target)).generate(PROMPT, CONTEXT - len(PROMPT))
    expected.append(int(logits[-1][0, -1].argmax()))
    return SimpleNamespace(target=_lower(target, CONTEXT, folder / "target.pte"),
                           draft=_lower(draft, DRAFT_CONTEXT, folder / "draft.pte"), expected=expected)


def test_plain_decoding_fills_the_context_and_the_process_exits_cleanly(programs, library_path):
    """In a process of its own: greedy decoding stops by the context with eager's ids, a call at the
    last position (99) gives eager's next choice, a conversation past it is refused by the engine and
    a call at 100 by the delegate (the program's method, loaded again), and the process then exits
    with status 0. Guards against paged caches allocated one block short (paged_layout's blocks as
    context / 32, rounded down): tried, OpenVINO fails a call past position 96 (a Reshape with
    dimensions read from overwritten memory) and the process aborts (status -6), without a sanitizer;
    every earlier test model's context (96) is a multiple of the block, so they pass it. In process,
    the same variant brings the test runner itself down (a segmentation fault)."""
    script = textwrap.dedent("""
        import json, sys
        sys.path[:0] = sys.argv[2:]
        import executorch_openvino
        import torch
        from executorch.runtime import Runtime
        from executorch_openvino.generation import Conversation, GenerationValueError, Program
        chat = Conversation(Program.load(sys.argv[1]))
        result = chat.generate([5, 17, 99, 3, 42, 7, 64], 1000)
        held = len(chat.tokens) - 1  # the last token chosen is not fed
        last = chat.generate(chat.tokens, 1)  # feeds it, at the last position: the choice after it
        try:
            chat.generate(chat.tokens + [1], 1)
            engine_refused = ""
        except GenerationValueError as error:
            engine_refused = str(error)
        attentions = [m.get("attention") for m in executorch_openvino.compiled_models()]
        method = Runtime.get().load_program(sys.argv[1]).load_method("forward")
        try:
            method.execute([torch.tensor([[1]]), torch.tensor([100])])
            refused = False
        except Exception:
            refused = True
        print(json.dumps({"tokens": result.tokens, "stopped_by": result.stopped_by, "held": held,
                          "reused": last.statistics.reused_tokens, "next": last.tokens[0], "refused": refused,
                          "engine_refused": engine_refused, "attentions": attentions}))
    """)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, EXECUTORCH_OPENVINO_LIBRARY=str(library_path))
    done = subprocess.run([sys.executable, "-c", script, programs.target, os.path.join(here, "..", "..", "python")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["attentions"] == ["paged"]
    assert (got["stopped_by"], got["held"]) == ("context", CONTEXT - 1)
    assert got["tokens"] + [got["next"]] == programs.expected and got["reused"] == CONTEXT - 1
    assert "context" in got["engine_refused"], got["engine_refused"]
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
    target = Program.load(programs.target)
    assert "paged" in attentions()
    plain = Conversation(target).generate(PROMPT, 1000)
    assert plain.stopped_by == "context" and plain.tokens == programs.expected[:-1]
    chat = Conversation(target)
    if drafter == "lookup":
        speculative = chat.generate(PROMPT, 1000, lookup=True, max_draft=5)
    else:
        speculative = chat.generate(PROMPT, 1000, draft=Program.load(programs.draft), max_draft=5)
    # The whole context: the prompt and the tokens chosen (the last one fed too when it was an accepted draft).
    assert speculative.stopped_by == "context" and len(chat.tokens) == CONTEXT
    assert speculative.tokens == plain.tokens
    assert speculative.statistics.accepted > 0, speculative.statistics
