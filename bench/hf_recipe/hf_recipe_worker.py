"""The optimum recipe benchmark's worker processes, started by hf_recipe_bench.py with the Python of
the environment a step needs (optimum-executorch's, or the main one):

  prepare   SIZE WORK ROUNDS OUT   (main env) the checkpoint (save_pretrained), the rounds' inputs, the
                                   eager reference with transformers 4.57.6
  reference SIZE WORK OUT          (optimum env) the same checkpoint loaded by transformers 5.0.0rc1:
                                   its eager reference
  export    VARIANT FMT SIZE WORK OUT
  serve     VARIANT FMT SIZE WORK  load the variant, then answer requests on stdin, one JSON object
                                   a line: {"op": "run", "round": R, "keep": bool} -> one conversation;
                                   {"op": "quit"} -> the process's peak RSS, then exit

One-shot steps write their result (or {"error": ...}) as JSON to OUT. The serving worker answers on
its original stdout, one JSON line per request; anything a library prints goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # hf_recipe/, bench/ (peers)
# The package (its measuring engine), unless PYTHONPATH names one; the checkout's root (workloads/).
sys.path += [str(HERE.parents[1] / "python"), str(HERE.parents[1])]

import hf_recipe_models as models  # noqa: E402

INPUTS = "inputs.json"  # the rounds' prompts (Llama); Whisper's audio is audio-<round>.npy


def checkpoint_of(work: Path) -> Path:
    return work / "checkpoint"


def artifact(work: Path, variant: str, fmt: str) -> Path:
    import hf_recipe_variants as variants

    return work / f"{variants.SHARES_EXPORT.get(variant, variant)}-{fmt}"


def round_input(size: models.Size, work: Path, round_index: int):
    """Round `round_index`'s input (-1: the probe's): prompt ids or audio samples."""
    if size.kind == models.LLAMA:
        return json.loads((work / INPUTS).read_text())[str(round_index)]
    import numpy as np

    return np.load(work / f"audio-{round_index}.npy")


def prepare(size: models.Size, work: Path, rounds: int) -> dict:
    import torch

    checkpoint = checkpoint_of(work)
    started = time.perf_counter()
    saved = models.save(size, checkpoint)
    result = {"checkpoint_seconds": time.perf_counter() - started, **saved}
    if size.kind == models.LLAMA:
        prompts = {str(r): models.prompt(size, checkpoint, r) for r in range(-1, rounds)}
        (work / INPUTS).write_text(json.dumps(prompts))
    else:
        import numpy as np

        for r in range(-1, rounds):
            np.save(work / f"audio-{r}.npy", models.audio(r))
    reference = models.reference(size, checkpoint)
    torch.save(reference, work / "reference-main.pt")
    result.update(transformers=reference["transformers"], distinct_ids=len(set(reference["ids"])),
                  ids=reference["ids"])
    return result


def reference(size: models.Size, work: Path) -> dict:
    """The checkpoint in this environment's transformers, against the main environment's reference."""
    import torch

    mine = models.reference(size, checkpoint_of(work))
    torch.save(mine, work / "reference-optimum.pt")
    main = torch.load(work / "reference-main.pt")
    return {"transformers": mine["transformers"], "ids_equal": mine["ids"] == main["ids"],
            "logits_max_abs": float((mine["logits"] - main["logits"]).abs().max()),
            "other_transformers": main["transformers"]}


def serve(variant: str, fmt: str, size: models.Size, work: Path) -> int:
    """Loads the variant, then answers requests until "quit" (see the module's docstring)."""
    # The answers go to the original stdout; whatever else writes to fd 1 (GenAI, ExecuTorch's logs)
    # goes to stderr, so that it cannot break a line of the protocol.
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def answer(payload: dict) -> None:
        answers.write(json.dumps(payload) + "\n")
        answers.flush()

    import torch

    import hf_recipe_variants as variants
    from executorch_openvino.benchmark.memory import peak_kb, reset_peak, rss_kb

    try:
        variants.imports_for(variant)
        # torch only makes the token tensors and takes the argmax here; its idle OpenMP threads would
        # spin after each op and take the two cores from the runtimes' own threads (bench/llm).
        torch.set_num_threads(1)
        baseline = rss_kb()
        if not reset_peak():
            raise RuntimeError("the peak of resident memory (VmHWM) cannot be reset here")
        start = time.perf_counter()
        runner = variants.make_runner(variant, size, artifact(work, variant, fmt), checkpoint_of(work))
        load_ms = (time.perf_counter() - start) * 1e3
        answer({"ready": True, "load_ms": load_ms, "baseline_kb": baseline, "after_load_kb": rss_kb(),
                "threads": variants.threads(variant), "python": sys.executable})
    except Exception as error:
        answer({"error": f"{type(error).__name__}: {error}\n{traceback.format_exc()}"})
        return 1
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "quit":
            answer({"peak_kb": peak_kb(), "rss_kb": rss_kb()})
            return 0
        try:
            given = round_input(size, work, request["round"])
            talk = runner.conversation(given, size.steps, bool(request.get("keep")))
            logits = talk.pop("logits", None)
            if request.get("keep"):
                torch.save({"ids": talk["ids"], "logits": logits}, work / f"probe-{variant}-{fmt}.pt")
            answer(dict(talk, peak_kb=peak_kb()))
        except Exception as error:
            answer({"error": f"{type(error).__name__}: {error}\n{traceback.format_exc()}"})
    return 0


def main(argv) -> int:
    import warnings

    warnings.filterwarnings("ignore")
    kind = argv[0]
    if kind == "serve":
        return serve(argv[1], argv[2], models.SIZES[argv[3]], Path(argv[4]))
    out = Path(argv[-1])
    started = time.perf_counter()
    try:
        if kind == "prepare":
            result = prepare(models.SIZES[argv[1]], Path(argv[2]), int(argv[3]))
        elif kind == "reference":
            result = reference(models.SIZES[argv[1]], Path(argv[2]))
        elif kind == "export":
            import hf_recipe_variants as variants

            variant, fmt, size, work = argv[1], argv[2], models.SIZES[argv[3]], Path(argv[4])
            result = variants.export(variant, fmt, size, checkpoint_of(work), artifact(work, variant, fmt))
        else:
            raise ValueError(f"unknown step {kind}")
    except Exception as error:
        result = {"error": f"{type(error).__name__}: {error}\n{traceback.format_exc()}"}
    result["process_seconds"] = time.perf_counter() - started
    out.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
