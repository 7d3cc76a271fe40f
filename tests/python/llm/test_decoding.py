"""The decoding loop (generation/decoding.py) over programs lowered to our delegate
(llm/text_program.py): plain greedy decoding equals eager PyTorch's; speculative decoding, with
prompt-lookup drafts and with a smaller draft program, gives plain greedy decoding's ids over 64
steps (random-weight models fall into cycles under greedy decoding, so drafts do get accepted, and
rejected ones are rolled back by the delegate); sampling with a seed is reproducible, speculative or
not (that speculative sampling draws as plain sampling does: tests/python/generation)."""

from __future__ import annotations

import functools

import pytest

import executorch_openvino
from executorch_openvino.generation import (DraftModel, LookupDrafter, SamplingOptions, generate)
from executorch_openvino.llm import text_program
from llm_lowering import PROMPT
from llm_models import CONTEXT, Conversation, eager_step, et_llama, et_llama_draft, export_et_llama

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


def _greedy(path, **kwargs):
    program = text_program.load(path)
    return generate(program.model, PROMPT, STEPS, eos_ids=program.eos_ids, **kwargs)


def test_the_program_reads_as_a_text_model_and_plain_greedy_equals_eager(programs):
    program = text_program.load(programs())
    assert (program.model.context, program.model.max_call_tokens, program.model.all_logits) == (CONTEXT, CONTEXT - 1, True)
    assert program.eos_ids == [999] and program.bos_id is None
    expected, _ = Conversation(eager_step(et_llama(True, generate_full_logits=True))).generate(PROMPT, STEPS)
    result = generate(program.model, PROMPT, STEPS, eos_ids=program.eos_ids)
    assert result.tokens == expected and result.stopped_by == "length"
    assert result.statistics.calls == STEPS - 1  # the first token comes with the prompt


def test_prompt_lookup_gives_greedy_ids_with_drafts_accepted_and_rejected(programs):
    plain = _greedy(programs())
    speculative = _greedy(programs(), drafter=LookupDrafter(max_draft=4), max_draft=4)
    assert speculative.tokens == plain.tokens
    stats = speculative.statistics
    assert 0 < stats.accepted < stats.drafted and stats.calls < STEPS - 1, stats
    stats = speculative.statistics
    # Both kinds happened: accepted drafts saved calls, rejected ones were rolled back.
    assert 0 < stats.accepted < stats.drafted, (stats.accepted, stats.drafted)
    assert stats.calls < STEPS - 1


def test_a_draft_program_gives_greedy_ids(programs):
    plain = _greedy(programs())
    draft = text_program.load(programs(layers=1, first_of=2, full_logits=False))  # a draft needs the last logits only
    speculative = _greedy(programs(), drafter=DraftModel(draft.model), max_draft=3)
    assert speculative.tokens == plain.tokens
    assert speculative.statistics.drafted > 0
    # The target itself as its own draft: every draft accepted, a fraction of the calls.
    same = text_program.load(programs())
    ideal = _greedy(programs(), drafter=DraftModel(same.model), max_draft=4)
    assert ideal.tokens == plain.tokens
    assert ideal.statistics.accepted == ideal.statistics.drafted and ideal.statistics.calls <= (STEPS + 4) // 5 + 1


def test_speculative_decoding_is_refused_where_it_cannot_be_exact(programs):
    last_only = text_program.load(programs(full_logits=False))
    assert not last_only.model.all_logits
    with pytest.raises(ValueError, match="needs the logits of every position"):
        generate(last_only.model, PROMPT, 4, drafter=LookupDrafter())
    full = text_program.load(programs())
    # Plain greedy still works with last-position logits, and equals the full-logits program's.
    assert generate(last_only.model, PROMPT, 16).tokens == generate(full.model, PROMPT, 16).tokens


def test_sampling_with_a_seed_is_reproducible(programs):
    program = text_program.load(programs())
    options = dict(temperature=1.0, top_k=40, top_p=0.95, repetition_penalty=1.1)
    runs = [generate(program.model, PROMPT, STEPS, sampling=SamplingOptions(seed=seed, **options)).tokens
            for seed in (7, 7, 8)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    assert runs[0] != generate(program.model, PROMPT, STEPS).tokens  # not greedy in disguise
    # Speculative sampling through the delegate (drafts kept and rolled back): a seed fixes it too.
    near_greedy = SamplingOptions(seed=7, temperature=0.05)
    speculative = [generate(program.model, PROMPT, STEPS, sampling=near_greedy, drafter=LookupDrafter(max_draft=4),
                            max_draft=4) for _ in range(2)]
    assert speculative[0].tokens == speculative[1].tokens
    stats = speculative[0].statistics
    assert 0 < stats.accepted < stats.drafted, (stats.accepted, stats.drafted)


def test_a_conversation_continues_and_goes_back_through_the_loop(programs):
    """A second turn continues after the first (start, history), and regenerating the first answer
    (start at the prompt's end again) gives the same ids: the delegate forgot the old answer."""
    program = text_program.load(programs())
    first = generate(program.model, PROMPT, 8)
    history = PROMPT + first.tokens
    assert first.held == len(history) - 1  # the last token chosen is not fed yet
    second = generate(program.model, history[first.held:] + [11, 12], 8, start=first.held,
                      history=history[:first.held])
    expected, _ = Conversation(eager_step(et_llama(True, generate_full_logits=True))).generate(history + [11, 12], 8)
    assert second.tokens == expected
    again = generate(program.model, PROMPT[-1:], 8, start=len(PROMPT) - 1, history=PROMPT[:-1])
    assert again.tokens == first.tokens


def test_drafts_that_never_land_are_never_fed_and_change_nothing(programs):
    """A drafter that costs time to ask, whose guesses the model rejects: the ids stay greedy's, it is
    probed (one guess at a plain step) four times as far apart after each miss, so it is asked a few
    times over 64 steps, and its drafts never reach the model."""

    plain = _greedy(programs())
    never = sorted(set(range(128)) - set(plain.tokens))[:3]  # ids greedy decoding here never chooses

    class Wrong:
        asked = []

        def draft(self, history, limit):
            Wrong.asked.append(limit)
            return [never[history[-1] % len(never)]] * limit

    wrong = _greedy(programs(), drafter=Wrong(), max_draft=4)
    assert wrong.tokens == plain.tokens and wrong.statistics.drafted == 0
    assert wrong.statistics.calls == STEPS - 1  # the calls of plain decoding
    # Probed at plain steps 1, 2, 6, 22 (pauses 1, 4, 16), one guess each.
    assert Wrong.asked == [1] * 4, Wrong.asked


def test_a_free_drafter_whose_guesses_never_land_is_never_fed(programs):
    """A drafter that costs nothing to ask (as prompt lookup) is probed at every step: its drafts
    never go to the model while its guesses miss, so they cost no call."""
    plain = _greedy(programs())
    never = sorted(set(range(128)) - set(plain.tokens))[:3]

    class FreeWrong:
        free_to_ask, asked = True, 0

        def draft(self, history, limit):
            FreeWrong.asked += 1
            return [never[history[-1] % len(never)]] * limit

    wrong = _greedy(programs(), drafter=FreeWrong(), max_draft=4)
    assert wrong.tokens == plain.tokens and wrong.statistics.drafted == 0
    assert wrong.statistics.calls == STEPS - 1 and FreeWrong.asked == STEPS - 1
