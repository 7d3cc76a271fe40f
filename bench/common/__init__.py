"""What the benchmarks share: where things are (paths), the machine and versions a report names
(machine), median, quantiles and ranges (stats), the order of interleaved rounds and the timed call
(rounds), resident memory of this process (memory), report files and Markdown tables (reports), child
processes (processes) and git (git).

Each benchmark script puts bench/ on sys.path and imports from here:

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common
    from common import paths, reports
"""
