"""Speech recognition with a Whisper program that optimum-executorch exported (methods `encoder` and
`text_decoder`, our `openvino` recipe or any other): transformers' own automatic-speech-recognition
pipeline and Whisper's generate run on the program, so audio of any length (30-second windows, or
Whisper's sequential long-form decoding), segment timestamps, language detection and the
transcribe / translate tasks behave exactly as they do with the eager model.

    from executorch_openvino.speech import speech_pipeline
    recognize = speech_pipeline("whisper_pte/")          # the folder holding model.pte
    recognize(samples, chunk_length_s=30, return_timestamps=True,
              generate_kwargs={"language": "fr", "task": "translate"})
"""

from __future__ import annotations

from .whisper_program import WhisperProgram
from .whisper_model import ProgramWhisper, speech_pipeline

__all__ = ["WhisperProgram", "ProgramWhisper", "speech_pipeline"]
