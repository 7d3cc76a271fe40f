"""text-generation: decoder-only architectures through optimum-executorch and the `openvino` recipe.
Each is exported as a Hugging Face user exports it (main_export, the task's own loader and static
cache), then checked: wholly delegated with the caches in OpenVINO state; optimum's
ExecuTorchModelForCausalLM generates Hugging Face eager's greedy ids over 32 steps; every step's
logits equal plain transformers called on the whole sequence without a cache; ExecuTorch's
TextLLMRunner prints eager's text from the same .pte. The recipe's programs return the last position's
logits unless exported with logits="all"."""

from __future__ import annotations

import pytest
import torch

from hf_checkpoints import CAUSAL_LM, CONTEXT, load_eager

# Gemma 3's sliding-window layers: exported without optimum's custom caches, transformers' hybrid
# cache bakes in a cache of the window's length written at the position (the branch of its update
# for a cache not yet full), so the program holds only the window; test_encoders_and_multimodal.py
# runs Gemma 3 with the custom caches it needs past it.
WINDOWED = {"gemma3"}
FULL_LENGTH = sorted(set(CAUSAL_LM) - WINDOWED)
from recipe_checks import assert_delegated, assert_greedy_steps_equal_eager, causal_lm_step, export, exported_once

STEPS = 32
PROMPT = [1, 17, 42, 99, 5, 230, 7]


def _greedy_eager(model, prompt, steps):
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt]), max_new_tokens=steps, min_new_tokens=steps, do_sample=False,
                             eos_token_id=None, pad_token_id=0)
    return out[0, len(prompt):].tolist()


@pytest.fixture(scope="module")
def exported(saved, tmp_path_factory):
    return exported_once(tmp_path_factory,
                         lambda name, out: export(saved(name), "text-generation", out, max_seq_len=CONTEXT))


@pytest.mark.parametrize("name", sorted(CAUSAL_LM))
def test_wholly_delegated_with_the_caches_as_openvino_state(name, exported):
    program, _ = exported(name)
    assert_delegated(program, "forward")


@pytest.mark.parametrize("name", FULL_LENGTH)
def test_optimum_generates_eager_greedy_ids_and_each_step_equals_transformers_without_a_cache(name, exported, saved):
    from optimum.executorch import ExecuTorchModelForCausalLM

    _, out = exported(name)
    ours = ExecuTorchModelForCausalLM.from_pretrained(str(out))
    eager = load_eager(saved(name))
    ours.eos_token_ids = [-1]  # random weights may choose the end token; the steps must all run
    generated = ours.generate(prompt_tokens=list(PROMPT), max_seq_len=len(PROMPT) + STEPS)  # the new ids
    assert generated == _greedy_eager(eager, PROMPT, STEPS)
    assert len(set(generated)) > 1, "one token repeated: the steps do not differ"

    # The logits of every step against the plain model on the whole sequence so far, no cache (a
    # program exported with static shapes, Gemma 3's hybrid cache, takes the prompt a token a call).
    def eager_logits(sequence):
        with torch.no_grad():
            return eager(input_ids=torch.tensor([sequence]), use_cache=False).logits[0]

    def check(got, want, what):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4 * want.abs().mean().item(), msg=what)

    step = causal_lm_step(ours, token_a_call=ours.model.method_meta("forward").input_tensor_meta(0).sizes()[1] == 1)
    assert assert_greedy_steps_equal_eager(step, eager_logits, list(PROMPT), STEPS, check) == generated


def test_a_windowed_program_equals_eager_inside_its_window_and_refuses_past_it(exported, saved):
    from optimum.executorch import ExecuTorchModelForCausalLM

    _, out = exported("gemma3")
    ours = ExecuTorchModelForCausalLM.from_pretrained(str(out))
    window = load_eager(saved("gemma3")).config.sliding_window
    ours.eos_token_ids = [-1]
    inside = ours.generate(prompt_tokens=list(PROMPT), max_seq_len=window)
    assert inside == _greedy_eager(load_eager(saved("gemma3")), PROMPT, window - len(PROMPT))
    # Position `window` is past the 16 rows the program's sliding caches have: eager's index_copy
    # would raise; the delegate refuses the call, naming the position and the context.
    with pytest.raises(RuntimeError):
        ours.forward(torch.tensor([[5]]), torch.tensor([window]))
    from executorch_openvino.runtime import library

    assert f"holds the position {window}, outside [0, {window})" in library.load().last_error()


