"""How a program gets its compiled model, and what each way costs: compiling the IR, importing a
model precompiled at export (precompile=["CPU"]), importing from OpenVINO's model cache (cache_dir),
and a second load of the same program in the same process (the compiled model is shared). The same
for a program whose weights are in a .ptd data file (external_weights), where a load served by the
model cache or a live compiled model reads none of the weights.

Every figure comes from a fresh Python process (so nothing is warm unless the case says so), runs
interleaved `--rounds` times, and the median is reported. Output: a Markdown table on stdout and
in bench/results/load-paths-<date>.md.

    python bench/load_paths/load_paths.py [--rounds 5] [--model resnet18] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common import machine, paths, processes, reports  # noqa: E402
from common.memory import rss_kb  # noqa: E402


def _rss_kib() -> int:
    return rss_kb() or 0


def worker(pte_path: str, cache_dir: str, loads: int, data_path: str = "") -> None:
    """Loads the program (with its data file, if any) `loads` times in this process; prints times
    and RSS growth as JSON."""
    import executorch_openvino
    from executorch.runtime import Runtime

    if cache_dir:
        executorch_openvino.set_options(cache_dir=cache_dir)
    data = Path(pte_path).read_bytes()
    runtime = Runtime.get()
    kept, figures = [], []
    for _ in range(loads):
        before = _rss_kib()
        start = time.perf_counter()
        program = runtime.load_program(data, data_path=data_path or None)
        method = program.load_method("forward")
        figures.append({"ms": (time.perf_counter() - start) * 1e3, "rss_kib": _rss_kib() - before})
        kept.append((program, method))
    sources = sorted({m["source"] for m in executorch_openvino.compiled_models()})
    print(json.dumps({"loads": figures, "sources": sources}))


def _run_worker(pte: Path, cache_dir: str = "", loads: int = 1) -> dict:
    ptd = pte.with_suffix(".ptd")
    output = processes.run_python(Path(__file__), "--worker", pte, cache_dir, loads, ptd if ptd.exists() else "",
                                  env=processes.child_env(PYTHONPATH=paths.PYTHON), check=True).stdout
    return processes.last_json(output)


def _export(model_name: str, folder: Path) -> dict:
    paths.on_path(paths.PYTHON, paths.BENCH / "zoo")
    import torch
    from executorch.exir import to_edge_transform_and_lower

    import executorch_openvino
    from zoo_models import ZOO_BY_NAME

    spec = ZOO_BY_NAME[model_name]
    model, inputs = spec.make()
    exported = torch.export.export(model, inputs)
    programs = {}
    for label, options in (("ir", {}), ("precompiled", {"precompile": ("CPU",)}),
                           ("ptd", {"external_weights": f"{model_name}-ptd"})):
        partitioner = executorch_openvino.OpenvinoPartitioner(**options)
        program = to_edge_transform_and_lower(exported, partitioner=[partitioner]).to_executorch()
        programs[label] = folder / f"{model_name}-{label}.pte"
        programs[label].write_bytes(program.buffer)
        if label == "ptd":
            program.write_tensor_data_to_file(str(folder))  # beside it, as <model>-ptd.ptd
    return programs


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--model", default="resnet18")
    reports.add_results_dir(parser)
    args = parser.parse_args()

    load_before = machine.load_average()
    with tempfile.TemporaryDirectory(prefix="eov_load_paths_") as tmp:
        folder = Path(tmp)
        programs = _export(args.model, folder)
        cache = folder / "cache"
        _run_worker(programs["ir"], str(cache))  # fills OpenVINO's model cache once
        _run_worker(programs["ptd"], str(cache))
        cases = {
            "compile the IR": lambda: _run_worker(programs["ir"])["loads"][0],
            "import the precompiled model": lambda: _run_worker(programs["precompiled"])["loads"][0],
            "import from OpenVINO's cache": lambda: _run_worker(programs["ir"], str(cache))["loads"][0],
            "weights in a .ptd: compile the IR": lambda: _run_worker(programs["ptd"])["loads"][0],
            "weights in a .ptd: import from the cache": lambda: _run_worker(programs["ptd"], str(cache))["loads"][0],
            "weights in a .ptd: second load, same process": lambda: _run_worker(programs["ptd"], loads=2)["loads"][1],
        }
        samples: dict = {name: [] for name in cases}
        second: list = []
        for _ in range(args.rounds):  # interleaved, so drift hits every case alike
            for name, run in cases.items():
                samples[name].append(run())
            second.append(_run_worker(programs["ir"], loads=2)["loads"])
        check = _run_worker(programs["precompiled"])
        assert check["sources"] == ["precompiled"], check

    rows = []
    base = statistics.median(s["ms"] for s in samples["compile the IR"])
    for name, figures in samples.items():
        ms = statistics.median(s["ms"] for s in figures)
        rss = statistics.median(s["rss_kib"] for s in figures) / 1024
        rows.append((name, ms, ms / base, rss))
    first_ms = statistics.median(pair[0]["ms"] for pair in second)
    second_ms = statistics.median(pair[1]["ms"] for pair in second)
    second_rss = statistics.median(pair[1]["rss_kib"] for pair in second) / 1024
    first_rss = statistics.median(pair[0]["rss_kib"] for pair in second) / 1024
    rows.append(("second load, same process (shared)", second_ms, second_ms / base, second_rss))

    today = reports.stamp()
    lines = [
        f"# Load paths: {args.model}, {today}",
        "",
        f"{machine.machine(load_before)}. {machine.versions('openvino', 'executorch')}. Median of {args.rounds} "
        "interleaved rounds, each a fresh process; load = `load_program` + `load_method` from bytes.",
        "",
        *reports.table_head(["how the compiled model is made", "load (ms)", "vs compiling",
                             "RSS added by the load (MiB)"], "lrrr"),
    ]
    lines += [reports.row(name, f"{ms:.1f}", f"{ratio:.2f}x", f"{rss:.1f}") for name, ms, ratio, rss in rows]
    lines += [
        "",
        f"The second load in one process reuses the first one's compiled model (own infer request): "
        f"{second_ms:.1f} ms and {second_rss:.1f} MiB, against {first_ms:.1f} ms and {first_rss:.1f} MiB for the first "
        f"load in the same processes ({second_ms / first_ms:.1%} of the time, "
        f"{(second_rss / first_rss if first_rss else 0):.1%} of the memory).",
    ]
    reports.print_and_save("\n".join(lines) + "\n", reports.results_dir(args.results_dir), f"load-paths-{today}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
