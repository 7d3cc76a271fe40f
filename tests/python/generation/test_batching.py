"""Batched conversations (continuous batching, src/generation/batch.h): conversations of one program
generating at the same time on their own threads have their steps run in one call of the program. Each
gets the tokens it gets alone, greedy or sampled; members that end early, fail or come later do not
stop or disturb the others; programs that cannot carry several sequences a call are refused."""

from __future__ import annotations

import copy
import threading

import pytest
import torch

from executorch_openvino.generation.engine import Conversation, GenerationValueError, Program, SamplingOptions
from llm_lowering import PROMPT, lowered

PROMPTS = [list(PROMPT), [3, 9, 4, 1], list(PROMPT[:5]) + [77, 12], [42] * 12]
JOIN_SECONDS = 300  # a batch that waits for a member that never steps would hang: the tests bound it


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp("batching") / "hf.pte"
    path.write_bytes(lowered("hf_static_cache").pte)
    return Program.load(path)


def _together(jobs):
    """Runs each job on a thread of its own; their results (a job's exception is its result)."""
    results = [None] * len(jobs)

    def run(index):
        try:
            results[index] = jobs[index]()
        except Exception as error:  # noqa: BLE001 - handed to the test
            results[index] = error

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_SECONDS)
    assert not any(thread.is_alive() for thread in threads), "a batched conversation never finished"
    return results


def _alone(program, prompt, count, **options):
    return Conversation(program).generate(prompt, count, **options).tokens


def test_batched_conversations_get_what_each_gets_alone(program):
    """Four prompts of different lengths, 40 greedy tokens each (past a 32-position block): every
    conversation's tokens are its own alone, and the steps did share calls (the prompts in one, then
    four conversations a call). Guards the rows each member takes (one row off gives another's token)
    and each slot's own blocks."""
    before = program.batch_counts()
    members = [Conversation(program, batched=True) for _ in PROMPTS]
    got = _together([lambda m=m, p=p: m.generate(p, 40).tokens for m, p in zip(members, PROMPTS)])
    assert got == [_alone(program, p, 40) for p in PROMPTS]
    after = program.batch_counts()
    calls, shared = after["calls"] - before["calls"], after["shared"] - before["shared"]
    assert after["sequences"] - before["sequences"] == 4 * 40
    assert shared >= 35 and calls <= 45, after  # about 40 calls of four, not 160 of one


def test_prompts_longer_together_than_a_call_are_fed_in_several(program):
    """Four 40-token prompts: together 160 tokens, past the 95 a call of this program takes. The batch
    puts in a call only what fits and the rest in the next, and each conversation gets its tokens alone.
    Guards the call's limit (without it the program refuses the call of 160)."""
    prompts = [[(7 * i + j) % 120 + 1 for j in range(40)] for i in range(4)]
    assert sum(map(len, prompts)) > program.max_call_tokens
    members = [Conversation(program, batched=True) for _ in prompts]
    got = _together([lambda m=m, p=p: m.generate(p, 8).tokens for m, p in zip(members, prompts)])
    assert got == [_alone(program, p, 8) for p in prompts]


def test_sampled_batched_conversations_draw_what_each_draws_alone(program):
    """Each conversation samples with its own seed: the draws are its own alone (a batch shares calls,
    not samplers)."""
    options = [SamplingOptions(temperature=0.9, top_k=40, top_p=0.95, seed=seed) for seed in (1, 2, 3)]
    members = [Conversation(program, batched=True) for _ in options]
    got = _together([lambda m=m, p=p, o=o: m.generate(p, 24, sampling=o).tokens
                     for m, p, o in zip(members, PROMPTS, options)])
    assert got == [_alone(program, p, 24, sampling=o) for p, o in zip(PROMPTS, options)]


def test_members_that_end_early_or_fail_do_not_hold_the_others(program):
    """One member stops after 3 tokens, one is refused before its first step (a token outside the
    vocabulary), one generates 30: the last finishes with its own tokens. Guards the batch forgetting a
    member whose generation ended, however it ended (else the others wait for it forever)."""
    members = [Conversation(program, batched=True) for _ in range(3)]
    short, bad, long = _together([
        lambda: members[0].generate(PROMPTS[0], 3).tokens,
        lambda: members[1].generate([program.vocab + 5], 10),
        lambda: members[2].generate(PROMPTS[1], 30).tokens,
    ])
    assert isinstance(bad, GenerationValueError) and "outside the model's vocabulary" in str(bad)
    assert short == _alone(program, PROMPTS[0], 3)
    assert long == _alone(program, PROMPTS[1], 30)


