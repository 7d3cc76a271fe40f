"""Another CPU on this machine: QEMU's user-mode emulator runs a process on an emulated x86-64 CPU
whose CPUID reports only that CPU's features, so OpenVINO chooses the kernels it would choose
there (seen: the same kernels and bit-identical results as a real AVX2 machine's, for the
quantized cases). QEMU 7.2 (Debian 12's qemu-user) emulates AVX2 and FMA but not AVX-512 or VNNI,
which is the class this machine may lack: CPUs with VNNI or AMX are only tested where the host
has them."""

from __future__ import annotations

import shutil
from typing import List

QEMU = "qemu-x86_64"
# AMD EPYC Zen 2: AVX2 and FMA, no AVX-512, no VNNI; OpenVINO's int8 kernels there sum u8 x s8
# products in 16 bits.
AVX2_CPU = "EPYC-Rome"


def command(cpu: str = AVX2_CPU) -> List[str]:
    """The command prefix that runs a program on the emulated `cpu`."""
    path = shutil.which(QEMU)
    if path is None:
        raise RuntimeError(f"{QEMU} is not installed: `make test` installs it (Debian's qemu-user, see "
                           "scripts/install_system_packages.sh); or apt-get install qemu-user")
    return [path, "-cpu", cpu]
