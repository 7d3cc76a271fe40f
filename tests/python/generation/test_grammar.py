"""Structured output's constraints (src/generation/grammar) over llguidance's C API, driven through the
test-only C surface tests/cpp/generation/grammar_probe.cpp loaded with ctypes. It runs here, in a
Python process, because the llguidance wheel's module (which exports the C API) needs Python's own
symbols; a C++ application opens a libllguidance built from the crate instead.

Tokenizers are built in code with the `tokenizers` package (no downloads): a byte-level BPE (GPT-2,
Llama 3), a SentencePiece-style one (Metaspace "▁", <0xNN> byte fallback; Llama 2), and a synthetic
byte-level vocabulary of ~150k tokens for the mask timing."""

from __future__ import annotations

import ctypes
import json
import os
import random
import re
import statistics
from pathlib import Path

import numpy as np
import pytest

llguidance = pytest.importorskip("llguidance")
import llguidance._lib  # noqa: E402  (the module whose file exports the C API)
from workloads.tokenizer import synthetic_byte_level_json  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
WHEEL_LIBRARY = llguidance._lib.__file__

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "maxItems": 3},
        "ok": {"type": "boolean"},
    },
    "required": ["name", "age", "ok"],
    "additionalProperties": False,
}

TRAINING_TEXT = [
    '{"name": "ana", "age": 31, "tags": ["red", "blue"], "ok": true}',
    '{"name": "bo", "age": 7, "ok": false}',
    "123-abc 456-xyz 789-hello 000-world",
    "café naïve 日本語 über señor",  # non-ASCII: byte tokens that are half a character
] * 20


# ---- the probe -------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def probe_library() -> ctypes.CDLL:
    default = REPO / "build" / "tests" / "cpp" / "grammar_probe.so"
    path = Path(os.environ.get("EXECUTORCH_OPENVINO_GRAMMAR_PROBE", default))
    if not path.is_file():
        pytest.fail(f"{path} does not exist: build it first (make build, or the grammar_probe target)")
    lib = ctypes.CDLL(str(path))
    P, S, C, U32P, I64P = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_int64)
    lib.eov_grammar_probe_open.restype = P
    lib.eov_grammar_probe_open.argtypes = [C, C, U32P, C, S, I64P, S, I64P, S, S, C, C, C, S]
    lib.eov_grammar_probe_free.argtypes = [P]
    lib.eov_grammar_probe_allowed.argtypes = [P, U32P, S, ctypes.POINTER(ctypes.c_uint64), C, S]
    lib.eov_grammar_probe_accept.argtypes = [P, ctypes.c_int64, C, S]
    lib.eov_grammar_probe_rollback.argtypes = [P, S, C, S]
    lib.eov_grammar_probe_state.argtypes = [P]
    lib.eov_grammar_probe_clone.restype = P
    lib.eov_grammar_probe_clone.argtypes = [P, C, S]
    lib.eov_grammar_probe_token_table.restype = S
    lib.eov_grammar_probe_token_table.argtypes = [P, S, ctypes.c_int, U32P, C, S]
    lib.eov_grammar_probe_mask_words.restype = S
    lib.eov_grammar_probe_mask_words.argtypes = [P]
    return lib


class ProbeError(Exception):
    pass


def _error_buffer():
    return ctypes.create_string_buffer(4096)


def _int64s(values):
    return (ctypes.c_int64 * max(1, len(values)))(*values)


