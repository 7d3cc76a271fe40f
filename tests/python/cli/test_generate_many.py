"""`executorch-openvino generate --prompts-file`: every line's prompt generated at once, their steps
batched; each text is what `generate --prompt` prints for that line alone (greedy, and sampled with
--seed: line i draws with seed + i). Options for one prompt are refused with the reason."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from llm_lowering import hf_text_program

PROMPTS = ["Once upon a time", "The river runs", "A small robot said"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = hf_text_program(tmp_path_factory.mktemp("generate_many"))
    (folder / "prompts.txt").write_text("\n".join(PROMPTS[:1] + [""] + PROMPTS[1:]) + "\n")
    return folder


def _run(folder, *options):
    command = [sys.executable, "-m", "executorch_openvino", "generate", str(folder / "model.pte"),
               "--tokenizer", str(folder / "tokenizer.json"), "--max-new-tokens", "20", *options]
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=600)


def _texts(stdout: str):
    """The texts under the --prompts-file headers (each printed with a newline after it), before the totals."""
    body = stdout[: stdout.rindex(f"{len(PROMPTS)} prompts generated at once")]
    return [part.split(" ---\n", 1)[1][:-1] for part in body.split("--- prompt ")[1:]]


@pytest.mark.parametrize("sampling", [(), ("--temperature", "0.8", "--top-k", "20", "--seed", "11")])
def test_each_line_gets_the_text_its_prompt_gets_alone(folder, sampling):
    """A blank line is no prompt; the third line's prompt is sampled with seed 13, as alone."""
    many = _run(folder, "--prompts-file", str(folder / "prompts.txt"), *sampling)
    assert many.returncode == 0, many.stderr
    alone = []
    for i, prompt in enumerate(PROMPTS):
        options = list(sampling)
        if options:
            options[-1] = str(11 + i)
        single = _run(folder, "--prompt", prompt, *options)
        assert single.returncode == 0, single.stderr
        alone.append(single.stdout[: single.stdout.rindex("\nprompt: ")])
    assert _texts(many.stdout) == alone


def test_options_for_one_prompt_are_refused(folder):
    done = _run(folder, "--prompts-file", str(folder / "prompts.txt"), "--lookup")
    assert done.returncode != 0 and "--lookup is for one prompt" in done.stderr
    done = _run(folder, "--prompt", "x", "--prompts-file", str(folder / "prompts.txt"))
    assert done.returncode != 0 and "not allowed with argument" in done.stderr
