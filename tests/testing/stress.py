"""Trees of nested kpt packages that mix in-process builtins, container functions and exec
functions, for the stress test and bench/stress_render.py: rendered in parallel, they keep every
kind of child of fnrun (forked builtins, containers, exec processes) alive at once, which is when
a fork inheriting a lock, or a signal arriving mid-step, would show.

`tree` writes one from a seed: a root and the subpackages `sub1`, `sub1/sub3` and `sub2` (the
shape that once hung), plus up to two more siblings; every package has a few resources of its own.
`render` runs fnrun over one under a watchdog (and, if asked, SIGTERM at a moment) and finds what
it left behind: processes carrying a marker in their environment (in any session, so also a child
that called setsid, or one re-parented to init) and containers labelled with its pid.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from orchestrator import procstat

LABEL = "fnrun-test/label:v1"
IDENTITY = "fnrun-test/identity:v1"
SET_LABELS = "fnrun/set-labels:v1"
SET_NAMESPACE = "fnrun/set-namespace:v1"
EXEC_SCRIPT = "#!/bin/sh\nexec cat\n"


def _kptfile(name: str, mutators: list[str], validators: list[str]) -> str:
    text = f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\npipeline:\n"
    if mutators:
        text += "  mutators:\n" + "".join(mutators)
    if validators:
        text += "  validators:\n" + "".join(validators)
    return text


def _step(image: str, config: dict[str, str] | None = None, path: str | None = None) -> str:
    text = f"  - image: {image}\n"
    if path is not None:
        return text + f"    configPath: {path}\n"
    if config:
        text += "    configMap:\n" + "".join(f"      {key}: {value}\n" for key, value in config.items())
    return text


def _resources(rng: random.Random, package: str, count: int) -> dict[str, str]:
    files = {}
    for number in range(count):
        name = f"{package.replace('/', '-') or 'root'}-{number}"
        kind = rng.choice(["ConfigMap", "Service", "Deployment"])
        body = f"# {kind} {name}\napiVersion: {'apps/v1' if kind == 'Deployment' else 'v1'}\nkind: {kind}\nmetadata:\n  name: {name}  # keep\n"
        body += {"ConfigMap": "data:\n  key: value\n", "Service": "spec:\n  ports:\n  - port: 80\n", "Deployment": "spec:\n  replicas: 1\n"}[kind]
        files[f"{package}/{name}.yaml".lstrip("/")] = body
    return files


def tree(root: Path, seed: int, allow_exec: bool = True) -> Path:
    """Write a tree of packages under `root` (see the module's docstring); the same seed gives the
    same tree."""
    rng = random.Random(seed)
    files: dict[str, str] = {}
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: team\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  team: stress\n"
    root_steps = [_step(LABEL, path="team.yaml")]
    if allow_exec:
        root_steps.append(f"  - exec: {root.resolve() / 'fn.sh'}\n")
        files["fn.sh"] = EXEC_SCRIPT
    files["team.yaml"] = config
    files["Kptfile"] = _kptfile("root", root_steps, [_step(IDENTITY)])
    files["sub1/Kptfile"] = _kptfile("sub1", [_step(SET_LABELS, {"tier": "one"}), _step(LABEL, {"sub": "one"})], [])
    files["sub1/sub3/Kptfile"] = _kptfile(
        "sub3", [_step(SET_NAMESPACE, {"namespace": "three"}), _step(LABEL, {"sub": "three"}), _step(IDENTITY)], [])
    files["sub2/Kptfile"] = _kptfile("sub2", [_step(SET_LABELS, {"tier": "two"})], [])
    packages = ["", "sub1", "sub1/sub3", "sub2"]
    for extra in range(rng.randint(0, 2)):
        name = f"sub{4 + extra}"
        steps = rng.sample([_step(SET_LABELS, {"extra": name}), _step(SET_NAMESPACE, {"namespace": name}), _step(LABEL, {"extra": name})], k=rng.randint(1, 3))
        files[f"{name}/Kptfile"] = _kptfile(name, steps, [])
        packages.append(name)
    for package in packages:
        files.update(_resources(rng, package, rng.randint(1, 4)))
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if allow_exec:
        (root / "fn.sh").chmod(0o755)
    return root


def descendants(pid: int) -> list[int]:
    """Every living process whose ancestry leads to `pid` (parents as /proc tells them now)."""
    parents = {child: stat.ppid for child, stat in procstat.processes().items() if procstat.running(stat)}
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        for child, parent in parents.items():
            if parent == current and child not in found:
                found.append(child)
                frontier.append(child)
    return found


def marked(marker: str) -> list[int]:
    """Processes whose environment holds `marker` (a child that left its parent's session and was
    re-parented to init still carries it)."""
    needle = marker.encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    if needle in handle.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                continue
    return found


MARK = "FNRUN_STRESS_MARK"


@dataclass
class Outcome:
    code: int | None  # None: the watchdog killed it
    seconds: float  # from the start, or from the signal when one was sent
    signalled: bool
    stderr: str
    left: list[str] = field(default_factory=list)  # processes and containers it left behind


def render(tree_dir: Path, jobs: int, watchdog: float, mark: str, signal_after: float | None = None,
           stop: Callable[[subprocess.Popen[str]], bool] | None = None, env: dict[str, str] | None = None) -> Outcome:
    """`fnrun render --allow-exec --jobs N` over `tree_dir` (with `env` over the usual switches),
    killed at `watchdog` seconds; with `signal_after`, SIGTERM that many seconds after the start;
    with `stop`, whatever it does to the process (True: it signalled it). Then what it left behind."""
    command = [sys.executable, "-m", "orchestrator", "render", str(tree_dir), "--allow-exec", "--jobs", str(jobs)]
    switches = {"FNRUN_CACHE": "0", "FNRUN_BUILTIN": "1", MARK: mark, "GITHUB_ACTIONS": "", **(env or {})}  # builtins in-process
    if signal_after is not None:
        stop = partial(_sigterm_after, signal_after)
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ, **switches})
    signalled = stop is not None and stop(proc)
    if signalled:
        started = time.monotonic()  # from here on, the time is how long it took to stop
    try:
        _, stderr = proc.communicate(timeout=watchdog)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        code = None
    seconds = time.monotonic() - started
    return Outcome(code, seconds, signalled, stderr, left_behind(proc.pid, f"{MARK}={mark}"))


def _sigterm_after(delay: float, proc: subprocess.Popen[str]) -> bool:
    try:
        proc.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        return True


def left_behind(pid: int, marker: str, settle: float = 15.0) -> list[str]:
    """Processes carrying `marker` and containers labelled with fnrun's `pid` still there after
    `settle` seconds (a child dying with its parent takes a moment to be reaped)."""
    from testing.runtime_fixtures import containers_of  # the engine's client only for who asks this

    deadline = time.monotonic() + settle
    while True:
        processes = [f"process {p}: {_command_line(p)}" for p in marked(marker)]
        containers = [f"container {c['Names'][0].lstrip('/')}" for c in containers_of(pid)]
        if not processes and not containers or time.monotonic() > deadline:
            return processes + containers
        time.sleep(0.2)


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def files(root: Path) -> dict[str, bytes]:
    """Every file's bytes, the tree's own path in them (the exec step's) made neutral, so that
    copies of one tree compare equal."""
    own = str(root.resolve()).encode()
    return {p.relative_to(root).as_posix(): p.read_bytes().replace(own, b"ROOT") for p in sorted(root.rglob("*")) if p.is_file()}


def differences(got: dict[str, bytes], before: dict[str, bytes], after: dict[str, bytes]) -> str:
    """Which files make a package neither as it was nor rendered, for an assertion's message."""
    lines = []
    for path in sorted(set(got) | set(before) | set(after)):
        if path not in got:
            lines.append(f"{path}: missing")
        elif path not in before and path not in after:
            lines.append(f"{path}: appeared")
        elif got[path] not in (before.get(path), after.get(path)):
            lines.append(f"{path}: neither as it was nor rendered: {got[path][-300:]!r}")
        elif before.get(path) != after.get(path):
            lines.append(f"{path}: {'as it was' if got[path] == before.get(path) else 'rendered'}")
    return "\n".join(lines)