class Constraint:
    """One LlguidanceConstraint (and its GrammarTokenizer) behind the probe."""

    def __init__(self, lib, handle, vocab_words):
        self.lib, self.handle, self.words = lib, handle, vocab_words

    @classmethod
    def open(cls, lib, kind, grammar, *, tokenizer_json=None, token_bytes=None, special=(), eos=(), vocab_size=0,
             library=WHEEL_LIBRARY, words=None):
        error = _error_buffer()
        sizes = blob = None
        count = 0
        if token_bytes is not None:
            count = len(token_bytes)
            sizes = (ctypes.c_uint32 * count)(*[len(b) for b in token_bytes])
            blob = b"".join(token_bytes)
        handle = lib.eov_grammar_probe_open(
            None if library is None else str(library).encode(),
            None if tokenizer_json is None else tokenizer_json.encode(),
            sizes, blob, count, _int64s(list(special)), len(special), _int64s(list(eos)), len(eos), vocab_size,
            kind.encode(), grammar.encode(), error, len(error))
        if not handle:
            raise ProbeError(error.value.decode())
        constraint = cls(lib, handle, 0)
        constraint.words = words if words is not None else lib.eov_grammar_probe_mask_words(handle)
        return constraint

    def close(self):
        if self.handle:
            self.lib.eov_grammar_probe_free(self.handle)
            self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def mask(self, words=None, timing=None) -> np.ndarray:
        words = self.words if words is None else words
        out = (ctypes.c_uint32 * words)()
        nanoseconds = ctypes.c_uint64()
        error = _error_buffer()
        if self.lib.eov_grammar_probe_allowed(self.handle, out, words, ctypes.byref(nanoseconds), error, len(error)) != 0:
            raise ProbeError(error.value.decode())
        if timing is not None:
            timing.append(nanoseconds.value)
        return np.frombuffer(bytes(out), dtype=np.uint32).copy()

    def allowed_ids(self, **kwargs) -> np.ndarray:
        return np.flatnonzero(np.unpackbits(self.mask(**kwargs).view(np.uint8), bitorder="little"))

    def accept(self, token):
        error = _error_buffer()
        if self.lib.eov_grammar_probe_accept(self.handle, int(token), error, len(error)) != 0:
            raise ProbeError(error.value.decode())

    def rollback(self, count):
        error = _error_buffer()
        if self.lib.eov_grammar_probe_rollback(self.handle, count, error, len(error)) != 0:
            raise ProbeError(error.value.decode())

    @property
    def complete(self):
        return bool(self.lib.eov_grammar_probe_state(self.handle) & 1)

    @property
    def stopped(self):
        return bool(self.lib.eov_grammar_probe_state(self.handle) & 2)

    def clone(self):
        error = _error_buffer()
        handle = self.lib.eov_grammar_probe_clone(self.handle, error, len(error))
        if not handle:
            raise ProbeError(error.value.decode())
        return Constraint(self.lib, handle, self.words)

    def token_table(self, count, include_special=False):
        total = self.lib.eov_grammar_probe_token_table(self.handle, count, int(include_special), None, None, 0)
        sizes = (ctypes.c_uint32 * count)()
        blob = ctypes.create_string_buffer(max(1, total))
        self.lib.eov_grammar_probe_token_table(self.handle, count, int(include_special), sizes, blob, total)
        raw, table, offset = blob.raw, [], 0
        for size in sizes:
            table.append(raw[offset:offset + size])
            offset += size
        return table


# ---- tokenizers ------------------------------------------------------------------------------------


def byte_level_tokenizer(vocab_size=600):
    """A byte-level BPE with every byte in its alphabet; ids 0, 1, 2: <unk>, <s>, </s>."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(TRAINING_TEXT, trainer)
    return tokenizer


def sentencepiece_tokenizer(decoder="sequence"):
    """Llama 2's layout: <unk> <s> </s>, the 256 <0xNN> byte tokens, then pieces with "▁" for a space;
    decoder Replace("▁", " ") + ByteFallback + Fuse + Strip, or Metaspace (decoder="metaspace")."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for byte in range(256):
        vocab[f"<0x{byte:02X}>"] = len(vocab)
    merges = []
    for piece in ["▁", "w", "o", "r", "d", "a", "b", "c", "1", "2", "3", "-", "{", "}", '"', ":", ","]:
        vocab.setdefault(piece, len(vocab))
    for left, right in [("▁", "w"), ("▁w", "o"), ("▁wo", "r"), ("▁wor", "d"), ("a", "b"), ("ab", "c")]:
        vocab[left + right] = len(vocab)
        merges.append((left, right))
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True))
    tokenizer.add_special_tokens([AddedToken("<unk>", special=True), AddedToken("<s>", special=True),
                                  AddedToken("</s>", special=True)])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    if decoder == "metaspace":
        tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    else:
        tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                               decoders.Strip(" ", 1, 0)])
    return tokenizer


@pytest.fixture(scope="module")
def byte_level():
    tokenizer = byte_level_tokenizer()
    return tokenizer, tokenizer.to_str()


# ---- checks ----------------------------------------------------------------------------------------


