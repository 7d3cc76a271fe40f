"""The recipe's own contract, on a saved Llama: its options reach the program (weights, precision,
external weights), the names optimum-cli can choose set what they say, wrong options and optimum's
torchao quantization are refused with a reason, and both command lines (optimum-cli and
executorch-openvino export-hf) write a program that equals eager."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import executorch_openvino
from hf_checkpoints import CONTEXT, load_eager
from recipe_checks import assert_delegated, export

IDS = torch.tensor([[1, 17, 42, 99, 5]])


def _specs(program, method="forward"):
    graph_module = program.exported_program(method).graph_module
    calls = [n for n in graph_module.graph.nodes if n.op == "call_function" and "executorch_call_delegate" in str(n.target)]
    lowered = getattr(graph_module, calls[0].args[0].target)
    return {spec.key: bytes(spec.value).decode() for spec in lowered.compile_specs}


def _logits(pte, data=None):
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte, data_path=data).load_method("forward")
    return method.execute([IDS, torch.arange(IDS.shape[1])])[0]


def _eager_logits(folder):
    """Eager's last row: the recipe's programs return the last position's logits (logits="all" is
    test_text_generation.py's)."""
    with torch.no_grad():
        return load_eager(folder)(input_ids=IDS, use_cache=False).logits[:, -1:]


@pytest.mark.parametrize("recipe,kwargs,spec", [
    ("openvino", {"weights": "int4", "group_size": 32}, {"weights": "int4:32"}),
    ("openvino_int8", {}, {"weights": "int8:0"}),
    ("openvino_int4", {"group_size": 16}, {"weights": "int4:16"}),
    ("openvino_fast", {}, {"precision": "fast"}),
    ("openvino", {"precision": "exact", "compile_options": {"NUM_STREAMS": "1"}}, {"precision": "exact", "NUM_STREAMS": "1"}),
])
def test_options_and_recipe_names_reach_the_program(saved, tmp_path, recipe, kwargs, spec):
    programs = export(saved("llama"), "text-generation", tmp_path, recipe=recipe, recipe_kwargs=kwargs,
                      max_seq_len=CONTEXT)
    assert_delegated(programs["model"], "forward")
    specs = _specs(programs["model"])
    assert {key: specs.get(key) for key in spec} == spec
    ours, eager = _logits(tmp_path / "model.pte"), _eager_logits(saved("llama"))
    if "weights" in spec:
        _assert_compressed(ours, eager)
    elif spec.get("precision") == "exact":
        torch.testing.assert_close(ours, eager, rtol=1e-4, atol=1e-4 * eager.abs().mean().item())


def _assert_compressed(ours, eager):
    """Not eager's values, yet the same function: the compression's accuracy against native OpenVINO
    is tests/python/ir_passes/test_weight_compression.py's; here, that the option took effect."""
    assert (ours - eager).abs().max() > 1e-3
    cosine = torch.nn.functional.cosine_similarity(ours.flatten(), eager.flatten(), dim=0)
    assert cosine > 0.9, cosine


def test_external_weights_go_to_model_ptd_and_the_program_loads_with_it(saved, tmp_path):
    export(saved("llama"), "text-generation", tmp_path, recipe_kwargs={"external_weights": True}, max_seq_len=CONTEXT)
    pte, ptd = tmp_path / "model.pte", tmp_path / "model.ptd"
    parameters = sum(p.numel() * p.element_size() for p in load_eager(saved("llama")).parameters())
    assert ptd.stat().st_size >= 0.9 * parameters, (ptd.stat().st_size, parameters)  # the weights moved
    eager = _eager_logits(saved("llama"))
    torch.testing.assert_close(_logits(pte, ptd), eager, rtol=1e-4, atol=1e-4 * eager.abs().mean().item())


def test_an_unknown_option_is_refused_naming_the_ones_it_takes(saved, tmp_path):
    with pytest.raises(TypeError, match="no option colour.*device"):
        export(saved("llama"), "text-generation", tmp_path, recipe_kwargs={"colour": "blue"}, max_seq_len=CONTEXT)


def test_a_named_recipe_refuses_to_be_told_otherwise(saved, tmp_path):
    with pytest.raises(TypeError, match="recipe 'openvino_int8' sets weights itself"):
        export(saved("llama"), "text-generation", tmp_path, recipe="openvino_int8", recipe_kwargs={"weights": "int4"},
               max_seq_len=CONTEXT)


def test_torchao_quantization_from_optimum_is_refused_with_the_way_to_compress(saved, tmp_path):
    with pytest.raises(ValueError, match="torchao.dequantize_affine.*openvino_int8 or openvino_int4"):
        export(saved("llama"), "text-generation", tmp_path, max_seq_len=CONTEXT, qlinear="8w")


def _command(arguments, tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(arguments, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return result.stdout


def test_optimum_cli_exports_with_the_openvino_recipe(saved, tmp_path):
    optimum_cli = os.path.join(os.path.dirname(sys.executable), "optimum-cli")
    _command([optimum_cli, "export", "executorch", "--model", str(saved("llama")), "--task", "text-generation",
              "--recipe", "openvino", "--max_seq_len", str(CONTEXT), "--output_dir", str(tmp_path / "out")], tmp_path)
    eager = _eager_logits(saved("llama"))
    torch.testing.assert_close(_logits(tmp_path / "out" / "model.pte"), eager, rtol=1e-4,
                               atol=1e-4 * eager.abs().mean().item())


def test_export_hf_exports_with_every_option_a_flag_and_says_what_was_delegated(saved, tmp_path):
    out = _command([sys.executable, "-m", "executorch_openvino", "export-hf", str(saved("llama")), "--task",
                    "text-generation", "--out", str(tmp_path / "out"), "--max-seq-len", str(CONTEXT), "--weights",
                    "int4", "--group-size", "32"], tmp_path)
    assert "forward: 1 executorch_openvino partition(s); outside: nothing" in out
    _assert_compressed(_logits(tmp_path / "out" / "model.pte"), _eager_logits(saved("llama")))


def test_export_hf_refuses_a_wrong_option_before_loading_anything(saved, tmp_path):
    result = subprocess.run([sys.executable, "-m", "executorch_openvino", "export-hf", str(saved("llama")), "--task",
                             "text-generation", "--out", str(tmp_path), "--weights", "int8", "--group-size", "32"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "per output channel" in result.stderr, result.stderr
    assert not (tmp_path / "model.pte").exists()
