"""What an executable is built for, read from its ELF header: the warm-call helper fnrun ships
must be a static binary for its engine's machine (orchestrator/prebuilt.py)."""

from __future__ import annotations

import struct
from pathlib import Path

MACHINES = {"amd64": 0x3E, "arm64": 0xB7}  # e_machine: EM_X86_64, EM_AARCH64
PT_INTERP = 3  # a program header naming the dynamic loader: absent from a static binary


def elf(path: Path) -> tuple[int, bool]:
    """(e_machine, whether a program header asks for an interpreter) of a 64-bit little-endian ELF file."""
    data = path.read_bytes()
    assert data[:6] == b"\x7fELF\x02\x01", f"{path} is no 64-bit little-endian ELF file"
    machine = struct.unpack_from("<H", data, 18)[0]
    (phoff,) = struct.unpack_from("<Q", data, 32)
    size, count = struct.unpack_from("<HH", data, 54)
    return machine, PT_INTERP in (struct.unpack_from("<I", data, phoff + i * size)[0] for i in range(count))
