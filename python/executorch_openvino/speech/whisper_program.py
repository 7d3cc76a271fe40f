"""A Whisper .pte as optimum-executorch exports it: `encoder(features) -> states` for one 30-second
window, and `text_decoder(token, states, position) -> logits` for one token a call, the decoder's
caches held by the program (position 0 starts a new transcript; the delegate computes the
cross-attention caches once per window: ir_passes/encoder_caches.py).

The program runs in the generation engine (generation/engine.py: Program.load_speech): the encoder's
states stay in the engine for the window's decoder calls, and a greedy window decodes there whole, a
step costing no Python (transcribe()). decode() is one step at a time, for a caller that decides each
token itself (transformers' generate with timestamp rules)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Tuple

ENCODER, DECODER = "encoder", "text_decoder"


class WhisperProgram:
    """The program's two methods, what its metadata says (its positions; the start token), and the
    window they decode."""

    def __init__(self, path):
        from ..generation.engine import Conversation, GenerationValueError, Program

        path = Path(path)
        if path.is_dir():
            path = path / "model.pte"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no Whisper program (export one with optimum-cli export executorch "
                                    "--task automatic-speech-recognition --recipe openvino)")
        self.path = path
        try:
            self._program = Program.load_speech(path)
        except GenerationValueError as error:
            raise ValueError(str(error)) from None
        self._conversation = Conversation(self._program)
        self.positions: Optional[int] = self._program.context
        self.start_token: Optional[int] = self._program.start_token
        self.feature_shape = tuple(self._program.feature_shape)
        self._states = None     # the window's states, as encode() returned them
        self._tokens: List[int] = []  # the window's decoder tokens fed so far (decode())
        self.windows_decoded_whole = 0  # windows transcribe() decoded in the engine

    def encode(self, features):
        """The encoder's states of one window of log-mel features ([1, mels, frames]); the decoder
        calls that follow attend to them."""
        import torch

        if tuple(features.shape) != self.feature_shape:
            raise ValueError(f"the encoder takes features of shape {list(self.feature_shape)} (one window), "
                             f"not {list(features.shape)}")
        states = torch.from_numpy(self._program.encode(features.detach().to(torch.float32).contiguous().numpy()))
        self._states, self._tokens = states, []
        return states

    def _check_window(self, states) -> None:
        if states is not self._states and (self._states is None or not _same_tensor(states, self._states)):
            raise ValueError("these encoder states are not the last window this program encoded: the program "
                             "decodes the window it encoded last (encode the window first)")

    def decode(self, token: int, position: int, states):
        """The logits after `token` at `position`, attending to `states` (the last window encoded):
        [vocabulary] floats."""
        import torch

        self._check_window(states)
        if self.positions is not None and position >= self.positions:
            raise ValueError(f"position {position} is past the {self.positions} positions this program's decoder "
                             "was exported with")
        if position > len(self._tokens):
            raise ValueError(f"position {position} skips positions: the window holds {len(self._tokens)} tokens")
        self._tokens = self._tokens[:position] + [int(token)]
        rows = []
        # One token fed (the engine keeps what the caches hold), its logits seen, nothing more.
        self._conversation.generate(self._tokens, 1, eos_ids=[], on_logits=lambda row: rows.append(row) or False)
        return torch.from_numpy(rows[0])

    def transcribe(self, states, prompt: Sequence[int], max_new_tokens: int, eos_ids: Sequence[int],
                   suppress: Sequence[int] = (), begin_suppress: Sequence[int] = (),
                   timestamps=None) -> Tuple[List[int], str]:
        """Greedy decoding of the last window encoded, whole in the engine: `prompt` (the decoder's
        forced tokens) from position 0, then up to max_new_tokens chosen, never one of `suppress`, nor
        one of `begin_suppress` first, and within Whisper's timestamp rules when `timestamps` (a
        generation.TimestampRule) is given. The tokens chosen (the end id included when it ended them)
        and why it stopped (the engine's stopped_by)."""
        self._check_window(states)
        if len(eos_ids) > 1:
            raise ValueError(f"one end id, not {len(eos_ids)}: the result could not say which one ended it")
        vocab = self._program.vocab  # ids past it are never chosen anyway (transformers ignores them too)
        result = self._conversation.generate(list(prompt), max_new_tokens, eos_ids=list(eos_ids),
                                             suppress=[t for t in suppress if 0 <= t < vocab],
                                             begin_suppress=[t for t in begin_suppress if 0 <= t < vocab],
                                             timestamps=timestamps)
        tokens = list(result.tokens)
        if result.stopped_by == "eos":
            tokens.append(int(eos_ids[0]))
        self._tokens = []  # the engine's conversation moved on: decode() feeds again from position 0
        self.windows_decoded_whole += 1
        return tokens, result.stopped_by


def _same_tensor(a, b) -> bool:
    import torch

    return tuple(a.shape) == tuple(b.shape) and bool(torch.equal(a.reshape(b.shape).to(b.dtype), b))
