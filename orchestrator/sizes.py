"""Sizes as users write them (`--max-output 256M`, `--memory 512m`, FNRUN_CACHE_SIZE=2G), parsed
once where they enter fnrun; runtimes get bytes."""

from __future__ import annotations

import re

_BYTE_UNITS = {"b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def human_size(size: int) -> str:
    """`268435456` -> `256M`: sizes as --max-output takes them."""
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("k", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


def parse_size(text: str) -> int:
    """`256M`, `1G`, `512k`, `1000` (bytes) -> bytes; ValueError for anything else."""
    match = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)[iI]?[bB]?\s*", text)
    if not match or int(match.group(1)) <= 0:
        raise ValueError(text)
    return int(match.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[match.group(2).lower()]


def parse_memory(size: str) -> int:
    """A memory size as the docker CLI reads it (`512m`, `1.5g`, `1gb`, bytes) -> bytes; ValueError
    for anything else."""
    text = size.strip()
    if len(text) > 1 and text[-1] in "bB" and text[-2].isalpha():
        text = text[:-1]
    unit = text[-1:].lower()
    digits, factor = (text, 1) if unit.isdigit() else (text[:-1], _BYTE_UNITS.get(unit))
    if factor is None:
        raise ValueError(size)
    return int(float(digits) * factor)
