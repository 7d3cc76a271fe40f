"""The zoo's Python side: the calls zoo.py times in its own process (native OpenVINO's Python API,
executorch.runtime), and, run as a script, one load in a fresh process:

  python bench/zoo/zoo_python_side.py KIND FOLDER [--pte FILE] [--cache DIR] [--bytes]

KIND is `native` (openvino), `ours` (executorch_openvino through executorch.runtime) or `et` (any other
program through executorch.runtime). Prints one JSON line: load_ms, first_ms, rss_before_kb (after
the imports, before loading), peak_load_kb (VmHWM right after loading), peak_kb (VmHWM after a few
runs) and reset (whether VmHWM could be reset before loading, so that peak_load is the load's own).
For native and ours the OpenVINO runtime and its plugins are opened before the clock; ExecuTorch's
own OpenVINO delegate opens them during its load, which its figures include.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
from common.paths import PYTHON as _PYTHON  # noqa: E402
sys.path.insert(0, str(_PYTHON))
from executorch_openvino.benchmark.memory import peak_kb, reset_peak, rss_kb  # noqa: E402
from common.paths import PYTHON  # noqa: E402
from common.processes import last_json, path_list  # noqa: E402
from zoo_cpp_side import ChildFailed, child_environment  # noqa: E402


def _inputs(folder: Path):
    import numpy as np

    return [np.load(folder / f"input{i}.npy") for i in range(len(list(folder.glob("input*.npy"))))]


# --- the calls timed in zoo.py's process ----------------------------------------------------------


class NativeCall:
    """Native OpenVINO through its Python API on the folder's IR: one infer request, inputs set once,
    outputs left in the request (share_outputs), so a call is the inference and the binding's cost."""

    def __init__(self, folder: Path):
        import numpy as np
        import openvino as ov

        spec = json.loads((folder / "native.json").read_text())
        core = ov.Core()
        # Shared, not copied: OpenVINO reads the weights in place, as it does the delegate's, so they
        # live as long as this object.
        self.weights = np.fromfile(folder / "model.bin", dtype=np.uint8)
        self.weights_tensor = ov.Tensor(self.weights, shared_memory=True)
        model = core.read_model(model=(folder / "model.xml").read_bytes(), weights=self.weights_tensor)
        self.request = core.compile_model(model, spec["device"], spec["properties"]).create_infer_request()
        inputs = _inputs(folder)
        # The request reads the arrays' memory: they live as long as this object.
        self.arrays = [np.ascontiguousarray(inputs[j]) for j in spec["input_positions"]]
        for position, array in enumerate(self.arrays):
            self.request.set_input_tensor(position, ov.Tensor(array, shared_memory=True))
        self.output_positions = spec.get("output_positions", [0])

    def __call__(self):
        return self.request.infer(share_outputs=True)

    def outputs(self) -> list:
        """Copies of the outputs in the method's order."""
        by_method = {}
        for k, j in enumerate(self.output_positions):
            by_method[j] = self.request.get_output_tensor(k).data.copy()
        return [by_method[j] for j in sorted(by_method)]


class ProgramCall:
    """A program through executorch.runtime: method.execute(inputs) per call (inputs wrapped, outputs
    returned as new tensors). `from_bytes` hands the runtime the file's bytes instead of its path."""

    def __init__(self, pte: Path, inputs, from_bytes: bool = False):
        from executorch.runtime import Runtime

        self.program = Runtime.get().load_program(pte.read_bytes() if from_bytes else pte)
        # The method runs from the program's data: keep the program alive as long as the method.
        self.method = self.program.load_method("forward")
        self.inputs = list(inputs)

    def __call__(self):
        return self.method.execute(self.inputs)


# --- one load in a fresh process -------------------------------------------------------------------


