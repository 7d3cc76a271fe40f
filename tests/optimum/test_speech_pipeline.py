"""Speech recognition on a Whisper program through transformers' own pipeline and generate
(executorch_openvino.speech): audio longer than one window, segment timestamps, the language and task
tokens. Each result must equal the same pipeline on the eager model the program was exported from:
the program computes, transformers decides (windows, strides, joins, timestamp rules, forced tokens).

The checkpoint is a multilingual Whisper of random weights with the real vocabulary's layout
(hf_checkpoints.whisper_multilingual): its text is noise, its ids are what is compared."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hf_checkpoints import SEQ2SEQ_TASKS, load_eager_seq2seq
from recipe_checks import export

SAMPLING_RATE = 16000
NAME = "whisper_multilingual"


def _speech(seconds: float, seed: int = 0) -> np.ndarray:
    """Voiced syllables in noise: a gliding pitch with harmonics under a syllable envelope."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(SAMPLING_RATE * seconds)) / SAMPLING_RATE
    pitch = 120 + 40 * np.sin(2 * np.pi * 0.2 * t + rng.uniform(0, 6))
    phase = 2 * np.pi * np.cumsum(pitch) / SAMPLING_RATE
    voice = sum(np.sin(k * phase) / k for k in range(1, 6))
    envelope = np.clip(np.sin(2 * np.pi * 4 * t + rng.uniform(0, 6)), 0, None) ** 2
    signal = voice * envelope + 0.05 * rng.standard_normal(t.size)
    return (0.8 * signal / np.abs(signal).max()).astype(np.float32)


@pytest.fixture(scope="module")
def pipelines(saved, tmp_path_factory):
    """(ours, eager): the pipeline on the exported program, and on the checkpoint's eager model."""
    from transformers import AutoProcessor, pipeline

    from executorch_openvino.speech import speech_pipeline

    checkpoint = saved(NAME)
    out = tmp_path_factory.mktemp("whisper-multilingual-pte")
    export(checkpoint, SEQ2SEQ_TASKS[NAME], out, max_seq_len=448)
    processor = AutoProcessor.from_pretrained(checkpoint)
    eager = pipeline("automatic-speech-recognition", model=load_eager_seq2seq(checkpoint),
                     tokenizer=processor.tokenizer, feature_extractor=processor.feature_extractor, device="cpu")
    return speech_pipeline(out, checkpoint=checkpoint), eager


def _same(ours, eager, audio, **options):
    """Ours with its defaults against eager told to decode greedily (the pipeline's own default is 5
    beams; ours decodes greedily, as GenAI's WhisperPipeline does)."""
    greedy = dict(options, generate_kwargs={**options.get("generate_kwargs", {}), "num_beams": 1})
    got, want = ours(audio.copy(), **options), eager(audio.copy(), **greedy)
    assert got == want, (got, want)
    return got


def test_long_audio_in_30_second_windows_joins_as_transformers_does_with_timestamps(pipelines):
    """75 s in three strided windows, the text joined and each segment's timestamps as the eager
    pipeline gives them (guards the window switch: the program's caches must follow each window's
    encoder states, and position 0 must start each window's transcript anew)."""
    ours, eager = pipelines
    result = _same(ours, eager, _speech(75), chunk_length_s=30, batch_size=1, return_timestamps=True,
                   generate_kwargs={"language": "en", "task": "transcribe"})
    assert result["chunks"] and all(len(chunk["timestamp"]) == 2 for chunk in result["chunks"])


def test_long_audio_without_chunks_decodes_sequentially_as_whisper_long_form_does(pipelines):
    """No chunk_length_s: the whole 65 s go to generate, which decodes window after window, each
    starting where the last segment ended (the encoder sees windows cut at other offsets each time)."""
    ours, eager = pipelines
    _same(ours, eager, _speech(65, seed=1), return_timestamps=True, generate_kwargs={"language": "fr"})