def check_against_schema(value):
    assert isinstance(value, dict)
    assert set(value) <= set(SCHEMA["properties"]) and {"name", "age", "ok"} <= set(value)
    assert isinstance(value["name"], str) and len(value["name"]) <= 8
    assert isinstance(value["age"], int) and not isinstance(value["age"], bool) and 0 <= value["age"] <= 150
    assert isinstance(value["ok"], bool)
    if "tags" in value:
        assert isinstance(value["tags"], list) and len(value["tags"]) <= 3
        assert all(tag in ("red", "green", "blue") for tag in value["tags"])


def random_walk(constraint, table, eos, rng, max_steps=600, end_chance=0.3):
    """Random allowed tokens until the constraint stops (an end token taken); the text's bytes."""
    text = b""
    for _ in range(max_steps):
        allowed = constraint.allowed_ids()
        assert allowed.size > 0, f"no token allowed after {text!r}"
        ends = [t for t in allowed if t in eos]
        if ends and (rng.random() < end_chance or len(ends) == allowed.size):
            constraint.accept(ends[0])
            assert constraint.stopped
            return text
        assert not constraint.stopped
        token = int(rng.choice([t for t in allowed if t not in eos]))
        constraint.accept(token)
        text += table[token]
    pytest.fail(f"no end after {max_steps} tokens: {text!r}")


# ---- tests -----------------------------------------------------------------------------------------


def test_json_schema_walks_always_give_valid_json(probe_library, byte_level):
    tokenizer, tokenizer_json = byte_level
    vocab = tokenizer.get_vocab_size()
    with Constraint.open(probe_library, "json_schema", json.dumps(SCHEMA), tokenizer_json=tokenizer_json,
                         eos=[2]) as constraint:
        table = constraint.token_table(vocab)
        # The end token is allowed only where the object may end, so not at the start.
        assert 2 not in constraint.allowed_ids() and not constraint.complete
    for seed in range(60):
        with Constraint.open(probe_library, "json_schema", json.dumps(SCHEMA), tokenizer_json=tokenizer_json,
                             eos=[2]) as constraint:
            text = random_walk(constraint, table, {2}, random.Random(seed))
            check_against_schema(json.loads(text.decode("utf-8")))


def test_regex_walks_always_match(probe_library, byte_level):
    tokenizer, tokenizer_json = byte_level
    table = None
    for seed in range(60):
        with Constraint.open(probe_library, "regex", r"[0-9]{3}-[a-z]+", tokenizer_json=tokenizer_json,
                             eos=[2]) as constraint:
            table = table or constraint.token_table(tokenizer.get_vocab_size())
            text = random_walk(constraint, table, {2}, random.Random(seed), end_chance=0.4)
            assert re.fullmatch(r"[0-9]{3}-[a-z]+", text.decode("ascii")), text


def test_lark_grammar(probe_library, byte_level):
    tokenizer, tokenizer_json = byte_level
    grammar = 'start: answer\nanswer: "yes" | "no" | "maybe " NUMBER\nNUMBER: /[0-9]{1,2}/\n'
    outputs = set()
    for seed in range(30):
        with Constraint.open(probe_library, "lark", grammar, tokenizer_json=tokenizer_json, eos=[2]) as constraint:
            table = constraint.token_table(tokenizer.get_vocab_size())
            outputs.add(random_walk(constraint, table, {2}, random.Random(seed)).decode())
    assert all(re.fullmatch(r"yes|no|maybe [0-9]{1,2}", text) for text in outputs), outputs


def test_bad_grammars_fail_with_llguidances_message(probe_library, byte_level):
    _, tokenizer_json = byte_level
    with pytest.raises(ProbeError) as failure:
        Constraint.open(probe_library, "json_schema", '{"type": "frobnicate"}', tokenizer_json=tokenizer_json, eos=[2])
    message = str(failure.value)
    assert message.startswith("invalid_argument: llguidance refused the json_schema: ") and "frobnicate" in message
    with pytest.raises(ProbeError, match="invalid_argument: llguidance refused the json_schema: EOF while parsing"):
        Constraint.open(probe_library, "json_schema", '{"type": ', tokenizer_json=tokenizer_json, eos=[2])
    with pytest.raises(ProbeError, match="invalid_argument: llguidance refused the regex: .*"):
        Constraint.open(probe_library, "regex", "[0-9", tokenizer_json=tokenizer_json, eos=[2])
    with pytest.raises(ProbeError, match="invalid_argument: llguidance refused the lark: .*"):
        Constraint.open(probe_library, "lark", "start: undefined_rule", tokenizer_json=tokenizer_json, eos=[2])
    with pytest.raises(ProbeError, match='invalid_argument: unknown grammar kind "yaml"'):
        Constraint.open(probe_library, "yaml", "x", tokenizer_json=tokenizer_json, eos=[2])
    with pytest.raises(ProbeError, match="invalid_argument: llguidance refused the tokenizer: .*out of range"):
        Constraint.open(probe_library, "regex", "a", tokenizer_json=tokenizer_json, eos=[10**6])
    with pytest.raises(ProbeError, match="invalid_argument: llguidance refused the tokenizer: .*JSON"):
        Constraint.open(probe_library, "regex", "a", tokenizer_json="{not json", eos=[2])


