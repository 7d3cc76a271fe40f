"""`transcribe`'s own part, without a Whisper program: reading the WAV file (what it accepts, what it
refuses and how), the flags checked against the checkpoint's generation config, and the refusals
before anything loads. Transcribing runs in tests/optimum (test_hugging_face_page.py,
test_speech_pipeline.py)."""

from __future__ import annotations

import wave

import numpy as np
import pytest

from executorch_openvino import cli
from executorch_openvino.cli import user_errors
from executorch_openvino.cli.transcribe import _generation_options, read_wav


def _write(path, samples, rate=16000, width=2, channels=1):
    with wave.open(str(path), "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(width)
        out.setframerate(rate)
        out.writeframes(np.asarray(samples).tobytes())


def test_integer_pcm_of_each_width_reads_as_its_fraction_of_full_scale(tmp_path):
    _write(tmp_path / "16.wav", np.array([0, 16384, -32768, 32767], dtype="<i2"))
    np.testing.assert_array_equal(read_wav(tmp_path / "16.wav", 16000), [0.0, 0.5, -1.0, 32767 / 32768])
    _write(tmp_path / "8.wav", np.array([128, 192, 0], dtype=np.uint8), width=1)
    np.testing.assert_array_equal(read_wav(tmp_path / "8.wav", 16000), [0.0, 0.5, -1.0])
    _write(tmp_path / "32.wav", np.array([1 << 30, -(1 << 31)], dtype="<i4"), width=4)
    np.testing.assert_array_equal(read_wav(tmp_path / "32.wav", 16000), [0.5, -1.0])


def test_stereo_is_averaged_frame_by_frame(tmp_path):
    _write(tmp_path / "stereo.wav", np.array([16384, 0, -16384, -16384], dtype="<i2"), channels=2)
    np.testing.assert_array_equal(read_wav(tmp_path / "stereo.wav", 16000), [0.25, -0.5])


def test_another_rate_is_refused_with_the_conversion_not_resampled(tmp_path):
    _write(tmp_path / "cd.wav", np.zeros(10, dtype="<i2"), rate=44100)
    with pytest.raises(user_errors.CliError, match=r"sampled at 44100 Hz; the model's processor expects 16000 Hz "
                                               r"\(convert it first, e.g. ffmpeg -i .*cd.wav -ar 16000 -ac 1 out.wav\)"):
        read_wav(tmp_path / "cd.wav", 16000)


@pytest.mark.parametrize("content, message", [
    (b"not a wav file at all", "not a readable WAV file"),
    (None, "holds no samples"),
])
def test_a_file_that_is_no_audio_is_refused_naming_it(tmp_path, content, message):
    path = tmp_path / "bad.wav"
    if content is None:
        _write(path, np.zeros(0, dtype="<i2"))
    else:
        path.write_bytes(content)
    with pytest.raises(user_errors.CliError, match=message) as raised:
        read_wav(path, 16000)
    assert raised.value.code == user_errors.USAGE_ERROR


def test_a_folder_without_a_program_is_a_usage_error_before_anything_loads(tmp_path, capsys):
    assert cli.main(["transcribe", str(tmp_path), "--audio", str(tmp_path / "a.wav")]) == user_errors.USAGE_ERROR
    assert "no model.pte" in capsys.readouterr().err


def _flags(**given):
    import argparse

    return argparse.Namespace(**{"language": None, "task": None, "max_new_tokens": None, **given})


def test_language_and_task_flags_become_generate_options_only_when_the_model_names_them():
    """Guards the check against the generation config: a language the model lacks (or any, on an
    English-only model) is a usage error naming what it has, not a KeyError from inside generate."""
    from types import SimpleNamespace

    multilingual = SimpleNamespace(lang_to_id={"<|en|>": 1, "<|fr|>": 2}, task_to_id={"transcribe": 3, "translate": 4})
    assert _generation_options(_flags(language="fr", task="translate", max_new_tokens=9), multilingual) == {
        "language": "fr", "task": "translate", "max_new_tokens": 9}
    assert _generation_options(_flags(), multilingual) == {}
    with pytest.raises(user_errors.CliError, match=r"--language de: not one of the model's languages \(en, fr\)"):
        _generation_options(_flags(language="de"), multilingual)
    english_only = SimpleNamespace(lang_to_id=None, task_to_id=None)
    with pytest.raises(user_errors.CliError, match="English-only"):
        _generation_options(_flags(language="en"), english_only)
    with pytest.raises(user_errors.CliError, match="--task translate"):
        _generation_options(_flags(task="translate"), english_only)
