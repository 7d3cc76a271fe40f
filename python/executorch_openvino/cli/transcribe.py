"""`transcribe DIR --audio speech.wav`: speech recognition with a Whisper program that
optimum-executorch exported (`optimum-cli export executorch --task automatic-speech-recognition
--recipe openvino`, or `export-hf`), run by optimum's own ExecuTorchModelForSpeechSeq2Seq; prints
the text, then the time the encoder and the decoding took."""

from __future__ import annotations

import time
import wave
from pathlib import Path

from .argument_types import positive
from .progress import say, step
from .user_errors import CliError, usage_error

# What a WAV file may hold: 8-, 16- or 32-bit integer PCM (the wave module reads no float WAV).
_FULL_SCALE = {1: 128.0, 2: 32768.0, 4: 2147483648.0}


HELP = "transcribe a WAV file with a Whisper program exported by optimum-executorch"
DESCRIPTION = ("Loads DIR/model.pte (a Whisper program optimum-executorch exported with the openvino "
               "recipe) with optimum's ExecuTorchModelForSpeechSeq2Seq, turns the audio into Whisper's features "
               "with the checkpoint's processor and prints the transcript. Needs pip install "
               "'executorch-openvino[optimum]'.")


def add_arguments(parser) -> None:
    parser.add_argument("program", type=Path, metavar="DIR", help="the folder holding model.pte")
    parser.add_argument("--processor", type=Path, metavar="MODEL_DIR",
                        help="the checkpoint's folder (its preprocessor_config.json and tokenizer); "
                        "default: DIR, when the processor was saved there")
    parser.add_argument("--audio", type=Path, required=True, metavar="FILE.wav",
                        help="mono or stereo integer PCM at the processor's sampling rate (16 kHz for Whisper)")
    parser.add_argument("--max-new-tokens", type=positive(int), metavar="N",
                        help="at most N tokens (default: as many as the decoder has positions for)")


def read_wav(path: Path, sampling_rate: int):
    """The file's samples as float32 in [-1, 1), channels averaged. Another rate is refused, not
    resampled here: a poor resampler changes what Whisper hears."""
    import numpy as np

    try:
        with wave.open(str(path), "rb") as audio:
            channels, width, rate = audio.getnchannels(), audio.getsampwidth(), audio.getframerate()
            frames = audio.readframes(audio.getnframes())
    except (OSError, EOFError, wave.Error) as error:
        raise usage_error(f"--audio {path}: not a readable WAV file ({error})") from None
    if width not in _FULL_SCALE:
        raise usage_error(f"--audio {path}: {8 * width}-bit samples; expected 8, 16 or 32-bit integer PCM")
    if rate != sampling_rate:
        raise usage_error(f"--audio {path}: sampled at {rate} Hz; the model's processor expects {sampling_rate} Hz "
                          f"(convert it first, e.g. ffmpeg -i {path} -ar {sampling_rate} -ac 1 out.wav)")
    if width == 1:  # 8-bit WAV is unsigned
        samples = np.frombuffer(frames, dtype=np.uint8).astype(np.float32) - 128.0
    else:
        samples = np.frombuffer(frames, dtype={2: "<i2", 4: "<i4"}[width]).astype(np.float32)
    samples = samples.reshape(-1, channels).mean(axis=1) / _FULL_SCALE[width]
    if samples.size == 0:
        raise usage_error(f"--audio {path}: holds no samples")
    return samples


def _processor(folder: Path):
    from transformers import AutoProcessor

    try:
        return AutoProcessor.from_pretrained(str(folder))
    except (OSError, ValueError) as error:
        raise usage_error(f"no Whisper processor in {folder} (pass the checkpoint's folder with --processor): "
                          f"{str(error).splitlines()[0]}") from None


def _positions(folder: Path):
    """The decoder's positions (max_target_positions of the checkpoint's config), or None. optimum
    sizes the program's cache at 1024 whatever the model has (Whisper: 448): past its positions eager
    raises IndexError, and so does the program."""
    from transformers import AutoConfig

    try:
        return getattr(AutoConfig.from_pretrained(str(folder)), "max_target_positions", None)
    except (OSError, ValueError):
        return None


def main(args) -> int:
    if not (args.program / "model.pte").is_file():
        raise usage_error(f"{args.program}: no model.pte (export one with optimum-cli export executorch "
                          "--task automatic-speech-recognition --recipe openvino --output_dir DIR)")
    try:
        import executorch_openvino.optimum  # noqa: F401  registers the recipes, loads our library
        from optimum.executorch import ExecuTorchModelForSpeechSeq2Seq
    except ImportError as error:
        raise CliError(f"optimum-executorch is needed: pip install 'executorch-openvino[optimum]' ({error})") from None
    processor = _processor(args.processor or args.program)
    extractor = getattr(processor, "feature_extractor", None)
    if extractor is None or not hasattr(processor, "tokenizer"):
        raise usage_error(f"{args.processor or args.program}: a {type(processor).__name__}, not a speech processor "
                          "with a feature extractor and a tokenizer")
    samples = read_wav(args.audio, extractor.sampling_rate)
    with step(f"loading {args.program / 'model.pte'}"):
        model = ExecuTorchModelForSpeechSeq2Seq.from_pretrained(str(args.program))
    features = processor(samples, sampling_rate=extractor.sampling_rate, return_tensors="pt").input_features
    # optimum's max_seq_len counts the start token.
    longest = _positions(args.processor or args.program)
    if args.max_new_tokens is not None:
        longest = args.max_new_tokens + 1 if longest is None else min(longest, args.max_new_tokens + 1)
    start = time.perf_counter()
    ids = model.generate(features, max_seq_len=longest)
    seconds = time.perf_counter() - start
    print(processor.tokenizer.decode(ids, skip_special_tokens=True), flush=True)
    say(f"{len(ids)} tokens from {samples.size / extractor.sampling_rate:.1f} s of audio in {seconds:.2f} s "
        f"({len(ids) / seconds:.1f} tokens/s, the encoder included)")
    return 0