@pytest.mark.parametrize("language, task", [("de", "translate"), ("fr", "transcribe"), (None, None)])
def test_language_and_task_tokens_are_forced_or_detected_as_transformers_does(pipelines, language, task):
    """The forced <|lang|><|task|> prompt, and language detection (one decoder call from
    <|startoftranscript|>, without a cache) when none is given."""
    ours, eager = pipelines
    options = {key: value for key, value in (("language", language), ("task", task)) if value}
    _same(ours, eager, _speech(12, seed=2), return_language=True, return_timestamps=True, generate_kwargs=options)


def test_what_the_program_cannot_do_is_refused_clearly(pipelines):
    ours, _ = pipelines
    with pytest.raises(ValueError, match="one sequence at a time"):
        ours(_speech(5), generate_kwargs={"num_beams": 2})
    with pytest.raises(ValueError, match="takes features of shape"):
        ours.model.program.encode(torch.zeros(1, 80, 100))


def test_greedy_windows_without_timestamps_decode_whole_in_the_engine_as_transformers_does(pipelines, monkeypatch):
    """75 s in strided windows without timestamps: each window's greedy loop runs whole in the engine
    (no decoder step from Python), and the text equals the eager pipeline's, first plain, then with
    the tokens it chose most suppressed and its first token suppressed at the start only (the check
    that the suppression changed the text keeps it from passing vacuously). Guards the engine's loop
    against transformers': the end id kept in the sequence, suppress_tokens, begin_suppress_tokens for
    the first token only (tried: applied at every step, the texts differ)."""
    import collections

    ours, eager = pipelines
    program = ours.model.program
    stepped, chosen = [], []
    decode, transcribe = program.decode, program.transcribe
    monkeypatch.setattr(program, "decode", lambda *args: stepped.append(args) or decode(*args))
    monkeypatch.setattr(program, "transcribe",
                        lambda *args: (lambda got: chosen.append(got[0]) or got)(transcribe(*args)))
    audio, options = _speech(75, seed=3), dict(chunk_length_s=30, batch_size=1)
    language = {"language": "en", "task": "transcribe"}
    plain = _same(ours, eager, audio, **options, generate_kwargs=language)
    assert chosen and not stepped
    common = [token for token, _ in collections.Counter(t for window in chosen for t in window).most_common(3)]
    # The third most chosen token at the start only: suppressed at every step, the text would differ.
    begin = sorted({common[2], chosen[0][0]} - set(common[:2]))
    suppressed = _same(ours, eager, audio, **options,
                       generate_kwargs=dict(language, suppress_tokens=common[:2], begin_suppress_tokens=begin))
    assert suppressed["text"] != plain["text"] and not stepped


@pytest.mark.parametrize("form", ["strided", "sequential"])
def test_windows_with_timestamps_decode_whole_in_the_engine_as_transformers_does(pipelines, monkeypatch, form):
    """With timestamps too, each window's greedy loop runs whole in the engine (Whisper's timestamp
    rules applied there after the suppressed tokens, as transformers orders its processors): no decoder
    step from Python, and the text and every segment's timestamps equal the eager pipeline's, in
    strided windows and in sequential long-form decoding (where each window starts where the last
    segment ended, so a wrong timestamp moves every later window). Guards the rules against
    transformers' on real windows; tests/python/generation/test_timestamp_rule.py tries them one by one."""
    ours, eager = pipelines
    program = ours.model.program
    stepped, whole = [], program.windows_decoded_whole
    decode = program.decode
    monkeypatch.setattr(program, "decode", lambda *args: stepped.append(args) or decode(*args))
    if form == "strided":
        result = _same(ours, eager, _speech(75, seed=4), chunk_length_s=30, batch_size=1, return_timestamps=True,
                       generate_kwargs={"language": "en", "task": "transcribe"})
    else:
        result = _same(ours, eager, _speech(65, seed=5), return_timestamps=True, generate_kwargs={"language": "fr"})
    assert program.windows_decoded_whole > whole and not stepped
    assert result["chunks"] and all(len(chunk["timestamp"]) == 2 for chunk in result["chunks"])
