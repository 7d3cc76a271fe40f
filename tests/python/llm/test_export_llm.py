"""ExecuTorch's own LLM export (export_llm: its Llama from a params file and a checkpoint, its
quantization options) lowered to our delegate through executorch_openvino.llm.export_llm: one
delegate call holding the caches, the runner's metadata written, ExecuTorch's runner generating
eager's greedy text (fp32), and NNCF's weights (quantization.pt2e_quantize=openvino_4wo / openvino_8wo)
kept compressed in the IR and computing what the same compression computes in eager PyTorch."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from llm_models import et_llama
from llm_tokenizer import BOS, EOS, train
from lowering import blob_ir
from text_runner import NEW_TOKENS, PROMPT, eager_text, run_text_runner

REPO = Path(__file__).resolve().parents[3]

CONTEXT = 64
# openvino_4wo quantizes in groups of 128 columns, so its model is twice as wide.
DIMS = {"fp32": (64, 128), "openvino_4wo": (128, 256), "openvino_8wo": (64, 128)}
STEPS = 32


def _metadata_option() -> str:
    """base.metadata as the export command of docs/llm.md writes it (shell quoting undone), with the
    test tokenizer's BOS and EOS ids in place of Llama 3's."""
    line = next(l for l in (REPO / "docs" / "llm.md").read_text().splitlines() if "base.metadata=" in l)
    (option,) = [word for word in shlex.split(line.rstrip().rstrip("\\")) if word.startswith("base.metadata=")]
    assert "128000" in option and "[128009, 128001]" in option, option
    return option.replace("128000", str(BOS)).replace("[128009, 128001]", f"[{EOS}]")


def _export(folder, quantization: str, *options: str):
    tokenizer = train(folder / "tokenizer.json")
    dim, hidden = DIMS[quantization]
    params = dict(dim=dim, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=tokenizer.get_vocab_size(),
                  hidden_dim=hidden, norm_eps=1e-5, rope_theta=500000.0)
    (folder / "params.json").write_text(json.dumps(params))
    model = et_llama(True, seed=5, dim=dim, hidden_dim=hidden, vocab_size=params["vocab_size"],
                     max_seq_len=CONTEXT, max_context_len=CONTEXT, norm_eps=params["norm_eps"],
                     rope_theta=params["rope_theta"])
    torch.save(model.state_dict(), folder / "checkpoint.pth")
    command = [sys.executable, "-m", "executorch_openvino.llm.export_llm",
               f"base.params={folder / 'params.json'}", f"base.checkpoint={folder / 'checkpoint.pth'}",
               _metadata_option(),
               "model.use_kv_cache=true", "model.enable_dynamic_shape=true", "backend.openvino.enabled=true",
               f"export.max_seq_length={CONTEXT}", f"export.max_context_length={CONTEXT}",
               f"export.output_name={folder / 'model.pte'}", "hydra.run.dir=."]
    if quantization != "fp32":
        command.append(f"quantization.pt2e_quantize={quantization}")
    command += options
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=folder, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return model, tokenizer, folder


@pytest.fixture(scope="module")
def export_of(tmp_path_factory, library_path):
    """Each option's export, made once for the module."""
    made = {}

    def get(quantization: str):
        if quantization not in made:
            made[quantization] = _export(tmp_path_factory.mktemp(f"export_llm_{quantization}"), quantization)
        return made[quantization]

    return get


@pytest.fixture(params=list(DIMS))
def exported(request, export_of):
    return request.param, export_of(request.param)


def _ir_of(pte: bytes):
    """(the IR of the forward method's one delegate call, which must be ours, the method's inputs)."""
    from executorch_openvino.container import delegate_blobs

    (ours,) = delegate_blobs(pte, method="forward")
    assert len(ours.plan.delegates) == 1  # no other backend's call beside it
    return blob_ir(ours.data), list(ours.plan.inputs)


def test_export_llm_lowers_to_one_call_of_ours_with_the_caches_in_state(exported):
    from executorch.runtime import Runtime

    quantization, (_, _, folder) = exported
    pte = (folder / "model.pte").read_bytes()
    assert {"get_max_seq_len", "get_eos_ids", "use_kv_cache"} <= set(Runtime.get().load_program(pte).method_names)
    ir, method_inputs = _ir_of(pte)  # ExecuTorch's kernels keep only the scalar work on the position
    assert len(method_inputs) == 2  # tokens and the start position: no cache passes through ExecuTorch
    # Each layer's two caches, assigned inside OpenVINO, and the count of positions they hold.
    assert len(ir.get_sinks()) == 5
    weights = Counter(op.get_output_element_type(0).get_type_name() for op in ir.get_ops()
                      if op.get_type_name() == "Constant" and np.prod(op.get_output_shape(0)) >= 1024)
    # The blocks' 2 x 7 linear layers (the smallest, wk and wv, are 32 x 64), the embedding and the output.
    if quantization == "openvino_4wo":
        assert weights["u4"] + weights["i4"] == 14 and weights["u8"] + weights["i8"] == 2, weights
    elif quantization == "openvino_8wo":
        assert weights["u8"] + weights["i8"] == 16 and "f32" not in weights, weights
    else:
        assert set(weights) == {"f32"}, weights


def test_the_runner_generates_eagers_text_from_export_llms_program(exported):
    quantization, (model, tokenizer, folder) = exported
    text, stats = run_text_runner(folder, PROMPT, max_new_tokens=NEW_TOKENS)
    assert stats.num_generated_tokens > 0
    if quantization == "fp32":  # compressed weights choose other tokens: see the test below
        assert text == eager_text(model, tokenizer, tokenizer.encode(PROMPT).ids, NEW_TOKENS)


