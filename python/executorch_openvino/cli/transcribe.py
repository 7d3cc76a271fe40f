"""`transcribe DIR --audio speech.wav`: speech recognition with a Whisper program that
optimum-executorch exported (`optimum-cli export executorch --task automatic-speech-recognition
--recipe openvino`, or `export-hf`), through transformers' own pipeline and Whisper's generate on the
program (executorch_openvino.speech): audio of any length in 30-second windows, the language and task
tokens, segment timestamps; prints the text (and the segments), then the time it took."""

from __future__ import annotations

import time
import wave
from pathlib import Path

from .argument_types import positive
from .progress import say, step
from .user_errors import CliError, usage_error

WINDOW_SECONDS = 30  # Whisper's encoder hears one 30-second window

# What a WAV file may hold: 8-, 16- or 32-bit integer PCM (the wave module reads no float WAV).
_FULL_SCALE = {1: 128.0, 2: 32768.0, 4: 2147483648.0}


HELP = "transcribe or translate a WAV file with a Whisper program exported by optimum-executorch"
DESCRIPTION = ("Loads DIR/model.pte (a Whisper program optimum-executorch exported with the openvino "
               "recipe) and runs transformers' automatic-speech-recognition pipeline on it: audio longer than "
               "30 s in 30-second windows, the text joined as the pipeline joins it, greedy decoding. The "
               "checkpoint's folder gives the processor and the generation config (language and task tokens, "
               "timestamps).")


def add_arguments(parser) -> None:
    parser.add_argument("program", type=Path, metavar="DIR", help="the folder holding model.pte")
    parser.add_argument("--processor", type=Path, metavar="MODEL_DIR",
                        help="the checkpoint's folder (its preprocessor_config.json, tokenizer and "
                        "generation_config.json); default: DIR, when they were saved there")
    parser.add_argument("--audio", type=Path, required=True, metavar="FILE.wav",
                        help="mono or stereo integer PCM at the processor's sampling rate (16 kHz for Whisper)")
    parser.add_argument("--language", metavar="CODE",
                        help="the spoken language (en, fr, ...; default: detected, on a multilingual model)")
    parser.add_argument("--task", choices=("transcribe", "translate"),
                        help="transcribe, or translate into English (default: the model's, transcribe)")
    parser.add_argument("--timestamps", action="store_true",
                        help="print each segment with its start and end time, a line each")
    parser.add_argument("--max-new-tokens", type=positive(int), metavar="N",
                        help="at most N new tokens a window (default: the pipeline's, 256)")


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


def _generation_options(args, generation_config) -> dict:
    """generate's options from the flags, each checked against what the checkpoint's generation config
    names (a multilingual model's languages and tasks), so a wrong one is a usage error, not a stack
    trace from inside generate."""
    options = {}
    if args.language is not None:
        languages = sorted(code.strip("<|>") for code in (getattr(generation_config, "lang_to_id", None) or {}))
        if args.language.strip("<|>") not in languages:
            known = ", ".join(languages) or "none: the model is English-only or its generation config lists none"
            raise usage_error(f"--language {args.language}: not one of the model's languages ({known})")
        options["language"] = args.language.strip("<|>")
    if args.task is not None:
        if args.task not in (getattr(generation_config, "task_to_id", None) or {}):
            raise usage_error(f"--task {args.task}: the model's generation config names no such task token")
        options["task"] = args.task
    if args.max_new_tokens is not None:
        options["max_new_tokens"] = args.max_new_tokens
    return options


def main(args) -> int:
    if not (args.program / "model.pte").is_file():
        raise usage_error(f"{args.program}: no model.pte (export one with optimum-cli export executorch "
                          "--task automatic-speech-recognition --recipe openvino --output_dir DIR)")
    try:
        from executorch_openvino.speech import speech_pipeline
    except ImportError as error:
        raise CliError(f"transformers is needed: pip install 'executorch-openvino[optimum]' ({error})") from None
    checkpoint = args.processor or args.program
    processor = _processor(checkpoint)
    extractor = getattr(processor, "feature_extractor", None)
    if extractor is None or not hasattr(processor, "tokenizer"):
        raise usage_error(f"{checkpoint}: a {type(processor).__name__}, not a speech processor "
                          "with a feature extractor and a tokenizer")
    samples = read_wav(args.audio, extractor.sampling_rate)
    with step(f"loading {args.program / 'model.pte'}"):
        try:
            recognize = speech_pipeline(args.program, checkpoint=checkpoint)
        except (OSError, ValueError) as error:
            raise usage_error(f"{args.program}: {str(error).splitlines()[0]}") from None
    options = _generation_options(args, recognize.model.generation_config)
    seconds_of_audio = samples.size / extractor.sampling_rate
    start = time.perf_counter()
    result = recognize(samples, chunk_length_s=WINDOW_SECONDS if seconds_of_audio > WINDOW_SECONDS else None,
                       batch_size=1, return_timestamps=True if args.timestamps else None,
                       generate_kwargs=options)
    seconds = time.perf_counter() - start
    print(result["text"].strip(), flush=True)
    if args.timestamps:
        for chunk in result.get("chunks", []):
            begin, end = chunk["timestamp"]
            print(f"[{_clock(begin)} -> {_clock(end)}] {chunk['text'].strip()}", flush=True)
    say(f"{seconds_of_audio:.1f} s of audio in {seconds:.2f} s ({seconds_of_audio / seconds:.1f}x real time)")
    return 0


def _clock(seconds) -> str:
    """mm:ss.ss, or ' ... ' for a segment the pipeline left open (its end past the audio)."""
    if seconds is None:
        return "  ...   "
    return f"{int(seconds // 60):02d}:{seconds % 60:05.2f}"


def _processor(folder: Path):
    from transformers import AutoProcessor

    try:
        return AutoProcessor.from_pretrained(str(folder))
    except (OSError, ValueError) as error:
        raise usage_error(f"no Whisper processor in {folder} (pass the checkpoint's folder with --processor): "
                          f"{str(error).splitlines()[0]}") from None
