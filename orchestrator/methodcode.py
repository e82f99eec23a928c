"""The methods the `dataclasses` decorator writes, compiled once and kept beside fnrun's bytecode.

Why: for every dataclass, `dataclasses` writes `__init__`, `__repr__`, `__eq__` (and for a frozen
one `__hash__`, `__setattr__`, `__delattr__`) as Python source and compiles it with `exec` each time
the module defining the class is imported; Python keeps a module's bytecode, never that. fnrun
defines about sixty dataclasses before its first function call, and compiling their methods was a
third of what `fnrun run --server` executed on a small package (the parser, mostly): ~50 ms of
an edit-loop run. The same text always compiles to the same code, so the `fnrun` command keeps
that code, by its text, where Python keeps fnrun's bytecode (`importlib.util.cache_from_source`:
`__pycache__`, or under PYTHONPYCACHEPREFIX), and hands it to `dataclasses` instead of compiling
the text again. The classes are the ones the text defines, as before.

Kept as bytecode is: written only where Python writes fnrun's (not under PYTHONDONTWRITEBYTECODE
or -B), whole or not at all (a temporary file renamed), read only when it names this interpreter's
bytecode and optimisation level, and trusted as fnrun's `.pyc` files are (whoever can write one
can write the other). A file that cannot be read is ignored and the text compiled as before. Only
the `fnrun` command installs it, for its own process (orchestrator.__main__); a program that
imports fnrun's library is left as it is."""

from __future__ import annotations

import builtins
import marshal
import os
import sys
from types import CodeType

LIMIT = 4096  # texts kept at most: past it, a save keeps only what its own process used


class Kept:
    """`exec` as `dataclasses` calls it, answering a text it has code for from that code."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.known = _load(path)
        self.used: set[str] = set()
        self.new: dict[str, CodeType] = {}

    def __call__(self, source: object, globals: dict | None = None, locals: dict | None = None) -> None:
        if type(source) is not str:
            return builtins.exec(source, globals, locals)  # type: ignore[arg-type]  # whatever it is, exec says what is wrong with it
        code = self.known.get(source) or self.new.get(source)
        if code is None:
            # dont_inherit: compiled as `dataclasses` compiles it, without this module's future flags
            code = self.new[source] = compile(source, "<string>", "exec", dont_inherit=True)
        else:
            self.used.add(source)
        return builtins.exec(code, globals, locals)

    def save(self) -> None:
        """Keep what was compiled anew, where Python would keep bytecode (nothing when nothing
        was new, or Python writes no bytecode); a failure to write costs only the next start."""
        if not self.new or sys.dont_write_bytecode:
            return
        kept = {**self.known, **self.new}
        if len(kept) > LIMIT:
            kept = {**{text: self.known[text] for text in self.used}, **self.new}
        temp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(temp, "wb") as out:
                out.write(_header() + marshal.dumps(kept))
            os.replace(temp, self.path)
        except (OSError, ValueError):  # a read-only install; a code object marshal cannot write
            try:
                os.unlink(temp)
            except OSError:
                pass


def install() -> Kept | None:
    """Put the kept code in front of `dataclasses`' compiler for this process; None where Python
    keeps no bytecode for fnrun (no cache tag), and nothing is changed then."""
    import dataclasses

    path = where()
    if path is None:
        return None
    kept = Kept(path)
    dataclasses.exec = kept  # type: ignore[attr-defined]  # a module global: dataclasses calls `exec` by name
    return kept


def where() -> str | None:
    """The kept code's file, beside this module's bytecode."""
    from importlib.util import cache_from_source

    try:
        bytecode = cache_from_source(__file__)
    except (NotImplementedError, ValueError):  # no sys.implementation.cache_tag
        return None
    return os.path.join(os.path.dirname(bytecode), f"dataclass-methods.{sys.implementation.cache_tag}.opt{sys.flags.optimize}.bin")


def _header() -> bytes:
    from importlib.util import MAGIC_NUMBER

    return MAGIC_NUMBER + b"\0"


def _load(path: str) -> dict[str, CodeType]:
    """What a previous command kept; empty where there is nothing this interpreter can use."""
    try:
        with open(path, "rb") as kept:
            data = kept.read()
        header = _header()
        if not data.startswith(header):
            return {}
        found = marshal.loads(data[len(header):])
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if type(found) is not dict or not all(type(text) is str and type(code) is CodeType for text, code in found.items()):
        return {}
    return found
