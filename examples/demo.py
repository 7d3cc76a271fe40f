"""`make demo`: runs models through the delegate library and compares them with NumPy and with
native OpenVINO.

Today the models are OpenVINO IR built in Python and packed into the delegate's container; the
path from a PyTorch model (torch.export, to_edge_transform_and_lower, a .pte, executorch.runtime)
arrives with the Python partitioner.

Steps: checks that the library registers into ExecuTorch's registry from Python, then runs the
per-call overhead benchmark for a short budget: it loads the delegate through ExecuTorch's
BackendInterface, checks its outputs against NumPy references and native OpenVINO, and times both.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

import executorch_openvino  # noqa: E402


def registry_check(library: Path) -> None:
    from executorch.runtime import Runtime

    registry = Runtime.get().backend_registry
    before = list(registry.registered_backend_names)
    ctypes.CDLL(str(library))
    after = list(registry.registered_backend_names)
    added = [name for name in after if name not in before]
    print(f"library:   {library}")
    print(f"registry:  {', '.join(before)} + {', '.join(added)}")
    if added != [executorch_openvino.BACKEND_ID]:
        raise SystemExit(f"expected {executorch_openvino.BACKEND_ID} to be registered, got {added}")
    available = registry.is_available(executorch_openvino.BACKEND_ID)
    print(f"available: {available} (OpenVINO runtime from OPENVINO_LIB_PATH={os.environ.get('OPENVINO_LIB_PATH')})")


def main() -> int:
    build = Path(os.environ.get("EXECUTORCH_OPENVINO_BUILD", REPO / "build"))
    print("== executorch_openvino demo ==")
    registry_check(build / "libexecutorch_openvino.so")

    models = build / "bench_models"
    subprocess.run([sys.executable, str(REPO / "bench" / "make_bench_models.py"), str(models)], check=True)
    print("\n== running the models: delegate vs NumPy reference vs native OpenVINO ==")
    result = subprocess.run(
        [str(build / "bench" / "bench_delegate_overhead"), "--cases", str(models), "--seconds", "8"]
    )
    print("\nNext: PyTorch models lowered with executorch_openvino's partitioner (torch.export -> .pte).")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
