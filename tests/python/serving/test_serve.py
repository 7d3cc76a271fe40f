"""`executorch-openvino serve` end to end, as the docs tell users to run it: ExecuTorch's own server
with our worker behind it, reached with the `openai` client and with ExecuTorch's language-neutral
OpenAI contract suite (conformance/, shipped in its wheel)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from serving_support import SCRIPT, Served, expected_answer

pytest.importorskip("fastapi", reason="serve needs the [serve] extra (requirements.txt installs it)")


@pytest.fixture(scope="module")
def scripted_server(scripted):
    server = Served(scripted)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def llama_server(served):
    server = Served(served[2], "--max-sessions", "2")
    yield server
    server.stop()


def test_openai_contract_suite_passes_without_skipping(scripted_server):
    """ExecuTorch's conformance suite against serve: models, chat with and without streaming, a
    multi-byte stream, usage, a tool call's shape, a 400 for a prompt past the context. It skips
    itself when no server answers: a skip fails this test, as does any failure."""
    import executorch.examples.llm_server as llm_server

    suite = Path(llm_server.__file__).parent / "conformance" / "test_openai_contract.py"
    environment = dict(os.environ, OPENAI_BASE_URL=scripted_server.base_url, OPENAI_MODEL="served")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(suite)],
                          capture_output=True, text=True, env=environment, timeout=600,
                          cwd=suite.parent)
    assert done.returncode == 0, done.stdout[-4000:] + scripted_server.output()
    assert " passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-4000:]


def test_openai_client_reads_the_scripted_answer_and_its_tool_call(scripted_server):
    """The text the program says reaches the client whole (streamed or not), and the tool call is
    parsed by the server into OpenAI's shape."""
    import json

    from openai import OpenAI

    client = OpenAI(base_url=scripted_server.base_url, api_key="none")
    messages = [{"role": "user", "content": "weather?"}]
    answer = client.chat.completions.create(model="served", messages=messages, max_tokens=1)
    assert answer.choices[0].message.content == SCRIPT[0] and answer.choices[0].finish_reason == "length"
    streamed = client.chat.completions.create(model="served", messages=messages, max_tokens=1, stream=True)
    assert "".join(chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices) == SCRIPT[0]
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    called = client.chat.completions.create(model="served", messages=messages, tools=tools, max_tokens=8)
    call = called.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    assert called.choices[0].finish_reason == "tool_calls"


def test_streamed_and_whole_answers_equal_eager_greedy(served, llama_server):
    from openai import OpenAI

    client = OpenAI(base_url=llama_server.base_url, api_key="none")
    messages = [{"role": "user", "content": "the quick fox"}]
    expected = expected_answer(served, messages, 12)
    whole = client.chat.completions.create(model="served", messages=messages, max_tokens=12, temperature=0)
    assert whole.choices[0].message.content == expected
    stream = client.chat.completions.create(model="served", messages=messages, max_tokens=12, temperature=0,
                                            stream=True)
    assert "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices) == expected


def test_two_named_sessions_keep_their_own_conversations(served, llama_server):
    """Session a's second turn, after session b ran in between, equals the same conversation asked
    without a session; the server's log shows it resumed from a's caches (exact_prefix), which fails
    if the worker kept one conversation for both."""
    from openai import OpenAI

    client = OpenAI(base_url=llama_server.base_url, api_key="none")
    history = {name: [{"role": "user", "content": text}] for name, text in (("a", "the quick fox"),
                                                                          ("b", "open vino runs"))}
    for name in ("a", "b"):
        answer = client.chat.completions.create(model="served", messages=history[name], max_tokens=6,
                                                extra_body={"session_id": name})
        history[name] += [{"role": "assistant", "content": answer.choices[0].message.content},
                          {"role": "user", "content": "and then"}]
    second = client.chat.completions.create(model="served", messages=history["a"], max_tokens=6,
                                            extra_body={"session_id": "a"})
    alone = client.chat.completions.create(model="served", messages=history["a"], max_tokens=6)
    assert second.choices[0].message.content == alone.choices[0].message.content
    assert "session_id=a reason=exact_prefix" in llama_server.output()


def test_stop_and_max_tokens(served, llama_server):
    from openai import OpenAI

    client = OpenAI(base_url=llama_server.base_url, api_key="none")
    messages = [{"role": "user", "content": "open vino"}]
    full = expected_answer(served, messages, 30)
    stop = full[len(full) // 2 : len(full) // 2 + 2]
    assert stop and full.index(stop) > 0
    cut = client.chat.completions.create(model="served", messages=messages, max_tokens=30, stop=[stop])
    assert cut.choices[0].message.content == full[: full.index(stop)]
    assert cut.choices[0].finish_reason == "stop"
    short = client.chat.completions.create(model="served", messages=messages, max_tokens=3)
    assert short.usage.completion_tokens == 3 and short.choices[0].finish_reason == "length"
