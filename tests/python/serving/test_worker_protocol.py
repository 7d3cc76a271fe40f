"""executorch-openvino-worker against ExecuTorch's own WorkerClient (the server's side of the
protocol): readiness, generation equal to eager PyTorch, warm resume counted truthfully, named
sessions kept apart, every session op, errors with their codes, cancellation mid-stream, stop strings."""

from __future__ import annotations

import threading

import pytest

from llm_models import CONTEXT
from serving_support import Config, eager_ids, encode, run


def test_ready_line_offers_sessions_and_cancellation(spawn):
    """Guards the negotiation: the server keeps its cancel pipe only when the ready line says so."""
    client = spawn("--max-sessions", "3")
    assert client.max_named_sessions == 3
    assert client.supports_cancel


def test_greedy_text_and_ids_equal_eager_pytorch(served, spawn):
    """Guards the whole path: the prompt text tokenized without added specials (the server renders
    them), streamed pieces, ids, usage."""
    model, tokenizer, _ = served
    client = spawn()
    prompt = "<s>the quick fox runs"
    pieces, stats = run(client, prompt, max_new_tokens=20)
    ids = encode(tokenizer, prompt)
    expected = eager_ids(model, ids, 20)
    assert stats.generated_token_ids == expected
    assert "".join(pieces) == tokenizer.decode(expected, skip_special_tokens=True)
    assert stats.num_prompt_tokens == len(ids) and stats.num_generated_tokens >= len(expected)
    assert stats.finish_reason == ("stop" if len(expected) < 20 else "length")
    assert stats.session_reset_reason == "new" and stats.reused_prompt_tokens == 0
    assert stats.prefilled_prompt_tokens == len(ids)


def test_a_follow_up_turn_prefills_only_its_new_tokens(served, spawn):
    """Warm resume: the second turn's prompt starts with the first turn and its answer; only the rest
    is prefilled and the counts say so (fails if the worker reported the prompt as all new)."""
    model, tokenizer, _ = served
    client = spawn()
    client.open_session("a")
    first = encode(tokenizer, "<s>the quick fox runs")
    _, stats = run(client, None, session_id="a", prompt_segments=[{"ids": first}], max_new_tokens=8)
    turn = first + stats.generated_token_ids + encode(tokenizer, " over the lazy dog")
    pieces, again = run(client, None, session_id="a", prompt_segments=[{"ids": turn}], max_new_tokens=8)
    assert again.session_reset_reason == "exact_prefix"
    held = len(first) + len(stats.generated_token_ids) - 1  # the last token chosen was never fed
    assert again.reused_prompt_tokens == held
    assert again.prefilled_prompt_tokens == len(turn) - held
    assert again.generated_token_ids == eager_ids(model, turn, 8)


def test_named_sessions_are_kept_apart(served, spawn):
    """Two sessions interleaved each get what they get alone, and each resumes from its own caches
    (fails if sessions shared one conversation: the engine would go back and recompute, the text
    would still be right, but nothing would be reused)."""
    model, tokenizer, _ = served
    client = spawn()
    prompts = {"a": "<s>the quick fox runs", "b": "<s>open vino runs llama"}
    alone = {name: eager_ids(model, encode(tokenizer, text), 6) for name, text in prompts.items()}
    history = {name: encode(tokenizer, text) for name, text in prompts.items()}
    for name in prompts:
        client.open_session(name)
    for round_ in range(2):
        for name in prompts:
            _, stats = run(client, None, session_id=name, prompt_segments=[{"ids": history[name]}], max_new_tokens=6)
            assert stats.session_reset_reason == ("new" if round_ == 0 else "exact_prefix")
            assert round_ == 0 or stats.reused_prompt_tokens > len(encode(tokenizer, prompts[name]))
            history[name] = history[name] + stats.generated_token_ids + encode(tokenizer, " and")
    for name in prompts:
        start = len(encode(tokenizer, prompts[name]))
        assert history[name][start : start + len(alone[name])] == alone[name]


def test_session_ops_capacity_reset_and_close(served, spawn):
    """open is idempotent and bounded (capacity_exhausted, the code the server turns into 429);
    reset forgets the context; close frees the slot."""
    from executorch.examples.llm_server.python.worker_client import WorkerError

    _, tokenizer, _ = served
    client = spawn("--max-sessions", "1")
    client.open_session("a")
    client.open_session("a")
    with pytest.raises(WorkerError) as refused:
        client.open_session("b")
    assert refused.value.code == "capacity_exhausted"
    ids = encode(tokenizer, "<s>the quick fox")
    run(client, None, session_id="a", prompt_segments=[{"ids": ids}], max_new_tokens=2)
    client.reset_session("a")
    _, stats = run(client, None, session_id="a", prompt_segments=[{"ids": ids}], max_new_tokens=2)
    assert stats.session_reset_reason == "new" and stats.reused_prompt_tokens == 0
    client.close_session("a")
    client.close_session("a")
    client.open_session("b")


