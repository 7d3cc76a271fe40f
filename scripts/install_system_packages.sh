#!/usr/bin/env bash
# Installs Debian packages, only those missing: the ones given as arguments, or by default what the
# build and the Linux tests need. Idempotent; runs `apt-get update` once, only when something has
# to be installed. Needs root (as in CI).
set -euo pipefail

if [ $# -gt 0 ]; then
  packages=("$@")
else
  # qemu-user: the quantized tests also run on an emulated AVX2 CPU (tests/python/emulated_cpu.py).
  packages=(libgtest-dev binutils g++ make qemu-user)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing Debian packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "error: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
  echo "       run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
