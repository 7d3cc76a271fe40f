"""optimum-executorch's tasks exported with the `openvino` recipe, in an environment of their own
(.venv-optimum: optimum-executorch 1.1.0 needs transformers 5.0.0rc1, which cannot sit beside the
main environment's 4.57.6 and optimum-intel), against the installed wheel: `make test-optimum`.

Models are built from configs with random weights and saved with save_pretrained (nothing is
downloaded); HF_HUB_OFFLINE is set, so anything that would reach the hub fails instead."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers beside the tests

import pytest  # noqa: E402


def pytest_report_header(config):
    import executorch_openvino

    return f"executorch_openvino from {Path(executorch_openvino.__file__).parent}"


def pytest_sessionstart(session):
    """make test-optimum tests the wheel it installed: never a checkout's package by accident."""
    if os.environ.get("EXECUTORCH_OPENVINO_TEST_INSTALLED") == "1":
        import sysconfig

        import executorch_openvino

        installed = Path(sysconfig.get_paths()["purelib"])
        where = Path(executorch_openvino.__file__).resolve()
        if installed not in where.parents:
            raise pytest.UsageError(f"executorch_openvino comes from {where}, not from the installed wheel in {installed}")


@pytest.fixture(scope="session")
def saved(tmp_path_factory):
    """saved(name) -> the folder of architecture `name` saved with save_pretrained (made once)."""
    from hf_checkpoints import save

    folder = tmp_path_factory.mktemp("checkpoints")
    made = {}

    def get(name: str) -> Path:
        if name not in made:
            made[name] = save(name, folder / name)
        return made[name]

    return get
