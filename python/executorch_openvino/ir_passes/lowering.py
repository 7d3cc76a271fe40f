"""What the IR passes share: the partition's OpenVINO model while they rewrite it, what they read of
the partition, and what they learn for the container."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple

from torch.export import ExportedProgram

from ..container.blob import InputArguments, InputBound
from ..container.compile_specs import ExportOptions
from ..fx_passes import ConsumedBuffer


@dataclass
class Lowering:
    model: Any  # the ov.Model, rewritten in place
    program: ExportedProgram  # the partition (its placeholders and their meta)
    consumed_buffers: Tuple[ConsumedBuffer, ...] = ()  # buffers that become OpenVINO variables
    options: ExportOptions = ExportOptions()
    arguments: Optional[InputArguments] = None  # which call inputs the IR reads (None: all of them)
    bounds: Tuple[InputBound, ...] = ()  # the values each input may hold, checked at run time
    grown_caches: int = 0  # KV caches rewritten to grow with the conversation (grown_cache.py)
