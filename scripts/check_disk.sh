#!/usr/bin/env bash
# Says, before make test starts, whether the disk has room for it: a full disk fails a stage late,
# with a compiler or pip error that does not say why. Measured on a fresh clone (2026-12-07): make
# test adds about 7 GB at its peak (the wheel's test environment and the lowered models in the
# temporary folder, optimum's environment, the sanitizer builds) to the 3 GB of .venv and build/.
# It warns and goes on: a machine that is short may still pass the stages that fit.
set -u
NEED_MB=${1:-9000}
for folder in "$(pwd)" "${TMPDIR:-/tmp}"; do
  free_mb=$(df -Pm "$folder" | awk 'NR == 2 {print $4}')
  if [ -n "$free_mb" ] && [ "$free_mb" -lt "$NEED_MB" ]; then
    echo "warning: $folder has ${free_mb} MB free; make test needs about ${NEED_MB} MB at its peak" \
         "(free some space, or point TMPDIR at a roomier disk): stages may fail with 'No space left on device'" >&2
  fi
done
echo "disk: $(df -Ph "$(pwd)" | awk 'NR == 2 {print $4 " free on " $6}') (make test needs about ${NEED_MB} MB)"
