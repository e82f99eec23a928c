"""Locked runs: with a fnrun.lock governing the package, every container function runs the
content the lock names, by digest, or the run is refused before anything starts.

An image missing from the lock, or whose local tag now names other content (a tag moved under
it), is one line naming the image, its declaring file and the fix. A run by digest cannot follow a
tag that moves during the run either. Builtins answer only where the lock allows it
(orchestrator.lock.builtins)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import FnrunError, InputError
from ..kinds import Kind
from ..runtimes import catalog_module
from ..runtimes.container import imagestore
from . import builtins
from .lockfile import Entry, Lock, decode, find

if TYPE_CHECKING:
    from ..runtimes import Invocation
    from ..select.functions import FunctionSpec

FIX = "run `fnrun lock` to lock what is there now, or pass --no-lock"


class LockedImages:
    """The lock a run obeys and, once `check` has passed, the engine reference of each image."""

    def __init__(self, lock: Lock) -> None:
        self.lock = lock
        self.references: dict[str, str] = {}
        self.served: dict[str, str] = {}  # image -> builtin module the lock lets answer for it

    def check(self, specs: list[FunctionSpec], pull_policy: str, root: Path) -> None:
        """Refuse, before anything runs, an image the lock does not name or whose content differs."""
        for spec in specs:
            if spec.kind != Kind.CONTAINER or spec.image is None or spec.image in self.references or spec.image in self.served:
                continue
            where = _declared(spec, root)
            entry = self.lock.entries.get(spec.image)
            if entry is None:
                raise InputError(f"{where}: image {spec.image} is not in {self.lock.path}", fix="run `fnrun lock` to add it, or pass --no-lock")
            if entry.served_by is not None:
                self.served[spec.image] = self._served(spec, entry, where)
            else:
                self.references[spec.image] = self._reference(entry, where, pull_policy)

    def _served(self, spec: FunctionSpec, entry: Entry, where: str) -> str:
        module = catalog_module(entry.image)
        if module is None or builtins.code_digest(module) != entry.source:
            raise FnrunError(f"{where}: {self.lock.path} has {entry.image} served by fnrun's code {entry.source}, "
                             "which this fnrun does not have", exit_code=imagestore.ENVIRONMENT, fix=FIX)
        if spec.mounts or spec.network:
            raise InputError(f"{where}: {entry.image} is locked as served by fnrun's own code, which cannot give it "
                             "mounts or network", fix="make the image present and run `fnrun lock`")
        return module

    def _reference(self, entry: Entry, where: str, policy: str) -> str:
        tagged = imagestore.identity(entry.image)
        if tagged is not None and tagged.id != entry.id and not (entry.digest and tagged.has_digest(entry.digest)):
            raise FnrunError(f"{where}: image {entry.image} is {tagged.id} here, not {entry.pinned_as()} as "
                             f"{self.lock.path} locks it (the tag moved)", exit_code=imagestore.ENVIRONMENT, fix=FIX)
        by_digest = f"{entry.image.partition('@')[0] if '@' in entry.image else _repository(entry.image)}@{entry.digest}" if entry.digest else None
        if by_digest and policy == "always":
            return by_digest  # pulled by digest: the registry can only hand over the locked content
        if entry.id and imagestore.identity(entry.id) is not None:
            return entry.id
        if by_digest and policy != "never":
            return by_digest
        raise FnrunError(f"{where}: image {entry.image} ({entry.pinned_as()}, locked in {self.lock.path}) is not present in the engine",
                         exit_code=imagestore.ENVIRONMENT, fix=f"`fnrun images load BUNDLE` brings it, or {FIX}")

    def reference(self, image: str) -> str:
        """What the engine is asked to run for `image`: its locked content (checked by `check`)."""
        return self.references.get(image, image)

    def builtin_for(self, spec: FunctionSpec, call: Invocation, builtin: bool, pull_policy: str) -> str | None:
        """The builtin module that may answer for a locked image: one the lock marks as served by
        fnrun, or fnrun's catalog code when the locked image was built from this very code."""
        assert spec.image is not None
        if spec.image in self.served:
            return self.served[spec.image]
        if not builtin or call.mounts or call.network or pull_policy == "always":
            return None
        found = imagestore.identity(call.image or "")
        return builtins.built_from_this_code(spec.image, found.labels if found else None)


def _repository(image: str) -> str:
    from ..render.images import split_tag

    return split_tag(image)[0]


def _declared(spec: FunctionSpec, root: Path) -> str:
    from .inventory import COMMAND_LINE, shown

    return COMMAND_LINE if spec.declared_in is None else shown(root / spec.declared_in)


def governing(directory: Path | None) -> LockedImages | None:
    """The lock a run in `directory` (None: a package on stdin, the current directory) obeys."""
    path = find(directory if directory is not None else Path.cwd())
    return LockedImages(decode(path)) if path is not None else None