def test_a_missing_library_fails_naming_the_path_and_the_fix(probe_library, byte_level, monkeypatch, tmp_path):
    _, tokenizer_json = byte_level
    missing = tmp_path / "libllguidance.so"
    with pytest.raises(ProbeError) as failure:
        Constraint.open(probe_library, "regex", "a", tokenizer_json=tokenizer_json, eos=[2], library=missing)
    message = str(failure.value)
    assert message.startswith(f"runtime_unavailable: cannot open the llguidance library {missing} (given by the caller)")
    assert "pip install llguidance" in message and "LLGUIDANCE_LIB_PATH" in message

    monkeypatch.setenv("LLGUIDANCE_LIB_PATH", str(missing))
    with pytest.raises(ProbeError, match=f"cannot open the llguidance library {re.escape(str(missing))} "
                                         r"\(from LLGUIDANCE_LIB_PATH\)"):
        Constraint.open(probe_library, "regex", "a", tokenizer_json=tokenizer_json, eos=[2], library=None)
    monkeypatch.delenv("LLGUIDANCE_LIB_PATH")
    with pytest.raises(ProbeError, match=r"cannot open the llguidance library libllguidance.so \(by the system's "
                                         r"library search, as LLGUIDANCE_LIB_PATH is not set\)"):
        Constraint.open(probe_library, "regex", "a", tokenizer_json=tokenizer_json, eos=[2], library=None)
    # A library that is not llguidance: named, with the symbol it lacks.
    with pytest.raises(ProbeError, match="unsupported_runtime: cannot use .*grammar_probe.so .* does not export "
                                         "llg_get_version"):
        Constraint.open(probe_library, "regex", "a", tokenizer_json=tokenizer_json, eos=[2], library=probe_library._name)
    # The variable, when right, is what is opened.
    monkeypatch.setenv("LLGUIDANCE_LIB_PATH", WHEEL_LIBRARY)
    Constraint.open(probe_library, "regex", "a", tokenizer_json=tokenizer_json, eos=[2], library=None).close()


def test_rollback_gives_back_the_earlier_masks(probe_library, byte_level):
    tokenizer, tokenizer_json = byte_level
    with Constraint.open(probe_library, "json_schema", json.dumps(SCHEMA), tokenizer_json=tokenizer_json,
                         eos=[2]) as constraint:
        tokens = tokenizer.encode('{"name": "ana"').ids
        assert len(tokens) >= 3
        masks = [constraint.mask()]
        for token in tokens[:3]:
            constraint.accept(token)
            masks.append(constraint.mask())
        constraint.rollback(2)
        assert np.array_equal(constraint.mask(), masks[1])
        clone = constraint.clone()
        for token in tokens[1:3]:
            constraint.accept(token)
        assert np.array_equal(constraint.mask(), masks[3])
        with clone:  # the copy stayed where it was cloned
            assert np.array_equal(clone.mask(), masks[1])
        with pytest.raises(ProbeError, match="invalid_argument: cannot roll back 4 tokens: only 3 were accepted"):
            constraint.rollback(4)
        constraint.rollback(3)
        assert np.array_equal(constraint.mask(), masks[0])


def test_a_token_not_allowed_is_refused_and_changes_nothing(probe_library, byte_level):
    tokenizer, tokenizer_json = byte_level
    with Constraint.open(probe_library, "regex", r"[0-9]{3}-[a-z]+", tokenizer_json=tokenizer_json,
                         eos=[2]) as constraint:
        before = constraint.mask()
        letter = tokenizer.token_to_id("a")
        with pytest.raises(ProbeError, match=f'invalid_argument: token {letter} \\("a"\\) is not allowed by the '
                                             "grammar here"):
            constraint.accept(letter)
        with pytest.raises(ProbeError, match="invalid_argument: token 2 .* is not allowed"):
            constraint.accept(2)  # the end, before the text may end
        with pytest.raises(ProbeError, match="outside the grammar's vocabulary"):
            constraint.accept(10**7)
        assert np.array_equal(constraint.mask(), before)
        for token in tokenizer.encode("123-ab").ids:
            constraint.accept(token)
        assert constraint.complete and not constraint.stopped
        constraint.accept(2)
        assert constraint.stopped
        assert list(constraint.allowed_ids()) == [2]  # only the end once stopped