def child_main(kind: str, folder: Path, pte: Optional[Path], cache: Optional[str], from_bytes: bool) -> int:
    inputs = _inputs(folder)
    if kind == "native":
        import numpy as np
        import openvino as ov

        spec = json.loads((folder / "native.json").read_text())
        _ = ov.Core().available_devices  # the runtime and its plugins opened before the clock, as for ours
        rss_before = rss_kb()
        reset = reset_peak()
        start = time.perf_counter()
        # Reading the files is part of the load, as reading the .pte is part of ours.
        xml = (folder / "model.xml").read_bytes()
        weights = np.fromfile(folder / "model.bin", dtype=np.uint8)
        core = ov.Core()
        if cache:
            core.set_property({"CACHE_DIR": cache})
        # shared_memory: OpenVINO reads the weights in place, as the delegate's model does.
        model = core.read_model(model=xml, weights=ov.Tensor(weights, shared_memory=True))
        request = core.compile_model(model, spec["device"], spec["properties"]).create_infer_request()
        arrays = [np.ascontiguousarray(inputs[j]) for j in spec["input_positions"]]
        for position, array in enumerate(arrays):
            request.set_input_tensor(position, ov.Tensor(array, shared_memory=True))
        load_ms = (time.perf_counter() - start) * 1e3
        run = request.infer
    else:
        import torch

        if kind == "ours":
            import executorch_openvino

            # Opens the OpenVINO runtime and lists its devices (loading the plugins) before the clock,
            # as native's child does: otherwise ours' load would count the runtime's libraries.
            executorch_openvino.runtime.library.load().describe_runtime()
        from executorch.runtime import Runtime

        tensors = [torch.from_numpy(array) for array in inputs]
        runtime = Runtime.get()
        data = pte.read_bytes() if from_bytes else pte
        rss_before = rss_kb()
        reset = reset_peak()
        start = time.perf_counter()
        program = runtime.load_program(data)
        method = program.load_method("forward")
        load_ms = (time.perf_counter() - start) * 1e3

        def run():
            _ = program  # the method runs from the program's data: keep it alive
            method.execute(tensors)
    peak_load = peak_kb()
    start = time.perf_counter()
    run()
    first_ms = (time.perf_counter() - start) * 1e3
    for _ in range(3 if first_ms < 1000 else 0):  # slow variants (seconds per call): the first run only
        run()
    print(json.dumps({"load_ms": load_ms, "first_ms": first_ms, "rss_before_kb": rss_before,
                      "peak_load_kb": peak_load, "peak_kb": peak_kb(), "reset": reset}), flush=True)
    return 0


def python_load(kind: str, folder: Path, pte: Optional[Path] = None, cache: Optional[Path] = None,
                from_bytes: bool = False, timeout: float = 900) -> dict:
    """Runs child_main in a fresh interpreter; raises ChildFailed (with the signal when it crashed)."""
    args = [sys.executable, str(Path(__file__).resolve()), kind, str(folder)]
    if pte is not None:
        args += ["--pte", str(pte)]
    if cache is not None and kind == "native":
        args += ["--cache", str(cache)]
    if from_bytes:
        args.append("--bytes")
    env = child_environment(cache if kind == "ours" else None)
    env["PYTHONPATH"] = path_list(PYTHON, env.get("PYTHONPATH"))
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(args, stdout=out, stderr=err, env=env, text=True)
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        out.seek(0)
        err.seek(0)
        text, error = out.read(), err.read()
    if code != 0:
        # The interpreter's own fault report names the Python line; keep the end of stderr.
        raise ChildFailed(f"{kind} load of {(pte or folder).name}", code, error)
    return last_json(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["native", "ours", "et"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--pte", type=Path)
    parser.add_argument("--cache")
    parser.add_argument("--bytes", action="store_true", help="load the program from bytes, not from its path")
    args = parser.parse_args(argv)
    import faulthandler

    faulthandler.enable()  # a crash leaves the Python stack on stderr
    return child_main(args.kind, args.folder, args.pte, args.cache, args.bytes)


if __name__ == "__main__":
    sys.exit(main())
