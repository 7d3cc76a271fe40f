"""State files: a conversation's state (its tokens and the program's paged caches) written to a file
and read back in another process continues exactly as the conversation that never stopped, without
feeding its tokens again; truncated, damaged and foreign files are refused with the reason and change
nothing; sessions of one program in one process keep their saved states apart."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from serving_support import worker_environment

PROMPT = list(range(3, 40))
TURN = [7, 8, 9, 10]

CONTINUE = """
import json, sys
from executorch_openvino.generation.engine import Conversation, Program
program = Program.load(sys.argv[1])
chat = Conversation(program)
chat.read_state(sys.argv[2])
held = chat.tokens
result = chat.generate(json.loads(sys.argv[3]), 8)
print(json.dumps({"held": held, "tokens": result.tokens, "reused": result.statistics.reused_tokens}))
"""


def _conversation(folder):
    from executorch_openvino.generation.engine import Conversation, Program

    return Conversation(Program.load(folder / "model.pte"))


def test_a_state_file_continues_in_another_process_as_if_it_never_stopped(served, tmp_path):
    """Guards the round trip: the other process's continuation equals this one's, and it reuses every
    position the file holds (fails if the caches were not installed: the engine would then feed the
    tokens again, and reused would be 0; fails too if the tokens or the caches were cut short)."""
    folder = served[2]
    chat = _conversation(folder)
    first = chat.generate(PROMPT, 5)
    chat.write_state(tmp_path / "chat.state")
    held = chat.tokens
    expected = chat.generate(held + TURN, 8)
    done = subprocess.run([sys.executable, "-c", CONTINUE, str(folder / "model.pte"), str(tmp_path / "chat.state"),
                           json.dumps(held + TURN)], capture_output=True, text=True, env=worker_environment(), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    other = json.loads(done.stdout.strip().splitlines()[-1])
    assert other["held"] == held == PROMPT + first.tokens
    assert other["tokens"] == expected.tokens
    assert other["reused"] == len(held) - 1 == expected.statistics.reused_tokens


def test_bad_files_are_refused_and_change_nothing(served, tmp_path):
    """Truncated, damaged, empty and foreign files (the same program loaded with other options: its
    compiled model is another) are refused with their reason; the conversation reading them still
    holds what it held (fails if a file were installed before it was checked whole)."""
    import executorch_openvino
    from executorch_openvino.generation.engine import GenerationValueError

    folder = served[2]
    chat = _conversation(folder)
    chat.generate(PROMPT, 3)
    good = tmp_path / "good.state"
    chat.write_state(good)
    data = good.read_bytes()
    with executorch_openvino.using_options(num_threads="1"):
        foreign = _conversation(folder)
    foreign.generate([5, 6, 7], 2)
    foreign.write_state(tmp_path / "foreign.state")
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x40
    cases = {"truncated": (data[: len(data) // 3], "truncated"), "header only": (data[:20], "truncated"),
             "damaged": (bytes(flipped), "CRC-32"), "empty": (b"", "does not begin"),
             "not one": (b"x" * 100, "does not begin"),
             "foreign": ((tmp_path / "foreign.state").read_bytes(), "another program, or the same one loaded with other options")}
    other = _conversation(folder)
    other.generate([11, 12, 13, 14], 2)
    before = other.tokens
    for name, (content, reason) in cases.items():
        path = tmp_path / f"{name}.state"
        path.write_bytes(content)
        with pytest.raises(GenerationValueError, match=reason):
            other.read_state(path)
        assert other.tokens == before, name
    with pytest.raises(GenerationValueError, match="cannot be opened"):
        other.read_state(tmp_path / "missing.state")
    # Still the conversation it was: it continues from its own caches.
    result = other.generate(before + [20], 2)
    assert result.statistics.reused_tokens == len(before) - 1


def test_saved_states_of_two_programs_in_one_process_stay_apart(served):
    """Guards the owner scoping: restoring session A's saved prefix must not rewind session B's caches
    (it did when saved states were process-wide: B then answered from A's prefix)."""
    folder = served[2]
    a, b = _conversation(folder), _conversation(folder)
    a.generate(PROMPT, 0)
    a.save("system")
    b_first = b.generate([50, 51, 52, 53, 54], 4)
    expected = _conversation(folder).generate([50, 51, 52, 53, 54] + b_first.tokens + TURN, 6).tokens
    a.restore("system")
    a.generate(PROMPT + TURN, 3)
    continued = b.generate(b.tokens + TURN, 6)
    assert continued.tokens == expected
    assert continued.statistics.reused_tokens == len([50, 51, 52, 53, 54] + b_first.tokens) - 1


def test_grown_caches_are_refused_with_the_reason(served, tmp_path):
    import executorch_openvino
    from executorch_openvino.generation.engine import GenerationValueError

    with executorch_openvino.using_options(attention="grown"):
        chat = _conversation(served[2])
    chat.generate(PROMPT, 2)
    with pytest.raises(GenerationValueError, match="state files need the caches paged"):
        chat.write_state(tmp_path / "grown.state")
    assert not (tmp_path / "grown.state").exists() and not (tmp_path / "grown.state.partial").exists()


def test_named_sessions_outlive_the_worker_with_a_state_folder(served, spawn, tmp_path):
    """With --state-dir a named session's state is written when it closes or the worker stops
    (SIGTERM, as the server stops it) and read back by the next worker: its follow-up turn prefills
    only the new tokens and answers as the conversation that never stopped."""
    from serving_support import eager_ids, encode, run

    model, tokenizer, _ = served
    folder = tmp_path / "states"
    first = encode(tokenizer, "<s>the quick fox runs")
    client = spawn("--state-dir", str(folder))
    for name in ("closed", "stopped"):
        client.open_session(name)
        _, stats = run(client, None, session_id=name, prompt_segments=[{"ids": first}], max_new_tokens=6)
    answer = stats.generated_token_ids
    client.close_session("closed")
    assert (folder / "closed.state").is_file() and not (folder / "stopped.state").exists()
    client.close()  # SIGTERM
    assert (folder / "stopped.state").is_file()

    client = spawn("--state-dir", str(folder))
    turn = first + answer + encode(tokenizer, " over the lazy dog")
    for name in ("closed", "stopped"):
        client.open_session(name)
        _, again = run(client, None, session_id=name, prompt_segments=[{"ids": turn}], max_new_tokens=6)
        assert again.session_reset_reason == "exact_prefix"
        assert again.reused_prompt_tokens == len(first) + len(answer) - 1
        assert again.generated_token_ids == eager_ids(model, turn, 6)
    client.reset_session("closed")
    assert not (folder / "closed.state").exists()


def _reencoded_with_a_part_cut(data: bytes, block: int) -> bytes:
    """The state file `data` with its first partition's first cache one `block` shorter, and its
    header (size, CRC-32) made right again: a whole file whose caches do not fit the program."""
    import struct
    import zlib

    payload = bytearray(data[24:])
    at = 4 + 8
    form_length = struct.unpack_from("<Q", payload, at)[0]
    at += 8 + form_length + 8 + 4  # the form, the length, the part count
    part_length = struct.unpack_from("<Q", payload, at)[0]
    struct.pack_into("<Q", payload, at, part_length - block)
    del payload[at + 8 + part_length - block : at + 8 + part_length]
    return data[:8] + struct.pack("<IQI", 1, len(payload), zlib.crc32(payload)) + bytes(payload)


def test_a_whole_file_whose_caches_do_not_fit_is_refused(served, tmp_path):
    """Guards the check of each cache's size against the program's (PagedCaches::check): a file of
    the right program, whole and with a right CRC, but one block short in one cache, is refused before
    anything is installed (fails if the sizes were taken on trust: the cache would be restored short)."""
    from executorch_openvino.generation.engine import GenerationValueError

    chat = _conversation(served[2])
    chat.generate(PROMPT, 3)
    good = tmp_path / "good.state"
    chat.write_state(good)
    cut = tmp_path / "cut.state"
    cut.write_bytes(_reencoded_with_a_part_cut(good.read_bytes(), 64))
    other = _conversation(served[2])
    with pytest.raises(GenerationValueError, match="cache 0 of the state holds"):
        other.read_state(cut)
    assert other.tokens == []
    other.read_state(good)
    assert other.tokens == chat.tokens
