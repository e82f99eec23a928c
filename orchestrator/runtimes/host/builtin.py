"""fnrun's own catalog images run as the same Python code without a container.

A container start costs ~0.3 s; a set-labels over a small package costs milliseconds. When a
function names one of fnrun's catalog images (`fnrun/<name>:v1`, whose ENTRYPOINT is
`python3 -m functions.<module>`), the module runs in a child of the fork server
(orchestrator.runtimes.host.zygote) instead, but only where that cannot change the result: the
image is not present locally, or the source hash it was built with (label SOURCE_HASH_LABEL,
set by scripts/build_images.py through sources.source_hash) equals the installed code's. The child goes through the exec runtime's runner:
same stdin/stdout protocol, --max-output cap, timeout and process-group kill; it gets only the
environment the container would get, an empty temporary working directory, no /local, and the
confinement of orchestrator.runtimes.host.confine (memory limit, no network, read-only file system).
Catalog functions in HANDOVER take the items as fnrun holds them (`run_items`, the protocol's
`takes_items`: orchestrator.runtimes.host.handover) and skip the ResourceList's text as well.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from typing import TYPE_CHECKING

from orchestrator.resource import Resource
from orchestrator.runtimes.host import catalog_handover, forked, handover
from orchestrator.runtimes.host.confine import confinement
from orchestrator.runtimes.host.exec import run_process
from orchestrator.runtimes.host.sources import FUNCTIONS_DIR
from orchestrator.runtimes.protocol import Bytes, Invocation, ItemsOutput, RunOutput, StderrSink, StdoutSink

if TYPE_CHECKING:
    import tempfile


def _scratch() -> tempfile.TemporaryDirectory[str]:
    """The child's empty working directory, on tmpfs where there is one: making and removing a
    directory on a busy disk can cost milliseconds, and a builtin step costs not many more."""
    import tempfile  # here: with shutil it imports lzma and bz2, which a run without builtins never needs

    shm = "/dev/shm"
    return tempfile.TemporaryDirectory(prefix="fnrun-builtin-", dir=shm if os.access(shm, os.W_OK | os.X_OK) else None)


#: The package of fnrun's versions of kpt's catalog functions (orchestrator.runtimes.host.kpt_catalog).
KPT_CATALOG_PACKAGE = "functions.kpt_catalog."

#: Catalog modules whose function runs over handed-over data (orchestrator.runtimes.host.handover):
#: they edit through the SDK only. inject-sidecar copies commented YAML nodes out of its config,
#: which plain data does not carry.
HANDOVER = frozenset({
    "functions.set_labels", "functions.set_namespace", "functions.require_resource_limits",
    "functions.tshirt_size", "functions.check_service_selectors",
})


class BuiltinRuntime(Bytes):
    """Runtime for a catalog image run as `python -m functions.<module>`, as its ENTRYPOINT does."""

    streams_stdout = True

    def __init__(self, module: str, handover: bool = True, fork: bool = True, server: forked.ForkServer | None = None,
                 workers: int | None = None) -> None:
        """`handover` (FNRUN_BUILTIN_HANDOVER) lets fnrun's own catalog take the items as data;
        `fork` (FNRUN_BUILTIN_FORK) lets the module run in a child of `server` (the run's fork
        server) where it can, rather than in a new interpreter of its own, as it does without one;
        `workers` (FNRUN_WORKERS) share the work of taking big handed-back items."""
        self.module = module
        self.handover = handover
        self.workers = workers
        self.server = server
        self.forks = module if fork and server is not None and forked.can_fork(module, FUNCTIONS_DIR) else None  # the protocol's capability
        # kpt's catalog in fnrun's versions: their text way answers JSON, which carries no
        # comments, so the items are handed over wherever they can be (catalog_handover)
        self.kpt_catalog = module.startswith(KPT_CATALOG_PACKAGE)
        self.takes_items = module in HANDOVER or self.kpt_catalog
        self.items_always = self.kpt_catalog

    def run(self, invocation: Invocation, stdin: bytes, on_stderr: StderrSink | None = None,
            on_stdout: StdoutSink | None = None) -> RunOutput:
        with _scratch() as cwd:
            output = self._process(invocation, self._environment(invocation), cwd, stdin, on_stderr, on_stdout)
        return RunOutput(output.stdout, output.stderr, output.exit_code, output.duration, builtin=True)

    def _process(self, invocation: Invocation, env: dict[str, str], cwd: str, stdin: bytes, on_stderr: StderrSink | None,
                 on_stdout: StdoutSink | None = None, handover: bool = False) -> RunOutput:
        """The module run over `stdin` in a child of the fork server where it can be, else in a
        new interpreter, confined either way."""
        confine = confinement(invocation.sandbox.memory)
        spawn = None
        if self.forks is not None and self.server is not None:
            spawn = partial(self.server.spawn, self.module, list(invocation.args), env, cwd, invocation.sandbox.memory, handover=handover,
                            timeout=invocation.sandbox.timeout, name=invocation.name)
        return run_process(self._argv(invocation), invocation, env, cwd, stdin, on_stderr, confine, spawn, on_stdout)

    def run_items(self, invocation: Invocation, items: list[Resource], function_config: dict | None,
                  on_stderr: StderrSink | None = None) -> ItemsOutput | None:
        """The function over the items as fnrun holds them, in a fork, under the same runner
        (timeout, output cap, kill) and confinement as `run`; None where that does not apply
        (the caller then sends the ResourceList as text to `run`). fnrun's own catalog goes the
        text way where it cannot fork or the run says no handover (FNRUN_BUILTIN_HANDOVER=0); kpt's catalog hands
        the items over in a new interpreter too, and always, as only that keeps their text."""
        if not self.takes_items:
            return None
        if not self.kpt_catalog and not (self.handover and self.forks is not None):
            return None
        data = [item.data for item in items]
        if not handover.is_plain([data, function_config]):
            return None
        env = self._environment(invocation)
        if self.kpt_catalog:
            env[catalog_handover.ENV_VAR] = "1"
            sent = catalog_handover.sendable(self.module, items, function_config)
        else:
            sent = handover.sendable(data, function_config)
        lines = handover.HeldLines(on_stderr)
        went_back = False  # the text way runs it again and shows its stderr then
        try:
            with _scratch() as cwd:
                output = self._process(invocation, env, cwd, sent, lines, handover=not self.kpt_catalog)
            went_back = output.stdout == handover.FALLBACK
            if went_back:
                return None
            back = None
            if output.stdout.strip():
                try:
                    if self.kpt_catalog:
                        back = catalog_handover.handed_back(output.stdout, output.exit_code, items, invocation.name)
                    else:
                        back = handover.handed_back(output.stdout, output.exit_code, items, invocation.name, self.workers)
                except handover.NeedsText:
                    went_back = True
                    return None
        finally:
            if not went_back:
                lines.release()  # also before a timeout's or the cap's error, as the text way shows them
        returned, results = back if back is not None else (None, [])
        return ItemsOutput(output.stdout, output.stderr, output.exit_code, output.duration, builtin=True, items=returned, results=results)


    def _argv(self, invocation: Invocation) -> list[str]:
        return [sys.executable, "-s", "-m", self.module, *invocation.args]  # -s: no user site-packages

    def _environment(self, invocation: Invocation) -> dict[str, str]:
        env = {"PATH": os.defpath, **invocation.env, "PYTHONPATH": str(FUNCTIONS_DIR.parent), "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop(catalog_handover.ENV_VAR, None)  # fnrun's alone to set (run_items): the text way's stdin is YAML
        return env
