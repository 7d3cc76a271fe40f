"""Cancelling a running generation from another thread (Conversation.cancel, eov_conversation_cancel):
it ends at the next token with stopped_by "cancelled", the tokens chosen so far kept, and the
conversation goes on afterwards. The engine runs without the GIL while the program runs, so the other
thread gets to call cancel (a binding holding the GIL across the call would deadlock here: the test
has a timeout). Fails on an engine that never reads the flag (tried: it runs to max_new_tokens)."""

from __future__ import annotations

import threading
import time

import numpy as np

from executorch_openvino.generation import Conversation, Program

VOCAB = 16


def _slow_step(tokens, position):
    time.sleep(0.01)  # a program's call, in effect
    row = np.zeros((len(tokens), VOCAB), np.float32)
    row[:, (position + np.arange(len(tokens)) + 1) % VOCAB] = 1.0
    return row


def test_cancel_from_another_thread_ends_the_generation_at_the_next_token():
    chat = Conversation(Program.from_step(_slow_step, VOCAB, 4096, 64))
    timer = threading.Timer(0.2, chat.cancel)
    timer.start()
    began = time.perf_counter()
    done = chat.generate([1, 2, 3], 1000, eos_ids=[])
    timer.join()
    assert done.stopped_by == "cancelled"
    assert 0 < len(done.tokens) < 1000 and time.perf_counter() - began < 5
    again = chat.generate(chat.tokens, 5, eos_ids=[])  # the conversation goes on
    assert again.stopped_by == "length" and len(again.tokens) == 5
