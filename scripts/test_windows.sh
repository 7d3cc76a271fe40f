#!/usr/bin/env bash
# The Windows loader tests, from Linux: cross-compiles tests/windows (the project's loader,
# openvino_api and blob sources) with MinGW-w64 and runs the tests under Wine against the DLLs of
# the OpenVINO Windows wheel of the version installed in .venv. `make test-windows` runs this.
#
# Idempotent: installs missing Debian packages (needs root; apt-get update once, only then), keeps
# the downloaded wheel in build/windows/cache and reuses the build folder build/windows. Each run
# uses a throw-away Wine prefix, deleted at the end. Returns ctest's status.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

venv=${VENV:-.venv}
build=${WINDOWS_BUILD:-build/windows}
cache="$build/cache"
jobs=$(nproc 2>/dev/null || echo 2)

# ---- Debian packages ----
bash scripts/install_system_packages.sh g++-mingw-w64-x86-64-posix mingw-w64-x86-64-dev wine wine64 googletest

# ---- Python environment (for pip, cmake and ninja) ----
if [ ! -x "$venv/bin/python" ] || [ ! -x "$venv/bin/cmake" ] || [ ! -x "$venv/bin/ninja" ]; then
  bash scripts/setup_venv.sh "$venv" requirements.txt
fi
python="$venv/bin/python"
cmake="$venv/bin/cmake"
ctest="$venv/bin/ctest"
ninja="$venv/bin/ninja"

# ---- The OpenVINO Windows wheel of the installed version, downloaded once ----
version=$("$python" -c 'import importlib.metadata as m; print(m.version("openvino"))') || {
  echo "error: the openvino package is not installed in $venv; run: make setup" >&2
  exit 1
}
mkdir -p "$cache"
find_wheel() { compgen -G "$cache/openvino-$version-*win_amd64.whl" | head -n 1 || true; }
wheel=$(find_wheel)
if [ -z "$wheel" ]; then
  echo "Downloading the OpenVINO $version Windows x64 wheel into $cache"
  "$python" -m pip download --quiet --only-binary=:all: --platform win_amd64 --python-version 3.11 \
    --no-deps "openvino==$version" -d "$cache"
  wheel=$(find_wheel)
  if [ -z "$wheel" ]; then
    echo "error: pip did not download openvino==$version for win_amd64 into $cache" >&2
    exit 1
  fi
fi

# ---- Configure and build ----
"$cmake" -S tests/windows -B "$build" -G Ninja -DCMAKE_MAKE_PROGRAM="$(cd "$(dirname "$ninja")" && pwd)/ninja" \
  -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/toolchains/mingw-w64.cmake" \
  -DEOV_OPENVINO_WHEEL="$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")" \
  -DEOV_EXECUTORCH_INCLUDE_DIR="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/executorch/include" \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
"$cmake" --build "$build" -j "$jobs"

# ---- Run under Wine, headless, in a throw-away prefix ----
wine_home=$(mktemp -d "${TMPDIR:-/tmp}/eov-wine.XXXXXX")
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver64)
wineboot=$(command -v wineboot || true)
export WINEPREFIX="$wine_home/prefix"
export WINEDEBUG=-all
export LANG=C.UTF-8
unset LC_ALL OPENVINO_LIB_PATH DISPLAY WAYLAND_DISPLAY
# No Wine Mono / Gecko install prompts while the prefix is created; the tests use neither.
export WINEDLLOVERRIDES="mscoree=;mshtml="
cleanup() {
  "$wineserver" -k >/dev/null 2>&1 || true
  rm -rf "$wine_home"
}
trap cleanup EXIT
mkdir -p "$WINEPREFIX"  # wineserver needs the folder; wineboot fills it

# A persistent wineserver and a booted prefix before ctest: otherwise Wine's background processes
# inherit the first test's output pipes and ctest waits for them (seconds per test, or a hang).
"$wineserver" -p </dev/null >/dev/null 2>&1
if [ -n "$wineboot" ]; then
  "$wineboot" -i </dev/null >/dev/null 2>&1
else
  /usr/lib/wine/wine64 wineboot -i </dev/null >/dev/null 2>&1
fi

status=0
"$ctest" --test-dir "$build" --output-on-failure -j "$jobs" || status=$?
exit "$status"
