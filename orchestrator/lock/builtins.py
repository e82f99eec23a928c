"""Which locked images fnrun's own in-process code may answer for, and the digest of that code.

A builtin is not the image's code, so under a lock it runs only where the lock says so: for an
image locked as `servedBy: fnrun` whose code digest is still this fnrun's, or for a locked image
built from this very code (fnrun's catalog images carry the hash of the sources they were built
from, the label the unlocked builtin decision reads too)."""

from __future__ import annotations

from ..runtimes.host.sources import CATALOG, FUNCTIONS_DIR, SOURCE_HASH_LABEL, files_hash, source_hash


def code_digest(module: str) -> str:
    """sha256 of the code a builtin module runs (the same hash fnrun's catalog images are labelled with)."""
    if module in CATALOG.values():
        return "sha256:" + source_hash(module)
    files = [FUNCTIONS_DIR / "__init__.py", *sorted((FUNCTIONS_DIR / "sdk").glob("*.py")), *sorted((FUNCTIONS_DIR / "kpt_catalog").glob("*.py"))]
    return "sha256:" + files_hash(files)


def built_from_this_code(image: str, labels: dict | None) -> str | None:
    """The catalog module when a local image's source-hash label is this fnrun's code, else None."""
    module = CATALOG.get(image)
    if module is None or not labels or labels.get(SOURCE_HASH_LABEL) != source_hash(module):
        return None
    return module
