"""Where a small LLM's decode step goes (`make bench-decode-step`): the same conversation (a prompt, then
greedy single-token steps) through each layer between a Hugging Face user and OpenVINO's kernels, so the
differences between rows are what each layer costs:

  our generation engine                         the program in executorch_openvino.generation (ExecuTorch's
                                                Module, the delegate, greedy choice: a C++ loop)
  executorch.runtime, attention=paged / grown   our program through ExecuTorch's Python runtime and the
                                                delegate (one Method.execute a step, argmax of the logits)
  our IR, native OpenVINO (grown)               the IR inside that program, one InferRequest.infer a step
  GenAI's IR, native OpenVINO                   optimum-intel's export of the same checkpoint (stateful),
                                                with the properties GenAI's bench rows use (f32, f32 cache)
  GenAI's LLMPipeline                           that export through GenAI itself (its stateful path, the
                                                same properties; its own time per output token)

The program and GenAI's IR come from a `bench/hf_recipe` work folder (its `ours-<format>/model.pte` and
`genai-<format>/openvino_model.xml`), so the weights are the recipe bench's.

    python bench/kernels/decode_step.py --work WORK/smollm2-135m [--formats int8,int4] [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
from common import paths  # noqa: E402
from peers import genai  # noqa: E402

import executorch_openvino  # noqa: E402
from executorch_openvino import benchmark  # noqa: E402

PROMPT, STEPS = 128, 64
WARMUP_ROUNDS = 3  # untimed: every variant's first conversations here run up to 25 % slower
ENGINE = "our generation engine (C++ loop, paged)"
PAGED, GROWN = "executorch.runtime, attention=paged", "executorch.runtime, attention=grown"
NATIVE_OURS, NATIVE_GENAI = "our IR, native OpenVINO (grown)", "GenAI's IR, native OpenVINO"
PIPELINE = "GenAI's LLMPipeline (stateful path)"
REPORT = {
    "description": [
        f"One conversation a turn: a {PROMPT}-token prompt, then {STEPS} greedy single-token steps; the cell is the "
        "median step of a round, median [lowest–highest] over interleaved rounds; ratios per round against GenAI's "
        "IR run natively. Properties everywhere: f32 inference precision and caches, the latency hint, the CPU "
        "plugin's defaults otherwise."],
    "tables": [{"title": "A decode step, layer by layer", "columns": [
        {"title": "variant", "field": "variant"},
        {"title": "ms a step", "field": "step_ms", "format": ".3f"},
        {"title": "/ GenAI's IR native", "field": "step_ms", "vs": NATIVE_GENAI, "format": ".2f", "unit": "×"}]}],
}
F32 = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "PERFORMANCE_HINT": "LATENCY"}


class ProgramTurns:
    """Our .pte through executorch.runtime: prompt, then one Method.execute a step."""

    def __init__(self, pte: Path, attention: str):
        import torch
        from executorch.runtime import Runtime

        self.torch = torch
        # torch only wraps the ids and takes the argmax here; its idle OpenMP threads would spin after each
        # op and take the two cores from OpenVINO's (hf_recipe_worker.py does the same).
        torch.set_num_threads(1)
        with executorch_openvino.using_options(attention=attention):
            self.method = Runtime.get().load_program(pte).load_method("forward")

    def turn(self, prompt: np.ndarray) -> list:
        torch = self.torch
        logits = self.method.execute((torch.from_numpy(prompt[None]), torch.arange(len(prompt))))[0]
        token, times = int(logits[0, -1].argmax()), []
        for step in range(STEPS):
            start = time.perf_counter()
            logits = self.method.execute((torch.tensor([[token]]), torch.tensor([len(prompt) + step])))[0]
            token = int(logits[0, -1].argmax())
            times.append(time.perf_counter() - start)
        return times


class EngineTurns:
    """The program through our generation engine: the whole conversation in C++, its own decode time."""

    def __init__(self, pte: Path):
        from executorch_openvino.generation import Conversation, Program

        self.conversation = Conversation(Program.load(pte))

    def turn(self, prompt: np.ndarray) -> list:
        result = self.conversation.generate([int(t) for t in prompt], STEPS + 1)
        stats = result.statistics
        return [stats.decode_s / max(stats.calls, 1)] * STEPS


class PipelineTurns:
    """GenAI's LLMPipeline on the same export: its own mean time per output token, repeated per step."""

    def __init__(self, folder: Path):
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hf_recipe"))
        import hf_recipe_variants

        self.runner = genai.GenaiRunner(folder, dict(genai.F32_PROPERTIES, **hf_recipe_variants.LLM_PIPELINE_PROPERTIES))

    def turn(self, prompt: np.ndarray) -> list:
        talk = self.runner.conversation([int(t) for t in prompt], STEPS)
        return [talk["decode_ms"] / STEPS / 1e3] * STEPS


