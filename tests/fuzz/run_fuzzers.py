"""Runs the libFuzzer targets of build-fuzz/ for a bounded time each and reports what they did.

For each fuzzer: first the saved regression inputs (tests/fuzz/regressions/<fuzzer>/, each once),
then fuzzing from the seed corpus (tests/fuzz/corpus/<fuzzer>/) plus the inputs earlier runs found
(BUILD/fuzz-corpus/<fuzzer>/, which is the only folder written). Findings (crashes, leaks, timeouts,
out-of-memory) are saved under BUILD/fuzz-findings/<fuzzer>/; any finding fails the run.

Usage: python tests/fuzz/run_fuzzers.py BUILD_DIR SECONDS_EACH [FUZZER ...]
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Per fuzzer: extra libFuzzer options. Inputs are kept small: the parser's checks and OpenVINO's
# reader are exercised as well by a few kilobytes as by megabytes, and faster.
FUZZERS = {
    "blob_parse_fuzzer": ["-max_len=16384"],
    "backend_init_fuzzer": ["-max_len=16384", f"-dict={HERE / 'ir_xml.dict'}"],
    "text_stream_fuzzer": ["-max_len=4096"],
    "state_file_fuzzer": ["-max_len=8192"],
}
COMMON = ["-print_final_stats=1", "-timeout=60", "-rss_limit_mb=6144"]


def stat(output: str, name: str) -> int:
    found = re.findall(rf"stat::{name}:\s+(\d+)", output)
    return int(found[-1]) if found else 0


def essentials(output: str) -> list[str]:
    """The target's own message (it names the broken promise) and the sanitizer's verdict."""
    keep = ("_fuzzer: ", "ERROR", "SUMMARY", "runtime error", "Test unit written")
    return [line for line in output.splitlines() if any(k in line for k in keep)][:20]


def run(build: Path, fuzzer: str, seconds: int) -> bool:
    binary = build / "tests" / "fuzz" / fuzzer
    short = fuzzer.removesuffix("_fuzzer")
    seeds = HERE / "corpus" / short
    regressions = HERE / "regressions" / short
    corpus = build / "fuzz-corpus" / short
    findings = build / "fuzz-findings" / short
    corpus.mkdir(parents=True, exist_ok=True)
    findings.mkdir(parents=True, exist_ok=True)
    log_path = build / f"fuzz-{short}.log"

    saved = sorted(p for p in regressions.glob("*") if p.is_file()) if regressions.is_dir() else []
    if saved:
        replay = subprocess.run([str(binary), *map(str, saved)], capture_output=True, text=True)
        if replay.returncode != 0:
            log_path.write_text(replay.stdout + replay.stderr)
            print(f"{fuzzer}: a saved regression input fails again (log: {log_path})", flush=True)
            print("\n".join(essentials(replay.stdout + replay.stderr)), flush=True)
            return False

    before = set(findings.iterdir())
    started = time.monotonic()
    command = [str(binary), str(corpus), str(seeds), f"-max_total_time={seconds}",
               f"-artifact_prefix={findings}/", *COMMON, *FUZZERS[fuzzer]]
    result = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    output = result.stdout + result.stderr
    log_path.write_text(output)

    runs = stat(output, "number_of_executed_units")
    new = sorted(set(findings.iterdir()) - before)
    corpus_size = sum(1 for p in corpus.iterdir() if p.is_file())
    print(f"{fuzzer}: {runs} executions in {elapsed:.0f} s ({runs / max(elapsed, 1e-9):.0f}/s), "
          f"{stat(output, 'new_units_added')} new inputs, corpus {corpus_size} + {len(list(seeds.iterdir()))} seeds, "
          f"{len(saved)} regression inputs replayed, peak RSS {stat(output, 'peak_rss_mb')} MB; "
          f"findings: {', '.join(p.name for p in new) if new else 'none'}", flush=True)
    if result.returncode != 0 or new:
        print("\n".join(essentials(output)), flush=True)
        print(f"{fuzzer}: FAILED (exit {result.returncode}; log: {log_path}; reproduce: {binary} <finding>)", flush=True)
        return False
    return True


def main() -> int:
    build, seconds = Path(sys.argv[1]).resolve(), int(sys.argv[2])
    names = sys.argv[3:] or list(FUZZERS)
    ok = True
    for name in names:
        ok &= run(build, name, seconds)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
