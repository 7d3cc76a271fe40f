"""Weights in ExecuTorch's named data: a .ptd file beside the .pte (container/named_weights.py, blob section 7).
Lowered, written and loaded through the real ExecuTorch and OpenVINO runtimes; the weights must come
from the data file, and a missing, foreign or damaged data file is a clear error, never a result."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

import executorch_openvino
from executorch_openvino.container import blob, delegate_blobs, named_weights
from lowering import SmallNet, load_forward


class Wide(torch.nn.Module):
    """Weights large enough (256 KB) that a .pte holding them could not be mistaken for one without."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(256, 256)
        self.b = torch.nn.Linear(256, 16)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def _program(model, x, **options):
    partitioner = executorch_openvino.OpenvinoPartitioner(**options)
    return to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=[partitioner]).to_executorch()


def _blob_of(pte: bytes) -> blob.ParsedBlob:
    (ours,) = delegate_blobs(pte)
    return ours.parsed


def _write(program, folder: Path) -> tuple:
    folder.mkdir(parents=True, exist_ok=True)
    pte = folder / "model.pte"
    pte.write_bytes(program.buffer)
    program.write_tensor_data_to_file(str(folder))
    return pte, folder / "model.ptd"


def _run(pte: Path, ptd, x):
    method = Runtime.get().load_program(pte, data_path=ptd).load_method("forward")
    return method.execute([x])[0]


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    torch.manual_seed(3)
    model, x = Wide().eval(), torch.randn(2, 256)
    folder = tmp_path_factory.mktemp("named")
    pte, ptd = _write(_program(model, x, external_weights="model"), folder / "external")
    inline = _program(model, x).buffer
    return model, x, pte, ptd, inline


def test_the_weights_go_to_the_data_file_and_the_program_runs_from_it(wide):
    model, x, pte, ptd, inline = wide
    parsed = _blob_of(pte.read_bytes())
    assert parsed.ir_weights == b"" and parsed.named_weights is not None
    assert parsed.minor_version == 3
    weights = _blob_of(inline).ir_weights  # the same IR's weights, kept in the blob
    assert parsed.named_weights == blob.NamedWeights.of(parsed.named_weights.key, weights)
    assert parsed.named_weights.key.startswith(named_weights.KEY_PREFIX)
    assert len(weights) > 256 * 256 * 4
    assert pte.stat().st_size < len(weights) // 4 < ptd.stat().st_size
    assert ptd.read_bytes().find(weights[:4096]) >= 0
    torch.testing.assert_close(_run(pte, ptd, x), model(x), rtol=1e-5, atol=1e-5)


def test_without_its_data_file_the_program_is_refused_saying_how_to_load_it(wide):
    _, x, pte, _, _ = wide
    with pytest.raises(RuntimeError):
        load_forward(pte)
    error = executorch_openvino.runtime.library.loaded().last_error()
    assert "in named data under 'executorch_openvino.weights." in error
    assert "loaded without named data" in error and "data_path" in error


def test_a_data_file_of_another_export_is_refused(wide, tmp_path):
    _, x, pte, _, _ = wide
    torch.manual_seed(4)
    other = Wide().eval()
    _, foreign = _write(_program(other, x, external_weights="model"), tmp_path)
    with pytest.raises(RuntimeError):
        _run(pte, foreign, x)
    assert "which its named data does not hold" in executorch_openvino.runtime.library.loaded().last_error()


def test_a_damaged_data_file_is_refused_and_the_intact_one_still_runs(wide, tmp_path):
    model, x, pte, ptd, inline = wide
    data = bytearray(ptd.read_bytes())
    weights = _blob_of(inline).ir_weights
    at = data.find(weights[:4096])
    data[at + len(weights) // 2] ^= 0x04
    damaged = tmp_path / "model.ptd"
    damaged.write_bytes(bytes(data))
    with pytest.raises(RuntimeError):
        _run(pte, damaged, x)
    assert "fails its checksum: the data file is corrupt" in executorch_openvino.runtime.library.loaded().last_error()
    torch.testing.assert_close(_run(pte, ptd, x), model(x), rtol=1e-5, atol=1e-5)


def test_constants_tagged_by_executorchs_own_pass_go_to_their_file(tmp_path):
    from executorch.exir.passes.external_constants_pass import delegate_external_constants_pass_unlifted

    torch.manual_seed(5)
    model, x = SmallNet().eval(), torch.randn(1, 3, 12, 12)
    module = torch.export.export(model, (x,)).module()
    delegate_external_constants_pass_unlifted(module, gen_tag_fn=lambda node: "weights")
    exported = torch.export.export(module, (x,))
    program = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()])
    program = program.to_executorch()
    pte, _ = _write(program, tmp_path)
    ptd = tmp_path / "weights.ptd"
    assert ptd.is_file() and _blob_of(pte.read_bytes()).named_weights is not None
    torch.testing.assert_close(_run(pte, ptd, x), model(x), rtol=1e-4, atol=1e-5)


def test_one_partition_cannot_send_its_weights_to_two_files():
    torch.manual_seed(6)
    model, x = Wide().eval(), torch.randn(2, 256)
    module = torch.export.export(model, (x,)).module()
    from executorch.exir.passes.external_constants_pass import delegate_external_constants_pass_unlifted

    delegate_external_constants_pass_unlifted(module, gen_tag_fn=lambda node: "a" if "a." in node.target else "b")
    with pytest.raises(Exception, match="one OpenVINO partition's weights go to one data file"):
        to_edge_transform_and_lower(torch.export.export(module, (x,)),
                                    partitioner=[executorch_openvino.OpenvinoPartitioner()])


@pytest.mark.parametrize("tag", ["", "a/b", 3])
def test_external_weights_takes_a_file_name_tag(tag):
    with pytest.raises(ValueError, match="external_weights takes a file name tag"):
        executorch_openvino.OpenvinoPartitioner(external_weights=tag)


def test_two_methods_of_one_model_store_its_weights_once(tmp_path):
    torch.manual_seed(7)
    model = Wide().eval()
    methods = {"small": torch.export.export(model, (torch.randn(2, 256),)),
               "large": torch.export.export(model, (torch.randn(5, 256),))}
    partitioner = executorch_openvino.OpenvinoPartitioner(external_weights="model")
    program = to_edge_transform_and_lower(methods, partitioner=[partitioner]).to_executorch()
    pte, ptd = _write(program, tmp_path)
    weights = sum(p.numel() * 4 for p in model.parameters())
    assert weights < ptd.stat().st_size < 1.5 * weights  # one key for the two methods' identical weights
    loaded = Runtime.get().load_program(pte, data_path=ptd)
    for name, rows in (("small", 2), ("large", 5)):
        x = torch.randn(rows, 256)
        torch.testing.assert_close(loaded.load_method(name).execute([x])[0], model(x), rtol=1e-5, atol=1e-5)
