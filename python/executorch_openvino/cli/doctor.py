"""`doctor`: one line per check of the installation, OK or FAIL with the fix.

Exit status 0 when every check that was not skipped is OK (or INFO), 1 otherwise.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

from .cmake_package import PACKAGE_DIR, cmake_config, cmake_prefix
from ._third_party_noise import hidden

CHECKS = {
    "executorch": "ExecuTorch",
    "openvino": "OpenVINO runtime",
    "devices": "OpenVINO devices",
    "library": "delegate library",
    "backend": "backend registered",
    "upstream": "OpenvinoBackend name",
    "options": "run-time options",
    "state": "state helper",
    "generation": "generation engine",
    "cpu": "CPU for OpenVINO",
    "fast": "precision=fast",
    "cmake": "CMake package",
}
_WIDTH = max(len(title) for title in CHECKS.values())
# The checks of what this package ships; the others check packages it runs with.
OURS = ("library", "backend", "upstream", "options", "state", "generation", "cmake")


@dataclass
class Result:
    key: str
    ok: Optional[bool]  # None: skipped
    detail: str
    fix: str = ""
    warn: bool = False  # OK, but something to know (does not fail doctor)
    info: bool = False  # not applicable to this kind of installation, said as what it is (does not fail)

    def line(self) -> str:
        status = "SKIP" if self.ok is None else (
            "FAIL" if not self.ok else "INFO" if self.info else "WARN" if self.warn else "OK")
        text = f"{status:<5} {CHECKS[self.key]:<{_WIDTH}}  {self.detail}"
        if (self.ok is False or self.warn) and self.fix:
            text += f" -- {'fix' if self.ok is False else 'note'}: {self.fix}"
        return text


HELP = "check ExecuTorch, the OpenVINO runtime, the delegate library and the CMake package"
DESCRIPTION = "Checks the installation, one line per check. Exit status 0 when no check fails."


def add_arguments(parser) -> None:
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=sorted(CHECKS),
        metavar="CHECK",
        help=f"do not count this check (repeatable): {', '.join(CHECKS)}",
    )


def _one_line(message: str, default_fix: str) -> Tuple[str, str]:
    """A multi-line message of the package ('problem ...\\nFix: ...') as (problem, fix) lines."""
    problem, _, fix = message.partition("\nFix: ")

    def flatten(text: str) -> str:
        joined = ""
        for part in (line.strip() for line in text.strip().splitlines()):
            if part:
                joined += ("" if not joined else " " if joined.endswith(":") else "; ") + part
        return joined

    return flatten(problem), flatten(fix) or default_fix


def _pinned_executorch() -> Optional[str]:
    """The ExecuTorch version the library is built for: the installed wheel's requirement, or the
    source checkout's requirements.txt."""
    import importlib.metadata  # here, not at import: it costs --help time

    lines: List[str] = []
    try:
        lines = importlib.metadata.requires("executorch-openvino") or []
    except importlib.metadata.PackageNotFoundError:
        requirements = PACKAGE_DIR.parents[1] / "requirements.txt"
        if requirements.is_file():
            lines = requirements.read_text().splitlines()
    for line in lines:
        match = re.match(r"^\s*executorch\s*==\s*([\w.+-]+)", line)
        if match:
            return match.group(1)
    return None


def _check_executorch() -> Result:
    import importlib.metadata

    pinned = _pinned_executorch()
    install = f"pip install 'executorch=={pinned}'" if pinned else "pip install executorch"
    try:
        version = importlib.metadata.version("executorch")
    except importlib.metadata.PackageNotFoundError:
        return Result("executorch", False, "the executorch package is not installed", install)
    spec = importlib.util.find_spec("executorch")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    name = "executorch.dll" if sys.platform == "win32" else "libexecutorch.so"
    runtimes = [Path(folder) / "lib" / name for folder in folders]
    found = next((path for path in runtimes if path.is_file()), None)
    if found is None:
        where = runtimes[0] if runtimes else f"<executorch>/lib/{name}"
        return Result("executorch", False, f"{version}, but {where} does not exist",
                      f"reinstall the ExecuTorch wheel ({install} --force-reinstall)")
    if pinned and version != pinned:
        return Result("executorch", False, f"{version} at {found}, but the delegate is built for {pinned} "
                      "(ExecuTorch has no stable C++ ABI)", install)
    return Result("executorch", True, f"{version}, runtime {found}")


