"""The generation engine (generation/engine.py: Program.load and Conversation) over programs lowered to
our delegate: plain greedy decoding equals eager PyTorch's; speculative decoding, with
prompt-lookup drafts and with a smaller draft program, gives plain greedy decoding's ids over 64
steps (random-weight models fall into cycles under greedy decoding, so drafts do get accepted, and
rejected ones are rolled back by the delegate); sampling with a seed is reproducible, speculative or
not (that speculative sampling draws as plain sampling does: tests/python/generation)."""

from __future__ import annotations

import functools

import pytest

import executorch_openvino
import numpy as np

from executorch_openvino.generation import Conversation, GenerationValueError, Program, SamplingOptions
from llm_lowering import PROMPT
from llm_models import CONTEXT, Conversation as EagerConversation, eager_step, et_llama, et_llama_draft, export_et_llama

STEPS = 64


@functools.lru_cache(maxsize=None)
def _pte(tmp_dir: str, layers: int, seed: int, full_logits: bool, first_of: int = 0) -> str:
    """A Llama of `layers` layers; with first_of, the first `layers` of that one's (its embedding and
    output layer too: a draft whose guesses sometimes land)."""
    from executorch.exir import to_edge_transform_and_lower

    model = (et_llama_draft(first_of, layers=layers, seed=seed, generate_full_logits=full_logits) if first_of else
             et_llama(True, layers=layers, seed=seed, generate_full_logits=full_logits))
    program = to_edge_transform_and_lower(export_et_llama(model), partitioner=[executorch_openvino.OpenvinoPartitioner()],
                                          constant_methods={"get_max_seq_len": CONTEXT - 1,
                                                            "get_max_context_len": CONTEXT, "get_eos_ids": [999]})
    path = f"{tmp_dir}/llama-{layers}-{seed}-{full_logits}-{first_of}.pte"
    with open(path, "wb") as f:
        f.write(program.to_executorch().buffer)
    return path


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("decoding"))
    return lambda layers=2, seed=0, full_logits=True, first_of=0: _pte(folder, layers, seed, full_logits, first_of)


def _generate(program, prompt=PROMPT, count=STEPS, **kwargs):
    return Conversation(program).generate(prompt, count, **kwargs)


def _greedy(path, **kwargs):
    return _generate(Program.load(path), **kwargs)


def test_the_program_reads_as_a_language_model_and_plain_greedy_equals_eager(programs):
    program = Program.load(programs())
    assert (program.context, program.max_call_tokens, program.all_logits) == (CONTEXT, CONTEXT - 1, True)
    assert program.eos_ids == [999] and program.bos_id is None
    expected, _ = EagerConversation(eager_step(et_llama(True, generate_full_logits=True))).generate(PROMPT, STEPS)
    result = _generate(program)
    assert result.tokens == expected and result.stopped_by == "length"
    assert result.statistics.calls == STEPS - 1  # the first token comes with the prompt


def test_prompt_lookup_gives_greedy_ids_with_drafts_accepted_and_rejected(programs):
    plain = _greedy(programs())
    speculative = _greedy(programs(), lookup=True, max_draft=4)
    assert speculative.tokens == plain.tokens
    stats = speculative.statistics
    # Both kinds happened: accepted drafts saved calls, rejected ones were rolled back.
    assert 0 < stats.accepted < stats.drafted, (stats.accepted, stats.drafted)
    assert stats.calls < STEPS - 1


def test_a_draft_program_gives_greedy_ids(programs):
    plain = _greedy(programs())
    draft = Program.load(programs(layers=1, first_of=2, full_logits=False))  # a draft needs the last logits only
    speculative = _greedy(programs(), draft=draft, max_draft=3)
    assert speculative.tokens == plain.tokens
    assert speculative.statistics.drafted > 0
    # The target itself (loaded again) as its own draft: every draft accepted, a fraction of the calls.
    same = Program.load(programs())
    ideal = _greedy(programs(), draft=same, max_draft=4)
    assert ideal.tokens == plain.tokens
    assert ideal.statistics.accepted == ideal.statistics.drafted and ideal.statistics.calls <= (STEPS + 4) // 5 + 1