def test_the_end_where_the_grammar_stops(probe_library, byte_level):
    """Where nothing but the end may follow (after an object's "}"), the end is accepted, nothing after
    it, and a rollback through it leaves the constraint usable (llguidance itself refuses to consume
    an end token once stopped; the constraint records that end itself)."""
    tokenizer, tokenizer_json = byte_level
    with Constraint.open(probe_library, "json_schema", json.dumps(SCHEMA), tokenizer_json=tokenizer_json,
                         eos=[2]) as constraint:
        tokens = tokenizer.encode('{"name":"bo","age":7,"ok":true}').ids
        for token in tokens:
            constraint.accept(token)
        assert constraint.stopped and constraint.complete and list(constraint.allowed_ids()) == [2]
        constraint.accept(2)
        with pytest.raises(ProbeError, match="cannot follow: the output has ended"):
            constraint.accept(2)
        constraint.rollback(2)  # the end and the "}"
        assert not constraint.stopped and not constraint.complete
        constraint.accept(tokens[-1])
        constraint.accept(2)
        assert constraint.stopped


def test_several_end_tokens_and_padding_rows(probe_library, byte_level):
    tokenizer, tokenizer_json = byte_level
    vocab = tokenizer.get_vocab_size()
    padded = vocab + 100  # the model's logits are wider than the tokenizer (padding rows)
    words = (padded + 31) // 32
    with Constraint.open(probe_library, "regex", "[0-9]+", tokenizer_json=tokenizer_json, eos=[2, 1],
                         vocab_size=padded) as constraint:
        assert constraint.words == words
        for token in tokenizer.encode("42").ids:
            constraint.accept(token)
        allowed = constraint.allowed_ids(words=words + 3)  # a wider buffer: zeros beyond
        assert {1, 2} <= set(allowed) and max(allowed) < vocab
        assert list(constraint.allowed_ids(words=words)) == list(allowed)
        table = constraint.token_table(padded, include_special=True)
        assert table[vocab:] == [b""] * 100
    with Constraint.open(probe_library, "regex", "[0-9]+", tokenizer_json=tokenizer_json, eos=[2]) as constraint:
        # The tokenizer's own vocabulary, bits beyond it 0 in a buffer sized for the padded model.
        allowed = constraint.allowed_ids(words=words)
        assert max(allowed) < vocab and 2 not in allowed


def test_byte_level_token_bytes_are_raw(probe_library, byte_level):
    tokenizer, tokenizer_json = byte_level
    vocab = tokenizer.get_vocab_size()
    with Constraint.open(probe_library, "regex", "a", tokenizer_json=tokenizer_json, eos=[2]) as constraint:
        table = constraint.token_table(vocab)
        special = constraint.token_table(vocab, include_special=True)
    # "é" is C3 A9: the byte-level tokens "Ã" and "©" are each half of it, and come back as that byte.
    assert table[tokenizer.token_to_id("Ã")] == b"\xc3" and table[tokenizer.token_to_id("©")] == b"\xa9"
    assert table[tokenizer.token_to_id("Ġ")] == b" "
    for token in range(3, vocab):  # every token's bytes decode back as `tokenizers` decodes them
        decoded = tokenizer.decode([token])
        if "\ufffd" not in decoded:
            assert table[token].decode("utf-8") == decoded, token
    assert table[:3] == [b"", b"", b""] and special[:3] == [b"<unk>", b"<s>", b"</s>"]
    text = "café 日本語"
    assert b"".join(table[t] for t in tokenizer.encode(text).ids) == text.encode()