def test_text_llm_runner_prints_eager_text_from_the_same_program(exported, saved):
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner
    from tokenizers import Tokenizer

    _, out = exported("llama")
    tokenizer_file = saved("llama") / "tokenizer.json"  # saved with the checkpoint
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    prompt = "the quick fox runs"
    runner = TextLLMRunner(str(out / "model.pte"), str(tokenizer_file))
    pieces = []
    runner.generate(prompt, GenerationConfig(temperature=0.0, echo=False, max_new_tokens=24),
                    token_callback=pieces.append)
    # No BOS: GenerationConfig.num_bos is 0 by default. The runner stops at the end token, unprinted.
    expected = _greedy_eager(load_eager(saved("llama")), tokenizer.encode(prompt).ids, 24)
    if 2 in expected:
        expected = expected[: expected.index(2)]
    assert "".join(pieces) == tokenizer.decode(expected, skip_special_tokens=False)
    assert pieces, "nothing generated"


def test_forward_returns_the_last_row_unless_exported_with_logits_all(exported, saved, tmp_path):
    """The recipe's default: forward returns the last position's logits ([1, 1, vocab]), equal to eager's
    last row, with the output layer computed for that position alone; logits="all" gives eager's row per
    position; the export leaves the Hugging Face model as it was. Guards: the option not reaching the
    model (a row per position by default, the output layer's MatMul run on every row), "all" ignored,
    the model's forward left patched after the export (eager calls then return one row), and our engine
    taking [1, 1, vocab] for a row per token (drafts checked against one row)."""
    import executorch_openvino.optimum  # noqa: F401
    from optimum.executorch import ExecuTorchModelForCausalLM
    from optimum.exporters.executorch.tasks.causal_lm import load_causal_lm_model

    from executorch_openvino.container.pte_reader import delegate_blobs
    from executorch_openvino.generation import Conversation, GenerationValueError, Program
    from executorch_openvino.optimum import lower_with_openvino

    eager = load_eager(saved("llama"))
    with torch.no_grad():
        want = eager(input_ids=torch.tensor([PROMPT]), use_cache=False).logits[0]
    program, out = exported("llama")
    last = ExecuTorchModelForCausalLM.from_pretrained(str(out))
    assert list(last.model.method_meta("forward").output_tensor_meta(0).sizes()) == [1, 1, want.shape[-1]]
    got = last.forward(torch.tensor([PROMPT]), torch.arange(len(PROMPT)))
    assert got.shape == (1, 1, want.shape[-1])
    torch.testing.assert_close(got[0], want[-1:], rtol=1e-4, atol=1e-4 * want.abs().mean().item())
    # Our engine reads such a program as one that returns the last row: greedy runs, drafting is refused
    # up front (not verified against one row as if it were a row per draft).
    engine = Conversation(Program.load(out / "model.pte"))
    with pytest.raises(GenerationValueError, match="logits of every position"):
        engine.generate(list(PROMPT), 4, lookup=True)
    assert engine.generate(list(PROMPT), 8).tokens == _greedy_eager(eager, PROMPT, 8)
    ir = delegate_blobs(program.buffer)[0].parsed.ir_xml.decode()
    assert ir.count('type="Slice"') + ir.count('type="StridedSlice"') >= 1, "no slice before the output layer"

    every = export(saved("llama"), "text-generation", tmp_path / "all", recipe_kwargs={"logits": "all"},
                   max_seq_len=CONTEXT)
    assert every  # written
    rows = ExecuTorchModelForCausalLM.from_pretrained(str(tmp_path / "all"))
    got = rows.forward(torch.tensor([PROMPT]), torch.arange(len(PROMPT)))
    torch.testing.assert_close(got[0], want, rtol=1e-4, atol=1e-4 * want.abs().mean().item())

    wrapper = load_causal_lm_model(str(saved("llama")), max_length=CONTEXT)  # the task's loader, as main_export
    lower_with_openvino(wrapper)
    assert "forward" not in wrapper.model.__dict__
    with torch.no_grad():
        assert wrapper.model(input_ids=torch.tensor([PROMPT]), use_cache=False).logits.shape[1] == len(PROMPT)
