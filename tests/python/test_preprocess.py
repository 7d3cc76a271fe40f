"""preprocess.ExecutorchOpenvinoBackend reads the partition ExecuTorch hands it and never changes it:
the backend skips ExecuTorch's deep copy of the partition (copy_exported_program_for_preprocess), so
what ExecuTorch keeps of the partition after preprocess (the lowered module's original program, run
again by to_executorch) is what preprocess read. Checked on programs that take each of preprocess's
paths: mutated buffers (KV caches as state), stored weights folded ahead of time (int4), an int
crossing into the partition, plain weights."""

from __future__ import annotations

import pytest
import torch
from executorch.exir import to_edge_transform_and_lower

import executorch_openvino
from executorch_openvino.preprocess import ExecutorchOpenvinoBackend
from llm_models import et_llama, export_et_llama
from lowering import load_forward


class _IntCrossing(torch.nn.Module):
    """An int read from an input, picked outside, computed with inside (a scalar placeholder)."""

    def forward(self, x, positions):
        start = positions[0].item()
        torch._check(start >= 0)
        torch._check(start <= 64)
        return x * 2 + (torch.arange(8) < start).float()


def _snapshot(program):
    stored = {**program.state_dict, **program.constants}
    return {
        "code": program.graph_module.code,
        "signature": str(program.graph_signature),
        "vals": [repr(node.meta.get("val")) for node in program.graph.nodes],
        "stored": {name: (value, value.detach().clone()) for name, value in stored.items()
                   if isinstance(value, torch.Tensor)},
    }


def _assert_same(before, after):
    assert after["code"] == before["code"]
    assert after["signature"] == before["signature"]
    assert after["vals"] == before["vals"]
    assert after["stored"].keys() == before["stored"].keys()
    for name, (tensor, values) in before["stored"].items():
        assert after["stored"][name][0] is tensor, name
        assert torch.equal(tensor, values), f"{name} changed in place"


def _llm():
    return export_et_llama(et_llama(layers=2)), None


def _int4():
    from executorch_openvino.quantization import compress_weights_int4

    example = (torch.tensor([[1, 2, 3]]), {"input_pos": torch.tensor([0])})
    return compress_weights_int4(et_llama(layers=1), example, group_size=32), None


def _int():
    inputs = [torch.randn(8), torch.tensor([5, 6, 7])]
    return torch.export.export(_IntCrossing(), (torch.randn(8), torch.arange(3))), inputs


def _weights():
    conv = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU()).eval()
    return torch.export.export(conv, (torch.randn(1, 3, 8, 8),)), [torch.randn(1, 3, 8, 8)]


PROGRAMS = {"llm": _llm, "int4": _int4, "int": _int, "weights": _weights}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_preprocess_leaves_the_partition_as_it_was(name, monkeypatch):
    with torch.no_grad():
        program, inputs = PROGRAMS[name]()
    assert ExecutorchOpenvinoBackend.copy_exported_program_for_preprocess(program, []) is program
    seen = []
    real = ExecutorchOpenvinoBackend.preprocess

    def checking(edge_program, compile_specs):
        before = _snapshot(edge_program)
        result = real(edge_program, compile_specs)
        seen.append((before, _snapshot(edge_program)))
        return result

    monkeypatch.setattr(ExecutorchOpenvinoBackend, "preprocess", staticmethod(checking))
    lowered = to_edge_transform_and_lower(program, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    buffer = lowered.to_executorch().buffer
    assert seen
    for before, after in seen:
        _assert_same(before, after)
    if inputs is not None:  # and the program still computes what eager does
        got = load_forward(buffer).execute(inputs)
        torch.testing.assert_close(got[0], program.module()(*inputs), rtol=1e-5, atol=1e-5)