def test_sentencepiece_token_bytes_keep_the_space(probe_library):
    tokenizer = sentencepiece_tokenizer()
    with Constraint.open(probe_library, "regex", "( word)+", tokenizer_json=tokenizer.to_str(),
                         eos=[2]) as constraint:
        table = constraint.token_table(tokenizer.get_vocab_size())
        assert table[tokenizer.token_to_id("▁word")] == b" word"
        assert table[tokenizer.token_to_id("▁")] == b" "
        assert table[tokenizer.token_to_id("<0xE6>")] == b"\xe6" and table[tokenizer.token_to_id("<0x0A>")] == b"\n"
        assert table[1] == b"" and table[2] == b""
        # The grammar's text is matched against those bytes.
        constraint.accept(tokenizer.token_to_id("▁word"))
        assert constraint.complete
        # And a character the vocabulary has no piece for is spelled with byte tokens.
    with Constraint.open(probe_library, "regex", "é", tokenizer_json=tokenizer.to_str(), eos=[2]) as constraint:
        assert list(constraint.allowed_ids()) == [tokenizer.token_to_id("<0xC3>")]


def test_a_metaspace_decoder_needs_the_token_bytes(probe_library):
    """llguidance 1.9.1 reads only byte-level and Replace+ByteFallback decoders from tokenizer.json; a
    tokenizer with a Metaspace decoder is refused, and is given as its tokens' bytes instead."""
    tokenizer = sentencepiece_tokenizer(decoder="metaspace")
    with pytest.raises(ProbeError, match="llguidance refused the tokenizer: .*decoder type"):
        Constraint.open(probe_library, "regex", "a", tokenizer_json=tokenizer.to_str(), eos=[2])
    pieces = []
    for token in range(tokenizer.get_vocab_size()):
        piece = tokenizer.id_to_token(token)
        match = re.fullmatch(r"<0x([0-9A-F]{2})>", piece)
        pieces.append(bytes([int(match.group(1), 16)]) if match else piece.replace("▁", " ").encode())
    with Constraint.open(probe_library, "regex", "( word)+", token_bytes=pieces, special=[0, 1, 2],
                         eos=[2]) as constraint:
        table = constraint.token_table(len(pieces))
        assert table[tokenizer.token_to_id("▁word")] == b" word" and table[0:3] == [b"", b"", b""]
        assert tokenizer.token_to_id("▁word") in constraint.allowed_ids()


def test_mask_time_at_150k_tokens(probe_library):
    import time

    tokenizer_json, vocab = synthetic_byte_level_json(150_000)
    started = time.perf_counter()
    constraint = Constraint.open(probe_library, "json_schema", json.dumps(SCHEMA), tokenizer_json=tokenizer_json,
                                 eos=[0])
    created = time.perf_counter() - started
    with constraint:
        timing = []
        table = constraint.token_table(vocab)
        rng = random.Random(0)
        steps = 0
        for _ in range(20):  # 20 objects, one after the other, each from a fresh start
            timing_start = len(timing)
            text = b""
            while True:
                allowed = constraint.allowed_ids(timing=timing)
                if 0 in allowed and (rng.random() < 0.3 or allowed.size == 1):
                    break
                token = int(rng.choice([t for t in allowed if t != 0]))
                constraint.accept(token)
                text += table[token]
                steps += 1
            check_against_schema(json.loads(text))
            constraint.rollback(len(timing) - timing_start - 1)
    micros = [t / 1000 for t in timing]
    # Free text: a string of any length, where most of the vocabulary is allowed at each step.
    free = []
    with Constraint.open(probe_library, "json_schema", '{"type":"object","properties":{"text":{"type":"string"}},'
                         '"required":["text"],"additionalProperties":false}', tokenizer_json=tokenizer_json,
                         eos=[0]) as free_text:
        for _ in range(300):
            allowed = free_text.allowed_ids(timing=free)
            free_text.accept(int(rng.choice([t for t in allowed if t != 0])))
    free = [t / 1000 for t in free]
    print(f"\nfree-text string: {len(free)} masks, median {statistics.median(free):.0f} us, "
          f"p90 {sorted(free)[int(len(free) * 0.9)]:.0f} us, max {max(free):.0f} us, "
          f"allowed at the last step {allowed.size}")
    print(f"\n150k-token vocabulary ({vocab} tokens): matcher created in {created * 1000:.0f} ms (tokenizer "
          f"included); {len(micros)} masks: median {statistics.median(micros):.0f} us, "
          f"p90 {sorted(micros)[int(len(micros) * 0.9)]:.0f} us, max {max(micros):.0f} us, first {micros[0]:.0f} us")
    assert statistics.median(micros) < 20_000 and statistics.median(free) < 20_000
