"""convert/frontend.IndexedNodes: the node list handed to OpenVINO's FX decoder answers index() as
list.index does, from a dict."""

from __future__ import annotations

import pytest
import torch

from executorch_openvino.convert import frontend


def _graph(length: int) -> torch.fx.GraphModule:
    graph = torch.fx.Graph()
    value = graph.placeholder("x")
    value.meta["val"] = torch.empty(2, 3)
    for _ in range(length):
        value = graph.call_function(torch.ops.aten.neg.default, (value,))
        value.meta["val"] = torch.empty(2, 3)
    graph.output(value)
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def test_index_answers_as_list_index_does():
    nodes = list(_graph(50).graph.nodes)
    indexed = frontend.IndexedNodes(nodes)
    assert indexed == nodes
    assert [indexed.index(node) for node in nodes] == [nodes.index(node) for node in nodes]
    assert indexed.index(nodes[7], 3) == 7  # bounds: list.index's own search
    stranger = list(_graph(1).graph.nodes)[1]
    with pytest.raises(ValueError):
        indexed.index(stranger)
    with pytest.raises(ValueError):
        indexed.index([])  # unhashable
    doubled = frontend.IndexedNodes([nodes[0], nodes[1], nodes[0]])
    assert doubled.index(nodes[0]) == 0


def test_every_node_decoder_reads_the_indexed_list_and_the_model_computes_the_graph(monkeypatch):
    import openvino as ov
    from openvino.frontend.pytorch import fx_decoder

    seen = []
    real = fx_decoder.TorchFXPythonDecoder.__init__

    def recording(self, pt_module, fx_gm=None, nodes=None, *args, **kwargs):
        if isinstance(pt_module, torch.fx.Node):
            seen.append(type(nodes))
        real(self, pt_module, fx_gm, nodes, *args, **kwargs)

    monkeypatch.setattr(fx_decoder.TorchFXPythonDecoder, "__init__", recording)
    model = frontend.to_openvino(_graph(5))
    assert seen == [frontend.IndexedNodes] * 5
    x = torch.randn(2, 3)
    got = ov.Core().compile_model(model, "CPU")([x.numpy()])[0]
    torch.testing.assert_close(torch.from_numpy(got), -x)  # five negations
