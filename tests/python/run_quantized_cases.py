"""Runs quantized cases written by test_quantized_emulated_cpu.py on the CPU this process runs on
(an emulated one): each through the delegate and with native OpenVINO, and describes the CPU.

    python tests/python/run_quantized_cases.py FOLDER

FOLDER/cases.json lists the cases ({"name", "pte", "ir_xml", "ir_weights", "properties",
"inputs"}: file names inside FOLDER but properties); writes FOLDER/cpu.json (the CpuReport),
FOLDER/int8_probe.json (the probe's ratio for weights 64, 65 and 127) and, per case,
FOLDER/<name>.ours.npz and FOLDER/<name>.native.npz (arrays output0, output1, ... per input).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import executorch_openvino  # noqa: E402,F401  (loads the delegate into ExecuTorch's runtime)
from executorch_openvino.runtime import cpu_capabilities  # noqa: E402
from quantized_runs import run_native, run_ours  # noqa: E402


def main(folder: Path) -> None:
    started = time.monotonic()
    (folder / "cpu.json").write_text(json.dumps(cpu_capabilities.describe().as_dict()))
    probes = {weight: cpu_capabilities.int8_probe(weight=weight).ratio for weight in (64, 65, 127)}
    (folder / "int8_probe.json").write_text(json.dumps(probes))
    print(f"started and probed the CPU in {time.monotonic() - started:.0f} s", file=sys.stderr)
    for case in json.loads((folder / "cases.json").read_text())["cases"]:
        started = time.monotonic()
        stored = np.load(folder / case["inputs"])
        inputs = [stored[f"input{i}"] for i in range(len(stored.files))]
        ours = run_ours((folder / case["pte"]).read_bytes(), inputs)
        native = run_native((folder / case["ir_xml"]).read_bytes(), (folder / case["ir_weights"]).read_bytes(),
                            case["properties"], inputs)
        for kind, outputs in (("ours", ours), ("native", native)):
            np.savez(folder / f"{case['name']}.{kind}.npz", **{f"output{i}": y for i, y in enumerate(outputs)})
        print(f"{case['name']}: {time.monotonic() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