def _check_cpu() -> Result:
    """What OpenVINO's CPU plugin does here with int8 (measured by a probe model)."""
    try:
        from executorch_openvino.runtime import cpu_capabilities

        report = cpu_capabilities.describe()
    except Exception as error:  # the openvino Python package is optional for running programs
        return Result("cpu", None, f"not measured ({type(error).__name__}: {error}); needs the openvino "
                      "Python package")
    detail = f"{report.device_name}, {report.summary()}"
    if report.needs_overflow_fix:
        return Result("cpu", True, detail, "static int8 models whose weights use the full int8 range (e.g. "
                      "ExecuTorch's OpenVINOQuantizer flow) lose accuracy on this CPU; quantize with "
                      "executorch_openvino.quantization (overflow fix on by default), see docs/quantization.md",
                      warn=True)
    return Result("cpu", True, detail)


def _check_fast(devices) -> Result:
    """What precision=fast computes in on each device here, and whether it differs from exact."""
    try:
        from executorch_openvino.runtime.precision import default_precision

        import openvino as ov

        core = ov.Core()
        chosen = {device: default_precision(device, core) for device in devices}
    except Exception as error:  # the openvino Python package is optional for running programs
        return Result("fast", None, f"not asked ({type(error).__name__}: {error}); needs the openvino Python package")
    parts = []
    for device, precision in chosen.items():
        if precision is None:
            parts.append(f"{device}: its own choice per model")
        elif precision == "f32":
            parts.append(f"{device}: f32, the same as exact" + (" (this processor has neither bf16 nor f16)"
                                                                    if device.startswith("CPU") else ""))
        else:
            parts.append(f"{device}: {precision} instead of exact's f32 (faster; {precision} keeps 2 to 3 "
                         "significant digits; `executorch-openvino bench MODEL.pte` measures both)")
    return Result("fast", True, "; ".join(parts) or "no devices", info=True)


STATE_LIBRARY_VARIABLE = "EXECUTORCH_OPENVINO_STATE_LIBRARY"
_STATE_NEEDED_BY = "going back in a conversation, save_state and paged attention need it"


def _check_state(loaded, runtime_ok: bool) -> Result:
    """The state helper (libexecutorch_openvino_state): found, opened, and working on objects of
    the OpenVINO runtime loaded (the library probes it with a one-variable model)."""
    if loaded is None:
        return Result("state", False, "not checked: the delegate library did not load",
                      "fix the delegate library line first")
    if not hasattr(loaded.handle, "executorch_openvino_describe_state_helper"):
        return Result("state", False, f"not checked: {loaded.path} has no executorch_openvino_describe_state_helper "
                      "(older than this package)", "rebuild the library (make build) or reinstall the wheel")
    if not runtime_ok:
        return Result("state", False, "not checked: the OpenVINO runtime did not load",
                      "fix the OpenVINO runtime line first")
    helper = loaded.describe_state_helper()
    error = " ".join(helper.get("error", "").split())
    if helper.get("works") == "1":
        return Result("state", True, f"{helper.get('path')} (built for OpenVINO {helper.get('built_for')}; a probe "
                      "model's variable read back, snapshotted and reset through it)")
    if not helper.get("built_for"):
        if sys.platform == "win32":
            return Result("state", True, "none on Windows (not built there by design: MinGW cannot link the C++ "
                          "runtime of OpenVINO's wheel); conversations do not go back, no save_state or paged "
                          "attention (docs/conversation-state.md)", info=True)
        return Result("state", False, f"this library was built without it ({_STATE_NEEDED_BY})",
                      "rebuild with the openvino wheel installed and EXECUTORCH_OPENVINO_BUILD_STATE_HELPER=ON "
                      "(make build), or install the wheel")
    if not helper.get("path"):  # not tried: another release is loaded
        return Result("state", False, f"{error} ({_STATE_NEEDED_BY})",
                      f"run with OpenVINO {helper.get('built_for')} (pip install 'openvino=={helper.get('built_for')}' "
                      "or OPENVINO_LIB_PATH), or rebuild against the runtime loaded (make build)")
    if helper.get("loaded") != "1":
        if os.environ.get(STATE_LIBRARY_VARIABLE):
            fix = (f"point {STATE_LIBRARY_VARIABLE} at the libexecutorch_openvino_state built with this library, or "
                   "unset it to use the one beside the library")
        else:
            fix = (f"rebuild (make build) or reinstall the wheel, which put libexecutorch_openvino_state beside "
                   f"{Path(str(loaded.path)).name}, or set {STATE_LIBRARY_VARIABLE} to it")
        return Result("state", False, error or f"{helper.get('path')} could not be opened", fix)
    return Result("state", False, f"{helper.get('path')} opened but does not work with the runtime loaded: {error}",
                  "rebuild the library and its helper together against the installed openvino (make build)")


