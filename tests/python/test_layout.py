"""The package as its pipeline: no import circles, every folder saying its job, preprocess running its
stages and each stage's passes in their listed order, docs/source-layout.md drawn from the tree, and no
module name of an earlier layout left anywhere."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set

import torch

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "python" / "executorch_openvino"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: Set[str]) -> Set[str]:
    """The package's modules that `path` imports, anywhere in it (a function's imports too). `from
    .x import y` is an import of x.y where that is a module, else of x."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                       for alias in node.names]
        else:
            continue
        found |= {target for target in targets if target in modules and target != name}
    return found


def import_graph() -> Dict[str, Set[str]]:
    files = [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]
    modules = {_module_name(p) for p in files}
    return {_module_name(p): _imports(p, modules) for p in files}


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    found: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph[node]:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_circle():
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_one():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_stages_import_downward_only():
    """An earlier stage never imports a later one, and nothing below the API imports the API or the
    command line."""
    order = ["partition", "fx_passes", "convert", "ir_passes", "container"]
    above = {"cli", "partitioner", "preprocess", "llm", "optimum"}
    for module, targets in import_graph().items():
        parts = module.split(".")
        if len(parts) < 2 or parts[1] not in order + ["runtime", "quantization", "fx_graph"]:
            continue
        for target in targets:
            part = target.split(".")[1] if "." in target else ""
            assert part not in above, f"{module} imports {target}, above it"
            if parts[1] in order and part in order and part != parts[1]:
                # partition asks the stages below it; fx_passes feed convert; ir_passes use both.
                allowed = {"partition": {"fx_passes", "convert", "container"}, "fx_passes": set(),
                           "convert": set(), "ir_passes": {"fx_passes", "container"}, "container": set()}
                assert part in allowed[parts[1]], f"{module} imports {target}"


def test_every_folder_of_the_package_says_its_job():
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc, f"{init.relative_to(REPO)} has no docstring saying what the folder does"


def test_preprocess_runs_the_stages_and_every_listed_pass_once_in_order(monkeypatch):
    from executorch.exir import to_edge_transform_and_lower

    from executorch_openvino import OpenvinoPartitioner, convert, fx_passes, ir_passes, partition, preprocess
    from executorch_openvino.container import writer

    calls: List[str] = []

    def recording(name, function):
        def run(*args, **kwargs):
            calls.append(name)
            return function(*args, **kwargs)
        return run

    listed = {"partition": [s.__name__ for s in partition.STEPS], "fx": [p.__name__ for p in fx_passes.PASSES],
              "ir": [p.__name__ for p in ir_passes.PASSES]}
    monkeypatch.setattr(partition, "STEPS", tuple(recording(f"partition:{s.__name__}", s) for s in partition.STEPS))
    monkeypatch.setattr(fx_passes, "PASSES", tuple(recording(f"fx:{p.__name__}", p) for p in fx_passes.PASSES))
    monkeypatch.setattr(ir_passes, "PASSES", tuple(recording(f"ir:{p.__name__}", p) for p in ir_passes.PASSES))
    for module, name in ((fx_passes, "prepare"), (convert, "to_openvino"), (ir_passes, "run"), (writer, "write")):
        monkeypatch.setattr(module, name, recording(name, getattr(module, name)))

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()).eval()
    to_edge_transform_and_lower(torch.export.export(model, (torch.randn(2, 4),)), partitioner=[OpenvinoPartitioner()])

    # One partition: the partition steps once (the node support's probes run the FX passes on single
    # nodes meanwhile), then preprocess's four stages, each stage's passes in their listed order.
    assert [c for c in calls if c.startswith("partition:")] == [f"partition:{name}" for name in listed["partition"]]
    assert calls[calls.index("prepare"):] == ["prepare", *(f"fx:{name}" for name in listed["fx"]), "to_openvino",
                                              "run", *(f"ir:{name}" for name in listed["ir"]), "write"]
    assert preprocess.ExecutorchOpenvinoBackend is not None


def test_the_source_layout_page_shows_the_tree_as_it_is():
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "layout.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# Module names the package no longer has (0.1.0 was never released, so none is kept as an alias): nothing
# in the repository imports or names one. Each with where it went.
REMOVED_MODULES = {
    "executorch_openvino._moved": None,  # the aliases of the names below
    "executorch_openvino.after_import": "executorch_openvino.runtime.after_import",
    "executorch_openvino.blob": "executorch_openvino.container.blob",
    "executorch_openvino.compile_specs": "executorch_openvino.container.compile_specs",
    "executorch_openvino.cpu_capabilities": "executorch_openvino.runtime.cpu_capabilities",
    "executorch_openvino.errors": "executorch_openvino.runtime.errors",
    "executorch_openvino.library": "executorch_openvino.runtime.library",
    "executorch_openvino.named_weights": "executorch_openvino.container.named_weights",
    "executorch_openvino.op_support": "executorch_openvino.partition.op_support",
    "executorch_openvino.openvino_runtime": "executorch_openvino.runtime.openvino_discovery",
    "executorch_openvino.options": "executorch_openvino.runtime.options",
    "executorch_openvino.ir_passes.state": "executorch_openvino.ir_passes.buffer_variables",
    "executorch_openvino.cli._common": None,  # split by job: cli.user_errors, cli.progress, ..., the timing
    "executorch_openvino.cli.bench.rounds": "executorch_openvino.benchmark.rounds",
    "executorch_openvino.cli.bench.backends": "executorch_openvino.benchmark.backends",
}
SCANNED = ("python", "tests", "bench", "examples", "docs", "README.md")
_TEXT = {".py", ".md", ".txt", ".sh", ".toml", ".cfg", ".cmake", ".json", ".yml", ".yaml", ".jinja"}


