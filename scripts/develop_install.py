"""Installs this checkout into a virtual environment as a development install, so that the package
and its commands work there as an installed wheel's would: `import executorch_openvino` finds
python/, the library is found in build/, and `executorch-openvino` / `executorch-openvino-run` are
on the environment's PATH.

    develop_install.py VENV

What it writes is what pip would for an editable install (PEP 660's result, without building the
library a second time): a .pth file naming the checkout's python/ folder, the console scripts of
pyproject.toml, and a dist-info folder whose RECORD lists them all, so `pip uninstall
executorch-openvino` or installing the wheel over it removes them. Running it again rewrites the same
files (the last checkout built into a shared environment wins).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_INSTALLER = "executorch-openvino scripts/develop_install.py\n"

# What pip writes for a console script, with the interpreter's absolute path.
_SCRIPT = """#!{python}
import sys
from {module} import {function}
if __name__ == "__main__":
    sys.exit({function}())
"""


def _record_line(path: Path, root: Path) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()
    return f"{os.path.relpath(path, root)},sha256={digest},{path.stat().st_size}"


def _metadata(project: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}",
             f"Summary: {project['description']}", f"Requires-Python: {project['requires-python']}"]
    lines += [f"Requires-Dist: {requirement}" for requirement in project.get("dependencies", [])]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {r.split(';')[0].strip()}; extra == '{extra}'" for r in requirements]
    return "\n".join(lines) + "\n"


def install(venv: Path) -> Path:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    python = venv / "bin" / "python"
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    if not purelib.is_dir():
        raise SystemExit(f"{purelib} does not exist: is {venv} a Python {sys.version_info[0]}."
                         f"{sys.version_info[1]} virtual environment?")
    name = project["name"].replace("-", "_")
    dist_info = purelib / f"{name}-{project['version']}.dist-info"
    for old in purelib.glob(f"{name}-*.dist-info"):
        installer = old / "INSTALLER"
        if not installer.is_file() or installer.read_text() != _INSTALLER:  # a wheel's: pip removes it
            subprocess.run([str(python), "-m", "pip", "uninstall", "--yes", "--quiet", project["name"]], check=True)
            continue
        for line in (old / "RECORD").read_text().splitlines():
            (purelib / line.split(",")[0]).unlink(missing_ok=True)
        old.rmdir()
    dist_info.mkdir()

    written = [purelib / f"__editable__.{name}.pth"]
    written[0].write_text(f"{REPO / 'python'}\n")
    for command, target in project["scripts"].items():
        module, function = target.split(":")
        script = venv / "bin" / command
        script.write_text(_SCRIPT.format(python=python.absolute(), module=module, function=function))
        script.chmod(0o755)
        written.append(script)
    files = {
        "METADATA": _metadata(project),
        "INSTALLER": _INSTALLER,
        "entry_points.txt": "[console_scripts]\n" + "".join(f"{c} = {t}\n" for c, t in project["scripts"].items()),
        "direct_url.json": json.dumps({"url": REPO.as_uri(), "dir_info": {"editable": True}}) + "\n",
    }
    for file_name, text in files.items():
        (dist_info / file_name).write_text(text)
        written.append(dist_info / file_name)
    record = [_record_line(path, purelib) for path in written] + [f"{os.path.relpath(dist_info / 'RECORD', purelib)},,"]
    (dist_info / "RECORD").write_text("\n".join(record) + "\n")
    return dist_info


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    install(Path(sys.argv[1]))


if __name__ == "__main__":
    main()