def test_errors_carry_codes_and_change_nothing(served, spawn):
    """A prompt past the context (context_length_exceeded), ids outside the vocabulary and bad values
    are refused; the session still holds what it held (fails if a refused call touched it), and a refused
    request naming a new session admits none (fails if the session were opened before the checks)."""
    from executorch.examples.llm_server.python.worker_client import WorkerError

    model, tokenizer, _ = served
    client = spawn("--max-sessions", "2")
    client.open_session("a")
    ids = encode(tokenizer, "<s>the quick fox runs")
    _, first = run(client, None, session_id="a", prompt_segments=[{"ids": ids}], max_new_tokens=4)
    with pytest.raises(WorkerError) as refused:
        run(client, None, session_id="a", prompt_segments=[{"ids": ids * CONTEXT}])
    assert refused.value.code == "context_length_exceeded" and f"context holds {CONTEXT}" in str(refused.value)
    for bad in ([{"ids": [10**9]}], [{"ids": "x"}], [], [{"text": "a", "ids": [1]}]):
        with pytest.raises(WorkerError) as refused:
            run(client, None, session_id="a", prompt_segments=bad)
        assert refused.value.code == "invalid_request"
    with pytest.raises(WorkerError):
        run(client, "<s>the", top_p=7.0)
    # A refused request in a session not yet open admits nothing: the worker's one slot stays free.
    with pytest.raises(WorkerError) as refused:
        run(client, None, session_id="never", prompt_segments=[{"ids": ids * CONTEXT}])
    assert refused.value.code == "context_length_exceeded"
    turn = ids + first.generated_token_ids
    _, again = run(client, None, session_id="a", prompt_segments=[{"ids": turn}], max_new_tokens=4)
    assert again.reused_prompt_tokens == len(turn) - 1
    assert again.generated_token_ids == eager_ids(model, turn, 4)
    client.open_session("b")  # the second slot: "never" took none


def test_cancellation_mid_stream_ends_the_request_and_the_next_one_runs(served, spawn):
    """The server's stop() (its cancel pipe) ends a running generation at a token boundary with
    cancelled=true and no ids; the session is usable after (fails without the pipe reader)."""
    model, tokenizer, _ = served
    client = spawn()
    seen = []

    def on_piece(piece):
        seen.append(piece)
        if len(seen) == 3:
            threading.Thread(target=client.stop).start()

    stats = []
    client.generate(None, Config(max_new_tokens=CONTEXT, prompt_segments=[{"ids": encode(tokenizer, "<s>the")}]),
                    on_piece, stats.append)
    assert stats[0].cancelled and stats[0].generated_token_ids == []
    assert stats[0].num_generated_tokens < 40
    ids = encode(tokenizer, "<s>open vino")
    _, after = run(client, None, prompt_segments=[{"ids": ids}], max_new_tokens=5)
    assert not after.cancelled and after.generated_token_ids == eager_ids(model, ids, 5)


def test_a_stop_string_ends_the_text_before_it(served, spawn):
    model, tokenizer, _ = served
    client = spawn()
    ids = encode(tokenizer, "<s>the quick fox runs")
    full = tokenizer.decode(eager_ids(model, ids, 30), skip_special_tokens=True)
    stop = full[len(full) // 2 : len(full) // 2 + 3]
    pieces, stats = run(client, None, prompt_segments=[{"ids": ids}], max_new_tokens=30, stop=[stop])
    assert "".join(pieces) == full[: full.index(stop)]
    assert stats.finish_reason == "stop" and stats.generated_token_ids == []


def test_sampling_options_reach_the_engine(served, spawn):
    """The request's temperature, top_k, top_p and seed are the engine's: the same seed gives the same
    ids, another seed other ids, and they are the engine's own draws for those options (fails if the
    worker dropped an option or the seed)."""
    from executorch_openvino.generation import Conversation, Program, SamplingOptions

    _, tokenizer, folder = served
    client = spawn()
    ids = encode(tokenizer, "<s>the quick fox runs")
    options = dict(temperature=1.0, top_k=40, top_p=0.9, max_new_tokens=12)
    _, first = run(client, None, prompt_segments=[{"ids": ids}], seed=5, **options)
    _, again = run(client, None, prompt_segments=[{"ids": ids}], seed=5, **options)
    _, other = run(client, None, prompt_segments=[{"ids": ids}], seed=6, **options)
    assert first.generated_token_ids == again.generated_token_ids != other.generated_token_ids
    engine = Conversation(Program.load(folder / "model.pte")).generate(
        ids, 12, sampling=SamplingOptions(temperature=1.0, top_k=40, top_p=0.9, seed=5))
    assert first.generated_token_ids == engine.tokens


def test_the_worker_runs_without_torch(served, spawn):
    """The worker runs programs as a C++ application does, without ExecuTorch's Python bindings, which
    bring torch (a few hundred MB resident, seconds at start): fails if anything on its path imports them."""
    from pathlib import Path

    _, tokenizer, _ = served
    client = spawn()
    _, stats = run(client, None, prompt_segments=[{"ids": encode(tokenizer, "<s>the quick fox")}], max_new_tokens=2)
    assert stats.num_generated_tokens == 2
    maps = Path(f"/proc/{client._proc.pid}/maps").read_text()
    assert "libtorch" not in maps and "_portable_lib" not in maps