def test_conversations_continue_after_more_members_join(program):
    """Two batched conversations generate, three more join (their slots make the caches grow), then the
    first two continue with a follow-up turn: they reuse what they held and get what a conversation that
    never stopped gets. Guards the copy of what the slots held when the caches grow."""
    first = [Conversation(program, batched=True) for _ in range(2)]
    turns = _together([lambda m=m, p=p: m.generate(p, 20).tokens for m, p in zip(first, PROMPTS)])
    later = [Conversation(program, batched=True) for _ in range(3)]
    follow = [PROMPTS[i] + turns[i] + [9, 10] for i in range(2)]
    jobs = [lambda m=m, f=f: m.generate(f, 20) for m, f in zip(first, follow)]
    jobs += [lambda m=m, p=p: m.generate(p, 20).tokens for m, p in zip(later, PROMPTS[1:])]
    results = _together(jobs)
    for i in range(2):
        assert results[i].statistics.reused_tokens == len(PROMPTS[i]) + 19, results[i].statistics  # the last token is not fed yet
        assert results[i].tokens == _alone(program, follow[i], 20)
    assert results[2:] == [_alone(program, p, 20) for p in PROMPTS[1:]]


def test_a_batched_conversation_keeps_no_saved_state_and_drafts_nothing(program, tmp_path):
    """Saved states and state files cover a program's own conversations, and a batched one's steps
    return one row: saving, state files and speculative decoding are refused, naming why."""
    member = Conversation(program, batched=True)
    member.generate(PROMPTS[0], 2)
    for action in (lambda: member.save("x"), lambda: member.write_state(tmp_path / "state"),
                   lambda: member.read_state(tmp_path / "state")):
        with pytest.raises(GenerationValueError, match="slot of its own"):
            action()
    with pytest.raises(GenerationValueError, match="not for batched conversations"):
        member.generate(PROMPTS[0], 4, lookup=True)


def test_programs_that_cannot_carry_several_sequences_a_call_are_refused(tmp_path):
    """ExecuTorch's Llama gives a call's first position only; a Hugging Face program that returns the
    last position's logits has no row for the others: batched conversations are refused with the
    reason."""
    llama = tmp_path / "llama.pte"
    llama.write_bytes(lowered("dynamic_prompt").pte)
    with pytest.raises(GenerationValueError, match="first position only"):
        Conversation(Program.load(llama), batched=True)
    last = tmp_path / "last.pte"
    last.write_bytes(_last_row_program())
    with pytest.raises(GenerationValueError, match="last position's logits only"):
        Conversation(Program.load(last), batched=True)


def _last_row_program() -> bytes:
    """The Hugging Face program of llm_lowering, returning the last position's logits only."""
    import executorch_openvino
    from executorch.exir import to_edge_transform_and_lower
    from executorch_openvino.llm.hf_export import static_cache_decoder
    from llm_models import CONTEXT, hf_llama

    class LastRow(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.decoder = static_cache_decoder(copy.deepcopy(hf_llama()), CONTEXT)

        def forward(self, input_ids, cache_position):
            return self.decoder(input_ids=input_ids, cache_position=cache_position)[:, -1:, :]

    tokens = torch.export.Dim("tokens", min=1, max=CONTEXT - 1)
    with torch.no_grad():
        exported = torch.export.export(LastRow(), (), {"input_ids": torch.zeros(1, 4, dtype=torch.long),
                                                       "cache_position": torch.arange(4)},
                                       dynamic_shapes={"input_ids": {1: tokens}, "cache_position": {0: tokens}},
                                       strict=False)
    edge = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    return edge.to_executorch().buffer


def test_generate_many_gives_each_prompt_the_text_generate_gives_it(tmp_path):
    """The path docs/generation.md shows: TextGenerator.generate_many over a Hugging Face program with
    every position's logits and its tokenizer gives each prompt generate()'s text, in the prompts'
    order, one SamplingOptions each (sampled with their seeds, so the order matters)."""
    from executorch_openvino.llm.text_generation import TextGenerator
    from llm_lowering import hf_text_program

    folder = hf_text_program(tmp_path)
    generator = TextGenerator.load(folder / "model.pte", folder / "tokenizer.json")
    prompts = ["Once upon a time", "The river", "A small robot said"]
    options = [SamplingOptions(temperature=0.8, top_k=20, seed=seed) for seed in (5, 6, 7)]
    many = generator.generate_many(prompts, 24, sampling=options)
    alone = [generator.generate(p, 24, sampling=o) for p, o in zip(prompts, options)]
    assert [m.text for m in many] == [a.text for a in alone]
    assert [m.result.tokens for m in many] == [a.result.tokens for a in alone]
    assert len({m.text for m in many}) == 3
    with pytest.raises(ValueError, match="2 sampling options for 3 prompts"):
        generator.generate_many(prompts, 4, sampling=options[:2])
