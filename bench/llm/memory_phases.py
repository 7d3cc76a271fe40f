"""Where an LLM's resident memory comes from, phase by phase (issue 30's memory target): reading the
model, compiling it, the first prefill, then decoding, for the delegate and for native OpenVINO on the
same IR (ours' IR, extracted from the .pte), its weights read two ways: from the file (OpenVINO maps it)
and from memory (a buffer the caller keeps, as the delegate does). Each subject runs in a fresh process;
after each phase: RSS added since the start, and the phase's own peak (VmHWM reset before it). A native
reproduction an upstream report can carry: the phase that adds about one more copy of the weights is the
first inference, in native OpenVINO as in the delegate.

    .venv/bin/python bench/llm/memory_phases.py [--size smollm2-360m] [--formats int8,int4] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, List

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import machine, paths, processes, reports  # noqa: E402
from common.memory import peak_kb, reset_peak, rss_kb  # noqa: E402
from common.reports import say  # noqa: E402

paths.on_path(paths.PYTHON)
import llm_options  # noqa: E402
import llm_runners  # noqa: E402
import llm_setup  # noqa: E402

SUBJECTS = {
    "delegate": "the .pte through executorch.runtime (load = load_program + load_method: the delegate reads "
                "and compiles the IR)",
    "native-file": "ours' IR in native OpenVINO, read from its files (the weights mapped)",
    "native-memory": "ours' IR in native OpenVINO, the weights read into a buffer first and kept (the "
                     "delegate's way)",
}
PHASES = ("read", "compile", "first prefill", "decode")
DECODE_STEPS = 16
ROPE = "memory-phases-rope.pt"


class Phases:
    """RSS added since the start after each phase, and each phase's own peak, in MB."""

    def __init__(self):
        self.start, self.rows = rss_kb(), []
        if not reset_peak():
            raise RuntimeError("the peak of resident memory (VmHWM) cannot be reset here")

    def run(self, name: str, action: Callable[[], object]) -> object:
        reset_peak()
        result = action()
        self.rows.append({"phase": name, "added_mb": (rss_kb() - self.start) / 1024,
                          "peak_added_mb": (peak_kb() - self.start) / 1024})
        return result


def child(subject: str, size, fmt: str, work: Path) -> dict:
    """One subject in this (fresh) process."""
    import openvino as ov

    if subject == "delegate":
        import executorch_openvino  # noqa: F401  (imports before the baseline, as the LLM bench's probes)
        from executorch.runtime import Runtime  # noqa: F401
    torch.set_num_threads(1)
    pte, ir = work / f"ours-{fmt}.pte", work / f"ours-{fmt}-ir"
    prompt = llm_setup.round_prompt(size, work, 0)
    core = ov.Core()
    # The rotary tables the IR takes as inputs, made by the parent: building the model here would leave
    # freed memory in this process's heap, which later allocations reuse unseen by RSS.
    rope = torch.load(work / ROPE) if subject != "delegate" else None
    phases = Phases()
    if subject == "delegate":
        phases.rows.append({"phase": "read", "added_mb": None, "peak_added_mb": None})
        step = phases.run("compile", lambda: llm_runners.EtRunner(pte, "ours", attention="grown"))._call
    else:
        if subject == "native-file":
            model = phases.run("read", lambda: core.read_model(str(ir / "model.xml")))
        else:
            def read():  # the buffer is returned so that it stays alive: the model reads it in place
                weights = np.fromfile(ir / "model.bin", dtype=np.uint8)
                return weights, core.read_model((ir / "model.xml").read_bytes(), ov.Tensor(weights, shared_memory=True))
            weights, model = phases.run("read", read)
        step = phases.run("compile", lambda: llm_options.IrStep(core, model, llm_options.SETTINGS["delegate-default"][0], rope))
        del model
    logits = phases.run("first prefill", lambda: step(prompt, 0))

    def decode():
        token = int(logits.argmax())
        for offset in range(DECODE_STEPS):
            token = int(step([token], len(prompt) + offset).argmax())
    phases.run("decode", decode)
    return {"rows": phases.rows}


def run(size, formats: List[str], work: Path) -> Dict[str, dict]:
    torch.save(llm_options.rope_tables(size), work / ROPE)
    results = {}
    for fmt in formats:
        pte = work / f"ours-{fmt}.pte"
        if not pte.is_file():
            say(f"{fmt}: exporting ours' program")
            llm_setup.export_et("ours", fmt, size, work)
        llm_options.extract_ir(pte, work / f"ours-{fmt}-ir")
        weights = (work / f"ours-{fmt}-ir" / "model.bin").stat().st_size
        results[fmt] = {"weights_mb": weights / 2**20, "subjects": {}}
        for subject in SUBJECTS:
            done = processes.run_python(Path(__file__), "--child", subject, "--size", size.name, "--formats", fmt, "--work", work,
                                        env=processes.child_env())
            if done.returncode != 0:
                raise RuntimeError(f"{subject} ({fmt}) failed: {done.stderr.strip()[-2000:]}")
            results[fmt]["subjects"][subject] = processes.last_json(done.stdout)["rows"]
            say(f"{fmt} {subject}: {results[fmt]['subjects'][subject]}")
    return results


def report(size, results: Dict[str, dict], header: str) -> str:
    lines = [f"# Where an LLM's memory comes from, phase by phase ({reports.stamp()})", "", header, "",
             f"{size.describe().split(';')[0]}; prompt {size.prompt} tokens, then {DECODE_STEPS} greedy steps. "
             "Each subject in a fresh process; after each phase, resident memory added since the start and, "
             "in brackets, the phase's own peak (VmHWM reset before it), MB; then that over the IR's weights. "
             "Native OpenVINO compiles with the delegate's default properties.", ""]
    for subject, what in SUBJECTS.items():
        lines.append(f"- `{subject}`: {what}")
    for fmt, result in results.items():
        weights = result["weights_mb"]
        lines += ["", f"## {fmt} weights ({weights:.0f} MB in the IR)", ""]
        lines += reports.table_head(["subject", *PHASES, "after decode / weights"], "l" + "r" * (len(PHASES) + 1))
        for subject, rows in result["subjects"].items():
            cells = ["–" if row["added_mb"] is None else f"{row['added_mb']:.0f} [{row['peak_added_mb']:.0f}]"
                     for row in rows]
            lines.append(reports.row(f"`{subject}`", *cells, f"{rows[-1]['added_mb'] / weights:.2f}×"))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="smollm2-360m", help="one of " + ", ".join(llm_setup.SIZES))
    parser.add_argument("--formats", default="int8,int4")
    parser.add_argument("--work", type=Path, help="keep the artifacts here (default: a temporary folder)")
    parser.add_argument("--child", choices=sorted(SUBJECTS), help=argparse.SUPPRESS)
    reports.add_results_dir(parser)
    args = parser.parse_args()
    size = llm_setup.SIZES[args.size]
    if args.child:
        print(json.dumps(child(args.child, size, args.formats, args.work)))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="memory-phases-"))
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "size.json").exists() or json.loads((work / "size.json").read_text())["size"]["name"] != size.name:
        llm_setup.prepare_size(size, work)
    load_before = machine.load_average()
    results = run(size, args.formats.split(","), work)
    header = (f"- {machine.machine(load_before, machine.load_average())}\n"
              f"- {machine.versions('openvino', 'torch', 'executorch')}, executorch_openvino {machine.our_version()}")
    text = report(size, results, header)
    reports.print_and_save(text, reports.results_dir(args.results_dir), f"memory-phases-{reports.stamp()}.md")


if __name__ == "__main__":
    main()