def _mention(name: str) -> "re.Pattern[str]":
    """A removed module named in text: dotted (executorch_openvino.ir_passes.state, or from its
    folder on: ir_passes.state) or as a path (executorch_openvino/blob.py, ir_passes/state.py)."""
    parts = name.split(".")
    forms = [re.escape(name), re.escape("/".join(parts)) + r"(?:\.py|/)"]
    if len(parts) > 2:  # a top-level name alone (blob, options) would be any word
        forms += [re.escape(".".join(parts[1:])), re.escape("/".join(parts[1:])) + r"\.py"]
    return re.compile(r"(?<![\w.])(?:" + "|".join(forms) + r")(?!\w)")


def _imported(path: Path) -> Set[str]:
    """Every module a .py file imports, and every name it imports from one as `module.name`."""
    package = None
    if PACKAGE in path.parents:
        name = _module_name(path)
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level and package is not None:
                base = package.split(".")
                source = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            found |= {source} | {f"{source}.{alias.name}" for alias in node.names}
    return found


def _scanned_files() -> List[Path]:
    files = []
    for top in SCANNED:
        root = REPO / top
        for path in [root] if root.is_file() else root.rglob("*"):
            if path.is_file() and (path.suffix in _TEXT or path.name == "Makefile") and "__pycache__" not in path.parts:
                files.append(path)
    return files


def test_no_removed_module_name_is_imported_or_named():
    """Guards against an old name coming back in code, a docstring or a docs page (one that still
    named ir_passes/state.py, or docs/python.md's executorch_openvino.errors, fails here)."""
    patterns = {name: _mention(name) for name in REMOVED_MODULES}
    this = Path(__file__).resolve()
    found = []
    for path in _scanned_files():
        if path.resolve() == this:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".md":  # a changelog says what went
            text = re.sub(r"^## Changelog\n.*?(?=^## |\Z)", lambda m: "\n" * m.group(0).count("\n"), text,
                          flags=re.M | re.S)
        for name, pattern in patterns.items():
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(REPO)}:{line}: {match.group(0)} (removed: {name})")
        if path.suffix == ".py":
            found += [f"{path.relative_to(REPO)}: imports {name}" for name in sorted(_imported(path) & set(REMOVED_MODULES))]
    assert found == [], "\n".join(found)


def test_the_removed_names_do_not_import_and_their_successors_do():
    """Guards against a removed module left behind as a file or an alias (the shim that imported the
    flat names with a warning passes the text check above, and fails here)."""
    for old, new in REMOVED_MODULES.items():
        try:
            importlib.import_module(old)
        except ModuleNotFoundError:
            pass
        else:
            raise AssertionError(f"{old} still imports")
        if new is not None:
            importlib.import_module(new)


def test_the_name_finder_finds_each_form(tmp_path):
    pattern = _mention("executorch_openvino.ir_passes.state")
    for text in ("executorch_openvino.ir_passes.state", "ir_passes.state.make_stateful", "see ir_passes/state.py",
                 "python/executorch_openvino/ir_passes/state.py"):
        assert pattern.search(text), text
    for text in ("ir_passes.state_abi", "ir_passes/stateful.py", "my_ir_passes.state", "container/blob.py"):
        assert not pattern.search(text), text
    assert not _mention("executorch_openvino.blob").search("executorch_openvino.container.blob, container/blob.py")
    assert _mention("executorch_openvino.blob").search("from executorch_openvino.blob import parse_blob")
    source = tmp_path / "user.py"
    source.write_text("from executorch_openvino import blob\nfrom executorch_openvino.ir_passes import state\n")
    assert {"executorch_openvino.blob", "executorch_openvino.ir_passes.state"} <= _imported(source)


# --- the library's layers (C++) ---------------------------------------------------------------------

SRC = REPO / "src"
# What each layer of src/ may include besides itself (docs/architecture.md#the-librarys-layers). The
# state helper's C interface (openvino_state/state_abi.h) is the contract between the library and the
# helper, so the layers that call the helper include it; nothing else of the helper.
LAYER_INCLUDES = {
    "common": set(),
    "loader": {"common"},
    "blob": {"common"},
    # A conversation's state in a file: bytes only, with the blob's CRC-32.
    "state_file": {"common", "blob"},
    "openvino_api": {"common", "loader", "openvino_state/state_abi.h"},
    "delegate": {"common", "loader", "blob", "state_file", "openvino_api", "openvino_state/state_abi.h"},
    "openvino_state": {"common"},
    # The generation engine; its grammar/ opens llguidance with the loader's shim.
    "generation": {"common", "loader"},
    "runner": set(),
}
# src/delegate/'s folders, each including only those after it (src/delegate/README.md).
DELEGATE_FOLDERS = ["backend", "execution", "conversation", "compiling", "options"]


