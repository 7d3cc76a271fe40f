"""The Hugging Face commands of docs/hugging-face.md (the README links there), run as a user runs them
in .venv-optimum: random checkpoints saved by examples/hf_checkpoint.py, exported by optimum-cli with the
openvino recipe, then `executorch-openvino generate` and `transcribe` (the first line, making and
activating the environment, is what runs these tests)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE, HEADING = REPO / "docs" / "hugging-face.md", "## Export and run"


def readme_commands():
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index(HEADING):]
    block = re.search(r"^```sh\n(.*?)^```", section, re.M | re.S).group(1)
    block = re.sub(r"\\\n\s*", "", block)  # a command continued on the next line is one command
    lines = [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    assert lines[0].startswith("make venv-optimum"), lines[0]
    return lines[1:]


def test_the_readme_commands_export_and_run_a_llama_and_a_whisper(tmp_path):
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
    outputs = []
    for command in readme_commands():
        result = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=900)
        assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        outputs.append((command, result.stdout))
    for name in ("my-llama-ov", "my-whisper-ov"):
        assert (tmp_path / name / "model.pte").is_file(), name
    generated = next(out for command, out in outputs if "executorch-openvino generate" in command)
    assert int(re.search(r"generated: (\d+) tokens", generated).group(1)) > 0, generated
    transcribed = next(out for command, out in outputs if "executorch-openvino transcribe" in command)
    # The text, then a segment a line with its times, from both 30-second windows of the 45 s file
    # (random bytes may decode to line breaks inside the text: segments are found by their times).
    assert transcribed.strip(), transcribed
    starts = [60 * int(m) + float(s) for m, s in re.findall(r"^\[(\d\d):(\d\d\.\d\d) -> ", transcribed, re.M)]
    assert len(starts) >= 2 and max(starts) > 15, transcribed  # past the first window's stride
