"""What the partition steps share: the program being tagged, the node support that decides, and what
the steps learn (the partitions' tags, the buffers they consume)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional

from executorch.exir.backend.partitioner import DelegationSpec
from torch.export import ExportedProgram

from .op_support import NodeSupport


@dataclass
class Partitioning:
    program: ExportedProgram  # tagged in place
    support: NodeSupport
    delegation_spec: DelegationSpec  # what every partition of ours is lowered with
    stateful: bool = True  # consume the buffers a partition mutates (OpenVINO state)
    external_weights: Optional[str] = None  # the .ptd tag for the delegated weights
    buffer_fingerprints: dict = field(default_factory=dict)  # equal_values.fingerprints, before decomposition
    tags: Dict[str, DelegationSpec] = field(default_factory=dict)  # partition tag -> spec
    consumed_buffers: Dict[str, str] = field(default_factory=dict)  # buffer name -> partition tag
