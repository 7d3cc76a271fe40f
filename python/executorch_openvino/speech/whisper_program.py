"""A Whisper .pte as optimum-executorch exports it: `encoder(features) -> states` for one 30-second
window, and `text_decoder(token, states, position) -> logits` for one token a call, the decoder's
caches held by the program (position 0 starts a new transcript; the delegate computes the
cross-attention caches once per window: ir_passes/encoder_caches.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

ENCODER, DECODER = "encoder", "text_decoder"


class WhisperProgram:
    """The program's two methods and what its metadata says (its positions; the start token)."""

    def __init__(self, path):
        import executorch_openvino  # noqa: F401  our delegate registered before the program loads
        from executorch.runtime import Runtime

        path = Path(path)
        if path.is_dir():
            path = path / "model.pte"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no Whisper program (export one with optimum-cli export executorch "
                                    "--task automatic-speech-recognition --recipe openvino)")
        self.path = path
        self._program = Runtime.get().load_program(path)
        methods = set(self._program.method_names)
        missing = {ENCODER, DECODER} - methods
        if missing:
            raise ValueError(f"{path}: not a Whisper program: it has no {' or '.join(sorted(missing))} method "
                             f"(it has {', '.join(sorted(methods))})")
        self._encoder = self._program.load_method(ENCODER)
        self._decoder = self._program.load_method(DECODER)
        self.positions: Optional[int] = self._metadata("get_max_seq_len")
        self.start_token: Optional[int] = self._metadata("decoder_start_token_id")
        encoder_input = self._encoder.metadata.input_tensor_meta(0)
        self.feature_shape = tuple(encoder_input.sizes())

    def _metadata(self, name: str) -> Optional[int]:
        if name not in self._program.method_names:
            return None
        return int(self._program.load_method(name).execute([])[0])

    def encode(self, features):
        """The encoder's states of one window of log-mel features ([1, mels, frames])."""
        if tuple(features.shape) != self.feature_shape:
            raise ValueError(f"the encoder takes features of shape {list(self.feature_shape)} (one window), "
                             f"not {list(features.shape)}")
        return self._encoder.execute([features.contiguous()])[0]

    def decode(self, token: int, position: int, states):
        """The logits after `token` at `position`, attending to `states` ([vocabulary] floats)."""
        import torch

        if self.positions is not None and position >= self.positions:
            raise ValueError(f"position {position} is past the {self.positions} positions this program's decoder "
                             "was exported with")
        logits = self._decoder.execute([torch.tensor([[token]], dtype=torch.long), states,
                                        torch.tensor([position], dtype=torch.long)])[0]
        return logits.reshape(-1)
