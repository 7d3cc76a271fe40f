"""What the recipes share: NNCF when it is installed, and the graph a quantizer annotates."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import torch
from torch.export import ExportedProgram

_NNCF_MISSING = "NNCF is needed for this recipe: pip install nncf (tested with nncf 3.4.0)"


def nncf_module():
    try:
        import nncf
    except ImportError as error:
        raise ImportError(_NNCF_MISSING) from error
    return nncf


def as_args(sample: Any) -> Tuple:
    """A calibration sample as the model's positional arguments (a lone tensor is one argument)."""
    return tuple(sample) if isinstance(sample, (tuple, list)) else (sample,)


def graph_module_of(model, example_inputs: Optional[Tuple], dynamic_shapes=None) -> Tuple[torch.fx.GraphModule, Tuple]:
    """The torch.fx graph the quantizers annotate, and the example inputs to re-export it with."""
    if isinstance(model, ExportedProgram):
        example = example_inputs if example_inputs is not None else model.example_inputs[0]
        return model.module(), tuple(example)
    if example_inputs is None:
        raise ValueError("example_inputs are needed to export an nn.Module")
    with torch.no_grad():
        exported = torch.export.export(model.eval(), tuple(example_inputs), dynamic_shapes=dynamic_shapes, strict=False)
    return exported.module(), tuple(example_inputs)


def export_again(graph_module: torch.fx.GraphModule, example: Tuple, dynamic_shapes) -> ExportedProgram:
    with torch.no_grad():
        return torch.export.export(graph_module, example, dynamic_shapes=dynamic_shapes, strict=False)
