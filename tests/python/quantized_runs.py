"""Running a quantized case two ways on the CPU at hand: through the delegate (executorch.runtime)
and with native OpenVINO on the same IR and properties. Imported by the tests and by
run_quantized_cases.py, which does the same under an emulated CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np

RUN_SCRIPT = Path(__file__).with_name("run_quantized_cases.py")


def run_ours(pte, inputs) -> List[np.ndarray]:
    """The program's forward method on each input, through ExecuTorch's runtime and our delegate."""
    import torch
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte).load_method("forward")
    return [method.execute([torch.as_tensor(x)])[0].numpy().copy() for x in inputs]


def run_native(ir_xml: bytes, ir_weights: bytes, properties: Dict[str, str], inputs) -> List[np.ndarray]:
    """Native OpenVINO: the IR read and compiled on CPU with `properties`, one request."""
    import openvino as ov

    core = ov.Core()
    model = core.read_model(ir_xml.decode(), ov.Tensor(np.frombuffer(ir_weights, dtype=np.uint8).copy()))
    request = core.compile_model(model, "CPU", properties).create_infer_request()
    return [np.array(request.infer([np.asarray(x)])[0], copy=True) for x in inputs]


def runtime_layers(ir_xml: bytes, ir_weights: bytes, properties: Dict[str, str]) -> Dict[str, set]:
    """layer type -> {(runtime precision, kernel)} of the IR compiled on CPU with `properties`."""
    import openvino as ov

    core = ov.Core()
    model = core.read_model(ir_xml.decode(), ov.Tensor(np.frombuffer(ir_weights, dtype=np.uint8).copy()))
    layers: Dict[str, set] = {}
    for op in core.compile_model(model, "CPU", properties).get_runtime_model().get_ops():
        info = op.get_rt_info()
        layers.setdefault(info["layerType"].astype(str), set()).add(
            (info["runtimePrecision"].astype(str), info["primitiveType"].astype(str))
        )
    return layers


# ---------------------------------------------------------------------------------------------
# Cases run in another process (an emulated CPU, a restricted oneDNN): written to a folder, run by
# run_quantized_cases.py there, read back here.


def write_cases(folder: Path, listed: Sequence[Tuple[str, object, int]]) -> None:
    """Writes (name, quantized_cases.Case, how many of its inputs) for run_quantized_cases.py."""
    entries = []
    for name, case, count in listed:
        for suffix, data in (("pte", case.pte), ("xml", case.ir_xml), ("bin", case.ir_weights)):
            (folder / f"{name}.{suffix}").write_bytes(data)
        np.savez(folder / f"{name}.inputs.npz", **{f"input{i}": x.numpy() for i, x in enumerate(case.inputs[:count])})
        entries.append({"name": name, "pte": f"{name}.pte", "ir_xml": f"{name}.xml", "ir_weights": f"{name}.bin",
                        "properties": case.properties, "inputs": f"{name}.inputs.npz"})
    (folder / "cases.json").write_text(json.dumps({"cases": entries}))


def run_cases_elsewhere(folder: Path, library: Path, prefix: Sequence[str] = (), environment=None) -> None:
    """Runs the written cases in a new process: `prefix` (e.g. an emulator) before the Python
    interpreter, `environment` added to this one's (ONEDNN_MAX_CPU_ISA is dropped unless given)."""
    env = {key: value for key, value in os.environ.items() if key != "ONEDNN_MAX_CPU_ISA"}
    env.update({"EXECUTORCH_OPENVINO_LIBRARY": str(library), **(environment or {})})
    done = subprocess.run([*prefix, sys.executable, str(RUN_SCRIPT), str(folder)], env=env, capture_output=True,
                          text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"running the cases failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def read_results(folder: Path):
    """(the CpuReport measured there, name -> (ours, native) outputs, the int8 probe's ratio by weight)."""
    from executorch_openvino.runtime.cpu_capabilities import CpuReport

    report = json.loads((folder / "cpu.json").read_text())
    report = CpuReport(**{k: tuple(v) if isinstance(v, list) else v for k, v in report.items()})

    def arrays(path: Path) -> List[np.ndarray]:
        stored = np.load(path)
        return [stored[f"output{i}"] for i in range(len(stored.files))]

    outputs = {}
    for entry in json.loads((folder / "cases.json").read_text())["cases"]:
        name = entry["name"]
        outputs[name] = (arrays(folder / f"{name}.ours.npz"), arrays(folder / f"{name}.native.npz"))
    probe = {int(weight): ratio for weight, ratio in json.loads((folder / "int8_probe.json").read_text()).items()}
    return report, outputs, probe