def _compressed_eager(model, quantization: str):
    """The eager model compressed as export_llm compresses it for this option (ExecuTorch's
    OpenVINOQuantizer with get_ov_quantizer's settings, through NNCF's compress_pt2e)."""
    from nncf.experimental.torch.fx import compress_pt2e

    from executorch.backends.openvino.quantizer import OpenVINOQuantizer, QuantizationMode
    from llm_models import export_et_llama

    settings = {"openvino_4wo": dict(mode=QuantizationMode.INT4WO_SYM, group_size=128, ratio=1),
                "openvino_8wo": dict(mode=QuantizationMode.INT8WO_ASYM, group_size=-1, ratio=None)}[quantization]
    compressed = compress_pt2e(export_et_llama(model, context=CONTEXT).module(), quantizer=OpenVINOQuantizer(**settings))

    def step(tokens, position):
        with torch.no_grad():
            return compressed(tokens, {"input_pos": torch.tensor([position])})

    return step


@pytest.mark.parametrize("quantization", ["openvino_4wo", "openvino_8wo"])
def test_export_llms_compressed_weights_compute_as_the_compressed_model(quantization, export_of):
    """Teacher-forced on the compressed eager model's own greedy tokens: every step's logits within
    the documented bounds (docs/quantization.md) of the eager compressed model's, and (the
    quantization's own error being larger) farther from the float model's."""
    import quantized_cases
    from executorch.runtime import Runtime

    from executorch_openvino.runtime import cpu_capabilities
    from llm_models import Conversation, eager_step, last_token_logits, method_step, teacher_forced

    model, tokenizer, folder = export_of(quantization)
    prompt = tokenizer.encode(PROMPT).ids
    reference = _compressed_eager(model, quantization)
    expected, expected_logits = Conversation(reference).generate(prompt, STEPS)
    method = Runtime.get().load_program(str(folder / "model.pte")).load_method("forward")
    got = teacher_forced(method_step(method), prompt, expected)
    floats = teacher_forced(eager_step(model), prompt, expected)

    def relative(a, b):
        return float((a - b).abs().max() / b.abs().max())

    errors = [relative(a, b) for a, b in zip(got, expected_logits)]
    dynamic = cpu_capabilities.describe().dynamic_quantization  # activations quantized on the fly too
    worst = quantized_cases.WEIGHTS_DYNAMIC_WORST if dynamic else quantized_cases.WEIGHTS_ONLY_WORST
    assert max(errors) <= worst, (max(errors), worst)
    choices = [int(last_token_logits(logits).argmax()) for logits in got[:-1]]
    agreement = sum(a == b for a, b in zip(choices, expected)) / len(expected)
    assert agreement >= (0.9 if dynamic else 1.0), (agreement, choices, expected)
    # The compressed reference is not the float model (the option compressed something).
    assert max(relative(a, b) for a, b in zip(expected_logits, floats)) > 1e-4


def test_export_llms_foundation_weights_file_puts_our_weights_beside_the_program(tmp_path, library_path):
    """export.foundation_weights_file=NAME (ExecuTorch's option for a separate weights file) writes the
    delegate's weights to NAME.ptd; the runner, given it as its data path, generates eager's text."""
    from executorch_openvino.container import delegate_blobs

    model, tokenizer, folder = _export(tmp_path, "fp32", "export.foundation_weights_file=weights")
    pte, ptd = folder / "model.pte", folder / "weights.ptd"
    (ours,) = delegate_blobs(pte, method="forward")
    assert len(ours.plan.delegates) == 1
    named = ours.parsed.named_weights
    assert named is not None and ptd.stat().st_size > named.size > pte.stat().st_size
    text, _ = run_text_runner(folder, PROMPT, data=ptd, max_new_tokens=NEW_TOKENS)
    assert text == eager_text(model, tokenizer, tokenizer.encode(PROMPT).ids, NEW_TOKENS)
    with pytest.raises(RuntimeError):  # the program alone cannot run
        run_text_runner(folder, PROMPT, max_new_tokens=2)


def _generate(folder, *options):
    command = [sys.executable, "-m", "executorch_openvino", "generate", str(folder / "model.pte"),
               "--tokenizer", str(folder / "tokenizer.json"), "--prompt", PROMPT,
               "--max-new-tokens", str(NEW_TOKENS), *options]
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=600)


def test_docs_export_gives_bos_eos_and_lookup_needs_full_logits(export_of, tmp_path):
    """docs/llm.md's export: its base.metadata puts the tokenizer's BOS and EOS ids in the program;
    --lookup refuses that program (the last position's logits only), naming the export option, and
    takes the same export with debug.generate_full_logits=true."""
    from executorch.runtime import Runtime

    model, tokenizer, folder = export_of("fp32")
    program = Runtime.get().load_program((folder / "model.pte").read_bytes())
    assert program.load_method("get_bos_id").execute([]) == [BOS]
    assert program.load_method("get_eos_ids").execute([]) == [EOS]
    refused = _generate(folder, "--lookup")
    assert refused.returncode != 0 and "debug.generate_full_logits=true" in refused.stderr, refused.stderr[-2000:]

    model, tokenizer, full = _export(tmp_path, "fp32", "debug.generate_full_logits=true")
    done = _generate(full, "--lookup")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "speculative: " in done.stdout, done.stdout
    # Speculative decoding gives greedy decoding's text: eager's after the BOS the metadata names (the
    # engine prints no special tokens).
    text = done.stdout[: done.stdout.index("\nprompt: ")]
    assert text == eager_text(model, tokenizer, [BOS] + tokenizer.encode(PROMPT).ids, NEW_TOKENS, special_tokens=False)
