"""Fuzzing the worker's input: the protocol lines ExecuTorch's server writes, mutated (bytes flipped,
cut, spliced, fields given values of every JSON type, deep nesting). The parser turns each into a
request or a ProtocolError and nothing else; a live worker answers every line with exactly one end
(done, error or an op's acknowledgement), refuses what is not a request as such (never as a failure of
its own), and afterwards still answers a request as it did before."""

from __future__ import annotations

import json
import random
import subprocess
import time

import pytest

from executorch_openvino.serving.protocol import Generate, ProtocolError, SessionOp, parse

VOCAB = 300
SEEDS = [
    {"prompt": "<s>the quick fox", "max_new_tokens": 3, "temperature": 0.0, "top_p": 1.0, "top_k": 0, "seed": 0,
     "stop": []},
    {"prompt_segments": [{"text": "<s>open"}, {"ids": [5, 6, 7]}], "max_new_tokens": 2, "session_id": "s1",
     "temperature": 0.7, "top_k": 5, "seed": 3, "stop": ["x"], "cancel_request_id": 4},
    {"op": "open", "session_id": "s1"}, {"op": "reset", "session_id": "s1"}, {"op": "close", "session_id": "s2"},
]
VALUES = [None, True, False, 0, -1, 1, 2**64, -2**63 - 1, 1e308, float("nan"), "", "x" * 200, "\u00e9\U0001f30d", "\ud800",
          [], [1, 2], [{"ids": [1]}], [{"text": 5}], {}, {"ids": []}, [[[[[]]]]]]
KEYS = ["prompt", "prompt_segments", "max_new_tokens", "temperature", "top_p", "top_k", "seed", "stop", "session_id",
        "cancel_request_id", "op", "unknown"]


def mutations(rng: random.Random, count: int):
    for _ in range(count):
        message = json.loads(json.dumps(rng.choice(SEEDS)))
        kind = rng.randrange(6)
        if kind == 0:
            message[rng.choice(KEYS)] = rng.choice(VALUES)
            text = json.dumps(message)
        elif kind == 1:
            message.pop(rng.choice(list(message)), None)
            text = json.dumps(message)
        else:
            text = bytearray(json.dumps(message).encode())
            if kind == 2 and text:
                for _ in range(rng.randint(1, 4)):
                    text[rng.randrange(len(text))] = rng.randrange(256)
            elif kind == 3:
                text = text[: rng.randrange(len(text) + 1)]
            elif kind == 4:
                at = rng.randrange(len(text) + 1)
                text[at:at] = json.dumps(rng.choice(VALUES)).encode()
            else:
                text = bytearray(b"[" * rng.choice([10, 1000, 100000]))
            text = bytes(text).replace(b"\n", b" ").replace(b"\r", b" ").decode("utf-8", "replace")
        yield text.replace("\n", " ")


def test_the_parser_gives_a_request_or_a_protocol_error_for_any_line():
    """Guards the parser against raising anything but ProtocolError (a TypeError on a field of the
    wrong type, a RecursionError on deep nesting) and against letting ids past the vocabulary or
    out-of-range numbers through."""
    rng = random.Random(0)
    accepted = refused = 0
    deadline = time.monotonic() + 10
    for text in mutations(rng, 20000):
        if time.monotonic() > deadline:
            break
        try:
            request = parse(text, VOCAB)
        except ProtocolError:
            refused += 1
            continue
        accepted += 1
        assert isinstance(request, (Generate, SessionOp))
        if isinstance(request, Generate):
            assert all(isinstance(s, str) or all(0 <= i < VOCAB for i in s) for s in request.segments)
            assert 0.0 <= request.temperature and 0.0 < request.top_p <= 1.0 and request.top_k >= 0
            assert request.max_new_tokens is None or request.max_new_tokens >= 0
    assert accepted > 100 and refused > 100  # both sides of the parser were reached


@pytest.mark.parametrize("seed", [1])
def test_a_live_worker_answers_every_line_once_and_goes_on(served, seed):
    from serving_support import worker_command, worker_environment
    from serving_support import eager_ids, encode

    model, tokenizer, folder = served
    worker = subprocess.Popen(worker_command(folder), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env=worker_environment(), stderr=subprocess.DEVNULL)
    try:
        assert json.loads(worker.stdout.readline())["ready"]

        def ask(text: str):
            worker.stdin.write(text.encode("utf-8", "surrogateescape") + b"\n")
            worker.stdin.flush()
            if not text.strip():
                return None
            while True:
                answer = json.loads(worker.stdout.readline())
                if "token" not in answer:
                    return answer

        ends = 0
        for text in mutations(random.Random(seed), 400):
            answer = ask(text)
            if answer is not None:
                ends += 1
                assert answer.get("done") or "error" in answer or {"opened", "closed", "reset"} & answer.keys()
                # generation_failed would be the worker failing on input it should have refused.
                assert "error" not in answer or answer.get("code") not in (None, "generation_failed"), answer
        assert ends > 300
        ids = encode(tokenizer, "<s>the quick fox runs")
        answer = ask(json.dumps({"prompt_segments": [{"ids": ids}], "max_new_tokens": 6}))
        assert answer["generated_token_ids"] == eager_ids(model, ids, 6)
        assert worker.poll() is None
    finally:
        worker.kill()
        worker.wait()