def _project_includes(path: Path) -> List[str]:
    return re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(encoding="utf-8"), re.M)


def include_violations(src: Path) -> List[str]:
    """Every quoted include of src/ that reaches a layer above its own, or a delegate folder before its own."""
    found = []
    for path in sorted(p for p in src.rglob("*") if p.suffix in (".h", ".cpp")):
        parts = path.relative_to(src).parts
        layer = parts[0]
        for include in _project_includes(path):
            target = include.split("/")
            if target[0] not in LAYER_INCLUDES:  # a header beside it, or not the library's
                continue
            allowed = LAYER_INCLUDES[layer]
            if target[0] != layer and target[0] not in allowed and include not in allowed:
                found.append(f"{path.relative_to(src.parent)} includes {include}: {layer}/ is below {target[0]}/")
            if layer == "delegate" == target[0] and len(parts) > 2 and len(target) > 2:
                mine, theirs = DELEGATE_FOLDERS.index(parts[1]), DELEGATE_FOLDERS.index(target[1])
                if theirs < mine:
                    found.append(f"{path.relative_to(src.parent)} includes {include}: delegate/{parts[1]}/ is below "
                                 f"delegate/{target[1]}/")
    return found


def test_the_library_includes_downward_only():
    """Guards the layering docs/architecture.md draws: e.g. a conversation/ unit including the partition's
    handle (execution/), or openvino_api/ reaching into delegate/, fails here."""
    assert sorted(p.name for p in (SRC / "delegate").iterdir() if p.is_dir()) == sorted(DELEGATE_FOLDERS)
    assert sorted(p.name for p in SRC.iterdir() if p.is_dir()) == sorted(LAYER_INCLUDES)
    assert include_violations(SRC) == []


def test_the_include_check_finds_an_upward_include(tmp_path):
    (tmp_path / "delegate" / "compiling").mkdir(parents=True)
    (tmp_path / "openvino_api").mkdir()
    (tmp_path / "delegate" / "compiling" / "a.cpp").write_text('#include "delegate/execution/handle.h"\n')
    (tmp_path / "openvino_api" / "b.cpp").write_text('#include "delegate/backend/errors.h"\n#include "loader/x.h"\n')
    src = tmp_path.name
    assert include_violations(tmp_path) == [
        f"{src}/delegate/compiling/a.cpp includes delegate/execution/handle.h: delegate/compiling/ is below "
        "delegate/execution/",
        f"{src}/openvino_api/b.cpp includes delegate/backend/errors.h: openvino_api/ is below delegate/"]


# --- bench/ and tests/ apart --------------------------------------------------------------------------


def _top_level_modules(root: Path) -> Set[str]:
    """The module names a folder's scripts can import from each other (they put their folders on
    sys.path): each .py file's, and each package's (a folder with an __init__.py)."""
    return {p.stem for p in root.rglob("*.py") if "__pycache__" not in p.parts} | \
        {p.parent.name for p in root.rglob("__init__.py") if "__pycache__" not in p.parts}


def crossing_imports(importer: Path, other: Path) -> List[str]:
    """Imports in `importer`'s .py files of modules only `other` defines, and paths into `other` put on sys.path."""
    theirs = _top_level_modules(other) - _top_level_modules(importer)
    found = []
    for path in sorted(importer.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            found += [f"{path.relative_to(REPO)} imports {name}" for name in names if name.split(".")[0] in theirs]
            if isinstance(node, ast.Constant) and node.value == other.name and _on_sys_path(tree, node):
                found.append(f"{path.relative_to(REPO)} puts {other.name}/ on sys.path")
    return found


def _on_sys_path(tree: ast.AST, constant: ast.Constant) -> bool:
    """Whether the string is part of a sys.path.insert / append call."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("insert", "append"):
            if "sys.path" in ast.unparse(node.func) and any(n is constant for n in ast.walk(node)):
                return True
    return False


def test_bench_and_tests_do_not_import_each_other():
    """Guards what docs/architecture.md's "Benchmarks apart" promises: a bench script importing a test
    helper (bench/ used to import tests/python/zoo_models.py) or a test importing a bench script fails here;
    what both need lives in workloads/ or the package."""
    assert crossing_imports(REPO / "bench", REPO / "tests") == []
    assert crossing_imports(REPO / "tests", REPO / "bench") == []


def test_the_crossing_check_finds_an_import(tmp_path):
    (tmp_path / "bench").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "zoo_models.py").write_text("")
    (tmp_path / "bench" / "zoo.py").write_text("import sys\nsys.path.insert(0, str(ROOT / 'tests'))\nimport zoo_models\n")
    global REPO
    saved, REPO = REPO, tmp_path
    try:
        assert crossing_imports(tmp_path / "bench", tmp_path / "tests") == [
            "bench/zoo.py imports zoo_models", "bench/zoo.py puts tests/ on sys.path"]
    finally:
        REPO = saved