def test_speculative_decoding_is_refused_where_it_cannot_be_exact(programs):
    last_only = Program.load(programs(full_logits=False))
    assert not last_only.all_logits
    with pytest.raises(GenerationValueError, match="needs the logits of every position"):
        _generate(last_only, count=4, lookup=True)
    full = Program.load(programs())
    # Plain greedy still works with last-position logits, and equals the full-logits program's.
    assert _generate(last_only, count=16).tokens == _generate(full, count=16).tokens


def test_sampling_with_a_seed_is_reproducible(programs):
    program = Program.load(programs())
    options = dict(temperature=1.0, top_k=40, top_p=0.95, repetition_penalty=1.1)
    runs = [_generate(program, sampling=SamplingOptions(seed=seed, **options)).tokens for seed in (7, 7, 8)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    assert runs[0] != _generate(program).tokens  # not greedy in disguise
    # Speculative sampling through the delegate (drafts kept and rolled back): a seed fixes it too.
    near_greedy = SamplingOptions(seed=7, temperature=0.05)
    speculative = [_generate(program, sampling=near_greedy, lookup=True, max_draft=4) for _ in range(2)]
    assert speculative[0].tokens == speculative[1].tokens
    stats = speculative[0].statistics
    assert 0 < stats.accepted < stats.drafted, (stats.accepted, stats.drafted)


def test_a_conversation_continues_and_goes_back(programs):
    """A second turn continues after the first (the whole conversation given: only what the program
    does not hold is fed), and regenerating the first answer (the prompt given again) gives the same
    ids: the delegate forgot the old answer."""
    program = Program.load(programs())
    chat = Conversation(program)
    first = chat.generate(PROMPT, 8)
    history = PROMPT + first.tokens
    assert chat.tokens == history
    second = chat.generate(history + [11, 12], 8)
    assert second.statistics.reused_tokens == len(history) - 1  # the last token chosen was not fed yet
    assert second.statistics.prompt_tokens == 3
    expected, _ = EagerConversation(eager_step(et_llama(True, generate_full_logits=True))).generate(history + [11, 12], 8)
    assert second.tokens == expected
    again = chat.generate(PROMPT, 8)
    assert again.tokens == first.tokens and again.statistics.reused_tokens == len(PROMPT) - 1


def test_drafts_that_never_land_are_never_fed_and_change_nothing(programs):
    """A draft program (a Python step: it costs time to ask) whose guesses the model rejects: the ids
    stay greedy's, it is probed (one guess at a plain step) four times as far apart after each miss, so
    it is asked a few times over 64 steps, and its drafts never reach the model. (A free drafter that
    never lands: tests/python/generation/test_draft_schedule.py.)"""
    plain = _greedy(programs())
    target = Program.load(programs())
    never = sorted(set(range(target.vocab)) - set(plain.tokens))[:3]  # ids greedy decoding here never chooses
    asked = []

    def wrong(tokens, position):
        asked.append((len(tokens), position))
        rows = np.zeros((len(tokens), target.vocab), np.float32)
        rows[np.arange(len(tokens)), [never[t % len(never)] for t in tokens]] = 1.0
        return rows

    draft = Program.from_step(wrong, target.vocab, CONTEXT, all_logits=False)
    result = _generate(target, draft=draft, max_draft=4)
    assert result.tokens == plain.tokens and result.statistics.drafted == 0
    assert result.statistics.calls == STEPS - 1  # the calls of plain decoding
    # Probed at the 1st, 2nd, 6th and 22nd plain steps (pauses 1, 4, 16), one guess each: one call of the draft.
    ends = [position + length - 1 - len(PROMPT) for length, position in asked]  # 0: the first decode step
    assert ends == [0, 1, 5, 21], asked