class NativeTurns:
    """An IR run by OpenVINO itself, its state reset each turn."""

    def __init__(self, xml: Path, genai_inputs: bool):
        import openvino as ov

        model = ov.Core().read_model(xml)
        self.names = [port.get_any_name() for port in model.inputs]
        self.request = ov.Core().compile_model(model, "CPU", F32).create_infer_request()
        self.genai = genai_inputs

    def feed(self, tokens: np.ndarray, start: int) -> dict:
        count = len(tokens)
        positions = np.arange(start, start + count, dtype=np.int64)
        if self.genai:
            return {"input_ids": tokens[None], "attention_mask": np.ones((1, start + count), np.int64),
                    "position_ids": positions[None], "beam_idx": np.zeros(1, np.int32)}
        return dict(zip(self.names, (tokens[None], positions)))

    def turn(self, prompt: np.ndarray) -> list:
        self.request.reset_state()
        logits = self.request.infer(self.feed(prompt, 0))[0]
        token, times = int(logits[0, -1].argmax()), []
        for step in range(STEPS):
            start = time.perf_counter()
            logits = self.request.infer(self.feed(np.array([token], np.int64), len(prompt) + step))[0]
            token = int(logits[0, -1].argmax())
            times.append(time.perf_counter() - start)
        return times


def our_ir(pte: Path, folder: Path) -> Path:
    """The IR inside the program, written as a file for OpenVINO."""
    from executorch_openvino.container.pte_reader import delegate_blobs

    blob = delegate_blobs(pte)[0]
    xml = folder / "ours.xml"
    xml.write_bytes(blob.parsed.ir_xml)
    xml.with_suffix(".bin").write_bytes(blob.weights())
    return xml


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="a bench/hf_recipe work folder of one Llama size")
    parser.add_argument("--formats", default="int8,int4")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--prompt", type=int, default=PROMPT, help=f"prompt tokens (default {PROMPT})")
    parser.add_argument("--results-dir", type=Path, default=paths.RESULTS)
    args = parser.parse_args(argv)
    vocab = json.loads((args.work / "checkpoint" / "config.json").read_text())["vocab_size"]
    run = benchmark.new_run("decode-step", f"A decode step, layer by layer ({args.work.name})", checkout=paths.REPO,
                            report=REPORT, versions=["torch", "executorch", "openvino"],
                            settings={"size": args.work.name, "prompt": PROMPT, "steps": STEPS, "rounds": args.rounds,
                                      "genai properties": genai.F32_PROPERTIES})
    rng = np.random.default_rng(0)
    run["settings"]["prompt"] = args.prompt
    for fmt in args.formats.split(","):
        with tempfile.TemporaryDirectory() as folder:
            pte = args.work / f"ours-{fmt}" / "model.pte"
            variants = {ENGINE: EngineTurns(pte), PAGED: ProgramTurns(pte, "paged"), GROWN: ProgramTurns(pte, "grown"),
                        NATIVE_OURS: NativeTurns(our_ir(pte, Path(folder)), genai_inputs=False),
                        NATIVE_GENAI: NativeTurns(args.work / f"genai-{fmt}" / "openvino_model.xml", genai_inputs=True),
                        PIPELINE: PipelineTurns(args.work / f"genai-{fmt}")}
            steps = {name: [] for name in variants}
            for r in range(args.rounds + WARMUP_ROUNDS):
                prompt = rng.integers(0, vocab, args.prompt, dtype=np.int64)
                for name in benchmark.round_order(list(variants), r):
                    times = variants[name].turn(prompt)
                    if r >= WARMUP_ROUNDS:
                        steps[name].append(1e3 * float(np.median(times)))
            for name, per_round in steps.items():
                benchmark.add_row(run, f"{args.work.name}, {fmt}", name, step_ms=per_round)
            del variants
    markdown = benchmark.save(benchmark.finish(run), args.results_dir)
    print(markdown.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
