"""kpt's everyday catalog functions and Starlark, in-process on request.

kpt's answer to "run set-labels without Docker" is a container. fnrun ships its own versions of the
functions most kpt packages use (functions/kpt_catalog/), written from the catalog's documentation
and expected outputs. They are not the images' code, so they run only when the user asks:
`--builtin-catalog` or FNRUN_BUILTIN_CATALOG=1; and when such an image cannot be had, the error
says so. Kustomize's declared `starlark: {path: x.star}` functions have no image: they always run
here. Either way the function runs as a child process through the builtin runtime (timeout, output
cap, memory limit, no network where the host allows it).
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.errors import InputError
from orchestrator.runtimes.protocol import Bytes, Invocation, RunOutput, StderrSink, StdoutSink
from orchestrator.settings import BUILTIN_CATALOG

PREFIXES = ("ghcr.io/kptdev/krm-functions-catalog/", "gcr.io/kpt-fn/")
STARLARK_MODULE = "functions.kpt_catalog.starlark"
# catalog name -> module run in its place
FUNCTIONS: dict[str, str] = {
    name: f"functions.kpt_catalog.{name.replace('-', '_')}"
    for name in ("set-namespace", "set-labels", "set-annotations", "set-image", "apply-setters", "search-replace", "starlark",
                 "apply-replacements", "no-op", "drop-comments")
}


def catalog_name(image: str | None) -> str | None:
    """The catalog function an image names (any tag or digest), or None: kpt's registries, or a
    short name as a Kptfile may give it before the prefix is added."""
    if not image:
        return None
    name = image.split("@", 1)[0]
    repository, _, tag = name.rpartition(":")
    if repository and "/" not in tag:
        name = repository
    for prefix in PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    return name if name in FUNCTIONS else None


def offer(image: str | None) -> str | None:
    """The fix to add to an error about an image fnrun could have run in-process (None if none)."""
    name = catalog_name(image)
    if name is None:
        return None
    return f"fnrun has a builtin {name}: pass --builtin-catalog (or set {BUILTIN_CATALOG}=1) to run it without the image"


MAX_SCRIPT = 100_000  # bytes: the script travels as one argument (Linux caps one at 128 KiB)


class StarlarkFileRuntime(Bytes):
    """Kustomize's `starlark: {path: x.star}` (the invocation's exec_path): fnrun reads the script,
    inside the package (its mount_root), and hands it to the child (which may not be able to read
    the user's files); the declaring resource is its functionConfig."""

    streams_stdout = True

    def run(self, invocation: Invocation, stdin: bytes, on_stderr: StderrSink | None = None,
            on_stdout: StdoutSink | None = None) -> RunOutput:
        from dataclasses import replace

        source, name = _script(invocation.exec_path, invocation.mount_root)
        call = replace(invocation, args=("--source", source, "--name", name))
        from orchestrator.runtimes.host.builtin import BuiltinRuntime  # here: naming a catalog image loads none of it

        return BuiltinRuntime(STARLARK_MODULE).run(call, stdin, on_stderr, on_stdout)


def _script(script: Path | None, root: Path | None) -> tuple[str, str]:
    """The script's text and file name, refused when it is outside the package, unreadable or too big."""
    assert script is not None and root is not None
    real, real_root = script.resolve(), root.resolve()
    if real_root not in real.parents:
        raise InputError(f"starlark script {script} is outside the package")
    try:
        source = real.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"starlark script {script}: cannot read it: {getattr(err, 'strerror', None) or err}") from None
    if len(source.encode()) > MAX_SCRIPT or "\0" in source:
        raise InputError(f"starlark script {script}: larger than {MAX_SCRIPT // 1000} kB or not text")
    return source, real.name
