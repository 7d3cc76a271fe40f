"""One backend registry: our library registers into the registry of ExecuTorch's shared runtime,
the one the executorch.runtime Python API uses, beside ExecuTorch's own backends."""

from __future__ import annotations

import json
import subprocess
import sys

import executorch_openvino

_PROBE = r"""
import ctypes, json, sys
from executorch.runtime import Runtime
registry = Runtime.get().backend_registry
before = list(registry.registered_backend_names)
library = ctypes.CDLL(sys.argv[1])  # plain CDLL: RTLD_LOCAL, no special flags
library.executorch_openvino_backend_id.restype = ctypes.c_char_p
our_id = library.executorch_openvino_backend_id().decode()
after = list(registry.registered_backend_names)
print(json.dumps({
    "before": before, "after": after, "our_id": our_id,
    "available": registry.is_available(our_id),
    "registration_status": library.executorch_openvino_registration_status(),
}))
"""


def _probe(library_path) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(library_path)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_our_backend_joins_executorchs_registry_and_leaves_its_ids_untouched(library_path):
    probe = _probe(library_path)
    assert probe["our_id"] == executorch_openvino.BACKEND_ID
    assert probe["our_id"] not in probe["before"]
    assert probe["after"] == probe["before"] + [probe["our_id"]]
    assert "OpenvinoBackend" in probe["before"], "ExecuTorch's own OpenVINO delegate keeps its id"
    assert probe["registration_status"] == 0
    assert probe["available"] is True