def _check_generation(loaded) -> Result:
    """The generation engine (libexecutorch_openvino_generation, beside the library) loads, and reaches
    llguidance's C interface: a two-token vocabulary read from a tokenizer.json and a regex compiled
    over it (what generate --json-schema / --regex and Vocabulary.from_tokenizer need)."""
    if loaded is None:
        return Result("generation", False, "not checked: the delegate library did not load",
                      "fix the delegate library line first")
    from executorch_openvino.generation import engine

    try:
        lib = engine.library()
    except Exception as error:  # the reason, whatever it is
        return Result("generation", False, str(error).splitlines()[0],
                      "rebuild (make build) or reinstall the wheel, which puts it beside the delegate library")
    try:
        from tokenizers import Tokenizer, decoders, models

        tokenizer = Tokenizer(models.WordLevel({"a": 0, "b": 1}, unk_token="a"))
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer_json = tokenizer.to_str()
        engine.Constraint("regex", "[ab]+", tokenizer_json, eos_ids=[1])
        engine.Vocabulary.from_tokenizer(tokenizer_json, 2)
    except Exception as error:
        return Result("generation", False, f"{lib._name}; structured output and text from a tokenizer.json "
                      f"unavailable: {' '.join(str(error).split())}", "pip install llguidance==1.9.1")
    from importlib.metadata import version

    return Result("generation", True, f"{lib._name}; structured output by llguidance {version('llguidance')}")


def _runtime_origin() -> str:
    """Where the path of the OpenVINO runtime came from (the library takes OPENVINO_LIB_PATH when set)."""
    from executorch_openvino.runtime import openvino_discovery

    value = os.environ.get(openvino_discovery.LIB_PATH_VARIABLE)
    if not value:
        return " (found in the openvino package by executorch-openvino)"
    if value == openvino_discovery.executorch_auto_path():
        return f" ({openvino_discovery.LIB_PATH_VARIABLE}, the value ExecuTorch's bindings give it when it is unset)"
    return f" ({openvino_discovery.LIB_PATH_VARIABLE})"


