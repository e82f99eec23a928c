"""What the package build makes from fnrun's sources, so that nothing is compiled where fnrun runs.

- The warm containers' PID 1 (runtimes/container/warm/fnrun-warm.c) as one static binary per engine
  architecture, linux/amd64 and linux/arm64, built with zig's C cross compiler (the `ziglang`
  wheel: hermetic, the same musl libc for both targets, no system compiler or libc needed), into
  runtimes/container/warm/bin/linux-ARCH/fnrun-warm.
- The gRPC code of runtimes/remote/evaluator.proto (`evaluator_pb2.py`, `evaluator_pb2_grpc.py`), made by
  grpcio-tools' protoc, beside the .proto.

`setup.py` runs it when the wheel is built (into the build directory), `.ci/setup` for a
checkout (into the source tree, where the files are ignored by git):
`python -m orchestrator.prebuilt`. It uses the standard library only and imports nothing
of fnrun, so setup.py can load it by its path before fnrun's dependencies exist.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "runtimes"
ROOT = HERE.parent.parent  # where the `orchestrator` package lives
WARM = HERE / "container" / "warm"
HELPER_SOURCE = WARM / "fnrun-warm.c"
HELPER_NAME = "fnrun-warm"
#: The engine architectures a helper is shipped for, as the Engine API's /version names them
#: (`Arch`), with zig's target for each.
TARGETS = {"amd64": "x86_64-linux-musl", "arm64": "aarch64-linux-musl"}
#: uname's and the Engine API's spellings of those architectures (/info says x86_64, /version amd64).
MACHINES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
PROTO = HERE / "remote" / "evaluator.proto"
PROTO_MODULES = ("evaluator_pb2.py", "evaluator_pb2_grpc.py")
FLAGS = ("-static", "-Os", "-s")
TIMEOUT = 900  # seconds: zig builds musl for a target the first time (about a minute each)


def arch_of(machine: str) -> str | None:
    """`machine` (uname's x86_64/aarch64, or the engine's amd64/arm64) as a shipped arch, or None."""
    return MACHINES.get(machine.strip().lower())


def helper_path(arch: str, root: Path = ROOT) -> Path:
    """Where the helper for `arch` is shipped under the package root `root`: alone in its
    directory, which a warm container bind-mounts."""
    return root.joinpath(*WARM.relative_to(ROOT).parts, "bin", f"linux-{arch}", HELPER_NAME)


def zig() -> list[str] | None:
    """The command of zig's C compiler from the `ziglang` wheel, when it is installed."""
    if importlib.util.find_spec("ziglang") is None:
        return None
    return [sys.executable, "-m", "ziglang", "cc"]


def build_helper(arch: str, target: Path, compiler: list[str] | None = None) -> str:
    """Build the helper for `arch` into `target` (a temporary name first, then renamed, so another
    process never runs half a binary); "" when done, else why not in one line. `compiler` is zig's
    by default; a native `cc` may build only this machine's arch (the caller decides)."""
    import subprocess
    import tempfile

    command = zig() if compiler is None else compiler
    if command is None:
        return "ziglang is not installed (pip install ziglang)"
    cross = ["-target", TARGETS[arch]] if compiler is None else []
    target.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(target.parent, 0o755)  # the sandbox user reads it where it is bind-mounted
    fd, scratch = tempfile.mkstemp(prefix=f".{HELPER_NAME}-", dir=target.parent)
    os.close(fd)
    try:
        done = subprocess.run([*command, *cross, *FLAGS, "-o", scratch, str(HELPER_SOURCE)],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            return f"{' '.join(command[-2:])} failed for linux/{arch}: {last}"
        os.chmod(scratch, 0o755)
        os.replace(scratch, target)
    except (OSError, subprocess.SubprocessError) as err:
        return f"cannot build the warm-call helper for linux/{arch}: {err}"
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)
    return ""


def generate_protos(root: Path = ROOT) -> None:
    """Write the gRPC modules of evaluator.proto under the package root `root` (grpcio-tools)."""
    from grpc_tools import protoc  # type: ignore[import-untyped]

    include = str(Path(protoc.__file__).parent / "_proto")
    relative = PROTO.relative_to(ROOT).as_posix()  # its import name, which the generated code's imports follow
    code = protoc.main(["grpc_tools.protoc", f"-I{ROOT}", f"-I{include}", f"--python_out={root}", f"--grpc_python_out={root}", relative])
    if code != 0:
        raise RuntimeError(f"grpc_tools.protoc failed on {relative} (exit {code})")


def generate(root: Path = ROOT) -> None:
    """Everything the build makes, under the package root `root`; raises with why on a failure."""
    for arch in TARGETS:
        why = build_helper(arch, helper_path(arch, root))
        if why:
            raise RuntimeError(why)
    generate_protos(root)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the directory holding the `orchestrator` package to write into (default: this one's)")
    args = parser.parse_args(argv)
    try:
        generate(args.root)
    except (RuntimeError, ImportError) as err:
        print(f"prebuilt: {err}", file=sys.stderr)
        return 1
    for arch in TARGETS:
        print(f"prebuilt: {helper_path(arch, args.root)}")
    print(f"prebuilt: {', '.join(PROTO_MODULES)} in {PROTO.parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
