"""delegate_blobs reads our blobs back out of a written program (container/pte_reader.py): exactly
what preprocess made, ours only, in program order, whether ExecuTorch kept them inline or in
segments, and the weights of a blob that keeps them in a data file."""

from __future__ import annotations

import pytest
import torch
from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower

import executorch_openvino
from executorch_openvino import BACKEND_ID
from executorch_openvino.container import delegate_blobs
from lowering import SmallNet, delegate_calls


class Split(torch.nn.Module):
    """Two linear layers around a ReLU: two partitions when the ReLU is left to ExecuTorch."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = torch.nn.Linear(4, 8), torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


@pytest.fixture(scope="module")
def lowered():
    """Three methods: two partitions of ours, one of XNNPACK's, one of ours; and each method's
    blobs as preprocess made them, in graph order (other backends' too)."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    torch.manual_seed(0)
    x = torch.randn(2, 4)
    image = torch.randn(1, 3, 8, 8)
    programs = {"split": torch.export.export(Split().eval(), (x,)),
                "theirs": torch.export.export(Split().eval(), (x,)),
                "whole": torch.export.export(SmallNet().eval(), (image,))}
    partitioners = {"split": [executorch_openvino.OpenvinoPartitioner(skip_ops=["aten.relu"])],
                    "theirs": [XnnpackPartitioner()], "whole": [executorch_openvino.OpenvinoPartitioner()]}
    edge = to_edge_transform_and_lower(programs, partitioner=partitioners)
    made = {}
    for method in programs:
        graph_module = edge.exported_program(method).graph_module
        made[method] = [(module.backend_id, module.processed_bytes)
                        for module in (getattr(graph_module, call.args[0].target)
                                       for call in delegate_calls(graph_module.graph))]
    assert [b for b, _ in made["split"]] == [BACKEND_ID] * 2 and [b for b, _ in made["whole"]] == [BACKEND_ID]
    assert [b for b, _ in made["theirs"]] == ["XnnpackBackend"]
    return edge, made


@pytest.mark.parametrize("segments", [True, False], ids=["segments", "inline"])
def test_the_blobs_are_preprocess_s_ours_only_in_program_order(lowered, segments, tmp_path):
    """Guards against reading the inline data only (a program keeps delegates in segments by default),
    against taking another backend's blob, and against any other order."""
    edge, made = lowered
    pte = edge.to_executorch(ExecutorchBackendConfig(extract_delegate_segments=segments)).buffer
    found = delegate_blobs(pte)
    assert [b.method for b in found] == ["split", "split", "whole"]  # the program lists methods by name
    assert [b.data for b in found] == [data for method in ("split", "whole") for _, data in made[method]]
    assert all(b.delegate.id == BACKEND_ID and b.plan.name == b.method for b in found)
    assert found[2].parsed.ir_xml.startswith(b"<?xml")
    (tmp_path / "model.pte").write_bytes(pte)
    assert [b.data for b in delegate_blobs(tmp_path / "model.pte", method="whole")] == [made["whole"][0][1]]
    assert delegate_blobs(str(tmp_path / "model.pte"), method="theirs") == []


def test_weights_in_a_data_file_are_read_from_it(tmp_path):
    """A blob whose weights went to the named data keeps only their key: weights() reads them from the
    .ptd (the same bytes a blob that keeps them holds), and without the file says to pass it."""
    torch.manual_seed(1)
    model, x = SmallNet().eval(), torch.randn(1, 3, 8, 8)
    programs = {}
    for external in (None, "model"):
        partitioner = executorch_openvino.OpenvinoPartitioner(external_weights=external)
        programs[external] = to_edge_transform_and_lower(torch.export.export(model, (x,)),
                                                         partitioner=[partitioner]).to_executorch()
    programs["model"].write_tensor_data_to_file(str(tmp_path))
    (kept,), (named,) = delegate_blobs(programs[None].buffer), delegate_blobs(programs["model"].buffer)
    assert kept.parsed.named_weights is None and named.parsed.named_weights is not None
    assert len(kept.weights()) > 1000 and named.weights(tmp_path / "model.ptd") == kept.weights()
    with pytest.raises(ValueError, match="pass it"):
        named.weights()