def collect(skip=()) -> List[Result]:
    import executorch_openvino
    from executorch_openvino.runtime import library, openvino_discovery

    results = [_check_executorch()]
    try:
        found = executorch_openvino.info()
        failure = None
    except Exception as error:  # keep checking the rest
        found, failure = None, f"{type(error).__name__}: {error}"

    # OpenVINO runtime and its devices.
    if found is None:
        results.append(Result("openvino", False, f"executorch_openvino.info() failed: {failure}",
                              "see the delegate library line; run with -v for the traceback"))
    elif library.loaded() is None:
        results.append(Result("openvino", False, "not checked: the delegate library, which opens the runtime, "
                              "did not load", "fix the delegate library line first"))
    elif found.openvino_error or not found.openvino_version:
        problem, fix = _one_line(found.openvino_error or "the OpenVINO runtime did not load", f"set {openvino_discovery.LIB_PATH_VARIABLE} to libopenvino_c.so "
                                 "or its folder, or pip install openvino")
        if found.openvino_runtime_path and found.openvino_runtime_path not in problem:
            problem = f"{found.openvino_runtime_path}: {problem}"
        results.append(Result("openvino", False, problem, fix))
    else:
        origin = _runtime_origin()
        results.append(Result("openvino", True, f"{found.openvino_version} at {found.openvino_runtime_path}{origin}"))
    if found is not None and found.devices:
        results.append(Result("devices", True, ", ".join(found.devices)))
    else:
        results.append(Result("devices", False, "no devices: the OpenVINO runtime did not load",
                              "fix the OpenVINO runtime line first"))

    # Our library and its registration.
    loaded = library.loaded()
    if loaded is not None:
        results.append(Result("library", True, str(loaded.path)))
    else:
        problem, fix = _one_line(library.load_error() or "the library was not loaded",
                                 f"build it (make build) or set {library.LIBRARY_VARIABLE}")
        results.append(Result("library", False, problem, fix))
    if found is not None and found.backend_registered:
        results.append(Result("backend", True, f"{found.backend_id} in ExecuTorch's backend registry"))
    elif loaded is None:
        results.append(Result("backend", False, f"{executorch_openvino.BACKEND_ID} is not registered: the library "
                              "did not load", "fix the delegate library line first"))
    else:
        results.append(Result("backend", False, f"{executorch_openvino.BACKEND_ID} is not in ExecuTorch's registry "
                              f"although {loaded.path} loaded",
                              "rebuild the library against the installed executorch (make build)"))

    # ExecuTorch's own OpenVINO delegate's id: ours when it was free, else who holds it.
    if loaded is not None:
        holder = library.backend_library("OpenvinoBackend")
        if not holder:
            detail = "not registered by any library"
        elif Path(holder).resolve() == Path(loaded.path).resolve():
            detail = "registered by this library: programs from ExecuTorch's own OpenVINO partitioner run here"
        else:
            detail = f"held by {holder} (ExecuTorch's own OpenVINO delegate); this library leaves it alone"
        results.append(Result("upstream", True, detail))
        chosen = {key: value for key, value in executorch_openvino.get_options().items() if value is not None}
        text = ", ".join(f"{key}={value}" for key, value in chosen.items()) or "none set (each program's compile specs)"
        results.append(Result("options", True, text))
    results.append(_check_state(loaded, found is not None and not found.openvino_error and
                                bool(found.openvino_version)))
    results.append(_check_generation(loaded))

    results.append(_check_cpu())
    results.append(_check_fast(found.devices if found is not None and not found.openvino_error else ["CPU"]))

    # CMake package: only an installed wheel has one.
    config = cmake_config()
    if config.is_file():
        results.append(Result("cmake", True, f"prefix {cmake_prefix()}"))
    elif _our_version() == SOURCE_CHECKOUT:
        results.append(Result("cmake", True, f"none in a source checkout ({PACKAGE_DIR}); find_package("
                              "executorch_openvino) takes an installed wheel's (pip install .)", info=True))
    else:
        results.append(Result("cmake", False, f"{config} does not exist (the CMake package exists only in an "
                              "installed wheel)", "install the wheel (pip install .)"))

    for result in results:
        if result.key in skip:
            result.ok, result.detail = None, f"skipped (--skip {result.key})"
    return results


SOURCE_CHECKOUT = "a source checkout"


def _our_version() -> str:
    """The installed distribution's version; SOURCE_CHECKOUT when the package is imported from a tree
    that pip did not install (PYTHONPATH=python, as make test runs it)."""
    import importlib.metadata

    try:
        version = importlib.metadata.version("executorch-openvino")
    except importlib.metadata.PackageNotFoundError:
        return SOURCE_CHECKOUT
    # An installed distribution elsewhere does not make this folder an installed one; make build's
    # development install (scripts/develop_install.py) lists no module of the package: the package is
    # still the checkout's, with its build tree.
    try:
        files = importlib.metadata.files("executorch-openvino") or []
        installed = {Path(f.locate()).resolve() for f in files if f.name == "__init__.py"}
    except Exception:  # a distribution without a RECORD: trust its version
        return version
    return version if installed and (PACKAGE_DIR / "__init__.py").resolve() in installed else SOURCE_CHECKOUT


def main(args) -> int:
    results = collect(set(args.skip))
    print("executorch-openvino doctor", flush=True)
    groups = (("Packages it runs with (not part of executorch-openvino):", [r for r in results if r.key not in OURS]),
              (f"executorch-openvino ({_our_version()}, {PACKAGE_DIR}):", [r for r in results if r.key in OURS]))
    for heading, group in groups:
        print(heading)
        for result in group:
            print(result.line())
    if getattr(args, "verbose", False):
        print("note: messages printed above this report by torchao, torch or ExecuTorch come from those "
              "libraries as ExecuTorch imports them, not from executorch-openvino")
    elif hidden["count"]:
        print(f"note: {hidden['count']} start-up message(s) of torchao and torch, which ExecuTorch imports, were "
              "hidden (known and harmless here, not from executorch-openvino; -v shows them)")
    failed = [CHECKS[result.key] for result in results if result.ok is False]
    if failed:
        print(f"{len(failed)} check(s) FAILED: {', '.join(failed)}")
        return 1
    print("all checks OK" + (f" ({len(args.skip)} skipped)" if args.skip else ""))
    return 0
