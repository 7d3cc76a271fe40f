"""ExecuTorch's own LLM runner (executorch.extension.llm.runner.TextLLMRunner, its C++ runner
behind Python bindings) generating with a program lowered to our delegate: it finds our backend,
reads the metadata text_runner_metadata wrote, and its greedy text equals eager PyTorch's."""

from __future__ import annotations

import pytest

import executorch_openvino
from executorch_openvino.llm.runner_metadata import text_runner_metadata
from llm_models import CONTEXT, et_llama, export_et_llama
from llm_tokenizer import BOS, EOS, train
from text_runner import NEW_TOKENS, PROMPT, eager_text, run_text_runner

@pytest.fixture(scope="module")
def runner_files(tmp_path_factory, library_path):
    from executorch.exir import to_edge_transform_and_lower

    folder = tmp_path_factory.mktemp("runner")
    tokenizer = train(folder / "tokenizer.json")
    model = et_llama(True, vocab_size=tokenizer.get_vocab_size(), seed=4)
    metadata = text_runner_metadata(max_seq_len=CONTEXT - 1, max_context_len=CONTEXT, n_layers=2,
                                    vocab_size=tokenizer.get_vocab_size(), bos_id=BOS, eos_ids=[EOS])
    partitioner = executorch_openvino.OpenvinoPartitioner()
    program = to_edge_transform_and_lower(export_et_llama(model), partitioner=[partitioner],
                                          constant_methods=metadata)
    (folder / "model.pte").write_bytes(program.to_executorch().buffer)
    return model, tokenizer, folder


def test_the_runner_generates_eagers_greedy_text(runner_files):
    model, tokenizer, folder = runner_files
    text, stats = run_text_runner(folder, PROMPT, max_new_tokens=NEW_TOKENS)
    prompt_ids = tokenizer.encode(PROMPT).ids  # no BOS: GenerationConfig.num_bos is 0 by default
    assert stats.num_prompt_tokens == len(prompt_ids)
    assert text == eager_text(model, tokenizer, prompt_ids, NEW_TOKENS)
    assert text  # random weights still generate something before any EOS


def test_a_second_generate_starts_a_new_conversation(runner_files):
    """The runner resets to position 0 between prompts; OpenVINO's state then holds the new
    conversation's cache (stale entries beyond it are masked), so the text is as fresh."""
    model, tokenizer, folder = runner_files
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner

    runner = TextLLMRunner(str(folder / "model.pte"), str(folder / "tokenizer.json"))
    texts = []
    for prompt in ("open vino runs llama models on many cpus", PROMPT):
        pieces = []
        runner.generate(prompt, GenerationConfig(temperature=0.0, echo=False, max_new_tokens=NEW_TOKENS),
                        token_callback=pieces.append)
        runner.reset()
        texts.append("".join(pieces))
    prompt_ids = tokenizer.encode(PROMPT).ids
    assert texts[1] == eager_text(model, tokenizer, prompt_ids, NEW_TOKENS)


def test_the_metadata_rejects_what_the_runner_could_not_use():
    with pytest.raises(ValueError, match="eos_ids is empty"):
        text_runner_metadata(max_seq_len=8, n_layers=1, vocab_size=10, bos_id=1, eos_ids=[])
    with pytest.raises(ValueError, match="max_context_len"):
        text_runner_metadata(max_seq_len=16, max_context_len=8, n_layers=1, vocab_size=10, bos_id=1, eos_ids=[2])


def test_the_generate_command_prints_eagers_text_and_its_speed(runner_files):
    """`generate` on the program the runner reads (the engine, for a tokenizer.json): eager's greedy
    text after the program's BOS (special tokens print nothing, as in transformers' decode), the prompt, time to first token
    and decode lines; --quiet prints the numbers only; a file that is no program is refused naming it."""
    import os
    import subprocess
    import sys

    model, tokenizer, folder = runner_files
    command = [sys.executable, "-m", "executorch_openvino", "generate", str(folder / "model.pte"),
               "--tokenizer", str(folder / "tokenizer.json"), "--prompt", PROMPT,
               "--max-new-tokens", str(NEW_TOKENS)]
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=600)
    assert done.returncode == 0, done.stderr
    text, *numbers = done.stdout.split("\n")
    # The program's BOS first, as its metadata says (ExecuTorch's runner adds none unless asked: num_bos).
    prompt_ids = [BOS] + tokenizer.encode(PROMPT).ids
    assert text == eager_text(model, tokenizer, prompt_ids, NEW_TOKENS, special_tokens=False)
    assert numbers[0].startswith(f"prompt: {len(prompt_ids)} tokens in ")
    assert any(line.startswith("time to first token: ") for line in numbers)
    assert any(line.startswith("generated: ") and "tokens/s" in line for line in numbers)

    quiet = subprocess.run(command + ["--quiet"], capture_output=True, text=True, env=environment, timeout=600)
    assert quiet.returncode == 0 and quiet.stdout.startswith("prompt: ")

    wrong = subprocess.run(command[:4] + [str(folder / "tokenizer.json")] + command[5:], capture_output=True,
                           text=True, env=environment, timeout=600)
    assert wrong.returncode == 1 and f"{folder / 'tokenizer.json'}: cannot load the program" in wrong.stderr, wrong.stderr
