"""sdkprobe: what a function written with fnrun's SDK sees of its process and container.

Adds a ConfigMap `sdk-probe` whose data holds:
- env.NAME for each NAME in functionConfig data.envs (comma-separated), "<unset>" when unset;
- tmpListing, shmListing: /tmp and /dev/shm, sorted, comma-joined;
- strays: processes a probe left behind ("sdkprobe-background" in their argv);
- moduleState: how many calls this process's copy of the SDK has counted (1: it is fresh);
- argv: sys.argv after the first entry, comma-joined; main: the __main__ module's file name;
- dumpable: prctl(PR_GET_DUMPABLE); stdoutSeekable: whether stdout can seek;
- readableOthers: how many other processes' environments it can read (only its own children's);
- parent: the command line of its parent process (not compared: it differs warm and cold);
- nofile, nice, cpus, policy: what it inherited: its open-files limit (SOFT:HARD), nice value,
  CPUs it may run on and scheduling policy.
With data.leave "true" it leaves traces: a file in /tmp and /dev/shm, a background process, an
environment variable and a changed module attribute. data.exit N exits N after writing its
output; data.raise "true" raises an uncaught exception; data.killOthers "true" kills every other
process it can signal before answering; data.tamper "pid1", "zygote" or "both" lowers those
processes' open-files limit, raises their nice value and narrows their CPUs, after answering."""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

from ruamel.yaml.comments import CommentedMap

from functions import sdk


def listing(directory: str) -> str:
    try:
        return ",".join(sorted(os.listdir(directory)))
    except FileNotFoundError:
        return "<missing>"


def others() -> list[int]:
    return [int(pid) for pid in os.listdir("/proc") if pid.isdigit() and int(pid) not in (1, os.getpid())]


def readable(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/environ").read_bytes()
        return True
    except OSError:
        return False


def parent() -> str:
    try:
        return Path(f"/proc/{os.getppid()}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return "<none>"  # PID 1 (a cold container): its parent is outside the container


def strays() -> int:
    count = 0
    for pid in others():
        try:
            count += b"sdkprobe-background" in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
    return count


def probe(resources: sdk.ResourceList) -> None:
    config = resources.function_config
    data = (config.get("data") or {}) if config is not None else {}
    sdk.__dict__["probe_calls"] = sdk.__dict__.get("probe_calls", 0) + 1
    libc = ctypes.CDLL(None)
    seen = {
        "tmpListing": listing("/tmp"),
        "shmListing": listing("/dev/shm"),
        "strays": str(strays()),
        "moduleState": str(sdk.__dict__["probe_calls"]),
        "argv": ",".join(sys.argv[1:]),
        "main": os.path.basename(sys.modules["__main__"].__file__ or ""),
        "dumpable": str(libc.prctl(3, 0, 0, 0, 0)),
        "stdoutSeekable": str(sys.stdout.seekable()).lower(),
        "readableOthers": str(sum(readable(pid) for pid in others())),
        "parent": parent(),
        "nofile": ":".join(str(v) for v in resource.getrlimit(resource.RLIMIT_NOFILE)),
        "nice": str(os.getpriority(os.PRIO_PROCESS, 0)),
        "cpus": ",".join(str(c) for c in sorted(os.sched_getaffinity(0))),
        "policy": str(os.sched_getscheduler(0)),
    }
    for name in filter(None, (n.strip() for n in str(data.get("envs") or "").split(","))):
        seen[f"env.{name}"] = os.environ.get(name, "<unset>")
    if str(data.get("leave")) == "true":
        Path("/tmp/left-by-sdkprobe").write_text("x")
        if os.path.isdir("/dev/shm"):
            Path("/dev/shm/left-by-sdkprobe").write_text("x")
        subprocess.Popen(["python3", "-c", "import time; time.sleep(3600)", "sdkprobe-background"], start_new_session=True)
        os.environ["LEFT_BY_SDKPROBE"] = "1"
    if str(data.get("killOthers")) == "true":
        for pid in others():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
    tamper = str(data.get("tamper") or "")
    if tamper:
        targets = ([1] if tamper in ("pid1", "both") else []) + ([os.getppid()] if tamper in ("zygote", "both") else [])
        for pid in targets:
            resource.prlimit(pid, resource.RLIMIT_NOFILE, (64, 64))
            os.setpriority(os.PRIO_PROCESS, pid, 10)
            os.sched_setaffinity(pid, {min(os.sched_getaffinity(0))})
    if str(data.get("raise")) == "true":
        raise RuntimeError("sdkprobe was asked to fail")
    resources.items.append(sdk.Resource(CommentedMap(apiVersion="v1", kind="ConfigMap",
                                                     metadata=CommentedMap(name="sdk-probe"), data=CommentedMap(seen))))
    if data.get("exit"):
        sys.stdout.write(resources.dump())
        sys.stdout.flush()
        print("sdkprobe: exiting as asked", file=sys.stderr)
        sys.exit(int(data["exit"]))


if __name__ == "__main__":
    sdk.main(probe)
