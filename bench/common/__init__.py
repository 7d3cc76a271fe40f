"""What the benchmarks share beyond the package's measuring engine (executorch_openvino.benchmark):
where things are (paths), child processes (processes) and what a lowered program holds (programs).

Each benchmark script puts bench/ on sys.path and imports from here, which puts the checkout's
python/ (the package measured) and its root (workloads/, the models tests/ shares) on sys.path:

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
    from common import paths
"""

from . import paths

paths.on_path(paths.PYTHON, paths.REPO)
