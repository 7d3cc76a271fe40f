"""Every front of the one generation engine on a program exported the way docs/llm.md says (ExecuTorch's
export_llm through `python -m executorch_openvino.llm.export_llm`, BOS/EOS in base.metadata, full
logits for --lookup), with a byte-level tokenizer holding every byte (so text may split a character
across tokens): Python (TextGenerator), the command line (`generate --show-ids`) and C++ (the
example examples/cpp/generate.cpp, built in the tree) give the same ids greedy, seed for seed sampled
(temperature above 1), and sampled with prompt lookup; output held to a JSON schema parses and
validates on every seed, sampled and with lookup, on this random-weight model that otherwise never
writes JSON; and each refused request says why on stderr.

Guards the issue's reports: a prompt laid out without the program's BOS (the documented export
writes it; asserted), a seed that means other draws on another front, an option one front drops, and
a schema constraint not applied to drafts (tried: drafts verified without the mask fail the lookup
run, the constraint refusing a draft the model preferred)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from llm_models import et_llama
from llm_tokenizer import BOS, EOS, train

CONTEXT = 128
PROMPT = "the quick brown fox"
NEW_TOKENS = 60
SCHEMA = {"x-guidance": {"whitespace_flexible": False}, "type": "object",
          "properties": {"name": {"type": "string", "maxLength": 10},
                         "age": {"type": "integer", "minimum": 0, "maximum": 120},
                         "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3}},
          "required": ["name", "age"], "additionalProperties": False}


@pytest.fixture(scope="module")
def exported(tmp_path_factory, library_path):
    """(folder, tokenizer, the build folder): docs/llm.md's export command on a random-weight checkpoint."""
    folder = tmp_path_factory.mktemp("fronts")
    tokenizer = train(folder / "tokenizer.json", 400, every_byte=True)
    params = dict(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=tokenizer.get_vocab_size(),
                  hidden_dim=128, norm_eps=1e-5, rope_theta=500000.0)
    (folder / "params.json").write_text(json.dumps(params))
    model = et_llama(True, seed=5, dim=64, hidden_dim=128, vocab_size=params["vocab_size"], max_seq_len=CONTEXT,
                     max_context_len=CONTEXT, norm_eps=params["norm_eps"], rope_theta=params["rope_theta"])
    torch.save(model.state_dict(), folder / "model.pth")
    command = [sys.executable, "-m", "executorch_openvino.llm.export_llm",
               f"base.params={folder / 'params.json'}", f"base.checkpoint={folder / 'model.pth'}",
               f"base.metadata='{json.dumps({'get_bos_id': BOS, 'get_eos_ids': [EOS]})}'",
               "model.use_kv_cache=true", "model.enable_dynamic_shape=true", "backend.openvino.enabled=true",
               "debug.generate_full_logits=true", f"export.max_seq_length={CONTEXT}",
               f"export.max_context_length={CONTEXT}", f"export.output_name={folder / 'model.pte'}",
               "hydra.run.dir=."]
    done = subprocess.run(command, capture_output=True, text=True, env=_environment(), cwd=folder, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    (folder / "schema.json").write_text(json.dumps(SCHEMA))
    return folder, tokenizer, library_path.parents[3]


def _environment():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


def _cli(folder, *options, prompt=PROMPT):
    command = [sys.executable, "-m", "executorch_openvino", "generate", str(folder / "model.pte"),
               "--tokenizer", str(folder / "tokenizer.json"), "--prompt", prompt, "--show-ids", *options]
    return subprocess.run(command, capture_output=True, text=True, env=_environment(), timeout=600)


def _ids_line(stdout: str):
    line = next(line for line in stdout.splitlines() if line.startswith("ids:"))
    return [int(i) for i in line.split()[1:]]


SAMPLED = dict(temperature=1.3, top_k=40, top_p=0.9, seed=5)
# Lookup on a prompt that repeats itself, so that drafts are proposed (and, greedy, land).
REPEATING = "the quick brown fox jumps over the lazy dog. the quick brown fox jumps over the lazy dog. the quick"
RUNS = {"greedy": ({}, False, PROMPT), "sampled": (SAMPLED, False, PROMPT),
        "greedy with lookup": ({}, True, REPEATING), "sampled with lookup": (dict(temperature=0.3, seed=5), True, REPEATING)}


@pytest.mark.parametrize("run", list(RUNS))
def test_python_the_command_line_and_cpp_give_the_same_ids(exported, run):
    from executorch_openvino.generation import SamplingOptions
    from executorch_openvino.llm.text_generation import TextGenerator

    folder, _, build = exported
    sampling, lookup, text = RUNS[run]
    generator = TextGenerator.load(folder / "model.pte", folder / "tokenizer.json")
    prompt = generator.encode(text)
    assert prompt[0] == BOS  # the program's metadata, as exported by the documented command
    python = generator.generate(text, NEW_TOKENS, sampling=SamplingOptions(**sampling), lookup=lookup)
    ids = python.result.tokens
    assert ids, python.result.stopped_by
    flags = [f"--{key.replace('_', '-')}={value}" for key, value in sampling.items()] + (["--lookup"] if lookup else [])
    cli = _cli(folder, "--max-new-tokens", str(NEW_TOKENS), *flags, prompt=text)
    assert cli.returncode == 0, cli.stderr[-2000:]
    assert _ids_line(cli.stdout) == ids
    cpp_flags = [item for flag in flags for item in (flag.split("=", 1) if "=" in flag else [flag])]
    cpp = subprocess.run([str(build / "examples" / "generate"), str(folder / "model.pte"), "--ids",
                          " ".join(map(str, prompt)), "--max-new-tokens", str(NEW_TOKENS), *cpp_flags],
                         capture_output=True, text=True, timeout=600)
    assert cpp.returncode == 0, cpp.stderr
    assert _ids_line(cpp.stdout) == ids
    if lookup:
        assert python.result.statistics.drafted > 0


def _valid(text: str) -> dict:
    value = json.loads(text)
    assert set(value) <= {"name", "age", "tags"} and {"name", "age"} <= set(value), value
    assert isinstance(value["name"], str) and len(value["name"]) <= 10
    assert isinstance(value["age"], int) and 0 <= value["age"] <= 120
    assert all(tag in ("a", "b") for tag in value.get("tags", [])) and len(value.get("tags", [])) <= 3
    return value


@pytest.mark.parametrize("lookup", [False, True], ids=["sampled", "sampled with lookup"])
def test_schema_constrained_output_is_valid_json_on_every_seed(exported, lookup):
    from executorch_openvino.generation import SamplingOptions
    from executorch_openvino.llm.text_generation import TextGenerator

    folder, _, _ = exported
    generator = TextGenerator.load(folder / "model.pte", folder / "tokenizer.json")
    constraint = generator.constraint("json_schema", SCHEMA)
    unconstrained = generator.generate(PROMPT, NEW_TOKENS, sampling=SamplingOptions(temperature=1.0, seed=0)).text
    with pytest.raises(ValueError):
        json.loads(unconstrained)  # the model does not write JSON by itself
    drafted = 0
    for seed in range(16):
        done = generator.generate(PROMPT, CONTEXT - 8, sampling=SamplingOptions(temperature=1.0, seed=seed),
                                  lookup=lookup, constraint=constraint)
        assert done.result.stopped_by in ("constraint", "eos"), (seed, done.result.stopped_by, done.text)
        _valid(done.text)
        drafted += done.result.statistics.drafted
    if lookup:
        assert drafted > 0


def test_the_command_lines_schema_output_parses(exported):
    folder, _, _ = exported
    for seed in ("1", "2"):
        done = _cli(folder, "--max-new-tokens", "100", "--json-schema", str(folder / "schema.json"),
                    "--temperature", "1", "--seed", seed)
        assert done.returncode == 0, done.stderr[-2000:]
        _valid(done.stdout[: done.stdout.index("\nids:")])


@pytest.mark.parametrize("options, reason", [
    (["--lookup", "--draft", "x.pte"], "no such file (the draft model)"),
    (["--json-schema", "/nowhere.json"], "/nowhere.json: no such file (the json schema)"),
    (["--regex", "("], "llguidance refused the regex"),
    (["--temperature", "-1"], "--temperature must be 0 (greedy) or a positive number, not -1"),
    (["--top-k", "-3"], "--top-k must be a whole number, 0 (off) or more, not -3"),
])
def test_each_refusal_names_its_reason_on_stderr(exported, options, reason):
    folder, _, _ = exported
    done = _cli(folder, *options)
    assert done.returncode != 0
    assert reason in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and reason not in done.stdout
