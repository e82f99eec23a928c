"""probe: reports the sandbox it runs in, so tests can check it from inside the container.

Outputs its input items plus a ConfigMap `sandbox-probe` whose data (all strings) holds:
- uid, gid, noNewPrivs, capEff, capBnd, seccomp (from /proc/self/status);
- interfaces: network interfaces, sorted, comma-joined;
- rootWritable, tmpWritable, localWritable: "true" when a file could be created there;
- rootReadOnly ("true" when / is mounted ro), tmpFsType;
- localListing: /local, sorted, comma-joined ("<missing>" when absent);
- nofile, nproc: the soft and hard rlimits, "SOFT:HARD" ("unlimited" for none);
- memoryLimit, pidsLimit, cpuMax ("QUOTA PERIOD") from cgroup v1 or v2 ("<unknown>" if unread);
- env.LOG_TO_STDERR, env.STRUCTURED_RESULTS and env.NAME for each NAME in
  functionConfig.data.envs (comma-separated); "<unset>" when not set;
- tmpListing, shmListing: /tmp and /dev/shm, as localListing;
- strays: how many processes left by a probe ("probe-background") are running;
- network: what connecting to 192.0.2.1:53 (TEST-NET, so never a real host) gave;
- rootWrite, localWrite: what creating a file in / and /local gave ("ok" or the error name).
With functionConfig.data.leave "true" it also leaves traces for the next function in the same
container to find: files in /tmp and /dev/shm, and a background process holding its stdout."""

from __future__ import annotations

import errno
import os
import resource
import socket
import subprocess
import tempfile
from pathlib import Path

from krm import ResourceList, config, run

UNKNOWN = "<unknown>"


def status_fields() -> dict[str, str]:
    """The lines of /proc/self/status, as a dict."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def interfaces() -> list[str]:
    """Network interfaces: /sys/class/net, or /proc/net/dev where /sys is not mounted."""
    try:
        return sorted(os.listdir("/sys/class/net"))
    except OSError:
        lines = Path("/proc/net/dev").read_text().splitlines()[2:]
        return sorted(line.split(":", 1)[0].strip() for line in lines)


def writable(directory: str) -> str:
    """Whether a file can be created in directory (and it is removed again)."""
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".probe-"):
            return "true"
    except OSError:
        return "false"


def mount(point: str) -> tuple[str, list[str]]:
    """(filesystem type, options) of the mount at point, the last one listed winning."""
    found = ("", [])
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[1] == point:
            found = (fields[2], fields[3].split(","))
    return found


def first_readable(*paths: str) -> str:
    """The content of the first readable cgroup file among paths."""
    for path in paths:
        try:
            return " ".join(Path(path).read_text().split())
        except OSError:
            continue
    return UNKNOWN


def cpu_max(cgroup: str) -> str:
    """The CPU limit as cgroup v2 writes it, "QUOTA PERIOD" ("-1 PERIOD" is none on v1)."""
    v2 = first_readable(f"{cgroup}/cpu.max")
    if v2 != UNKNOWN:
        return v2
    quota = first_readable(f"{cgroup}/cpu/cpu.cfs_quota_us")
    if quota == UNKNOWN:
        return quota
    return f"{quota} {first_readable(f'{cgroup}/cpu/cpu.cfs_period_us')}"


def rlimit(kind: int) -> str:
    """An rlimit as `--ulimit` writes it, SOFT:HARD."""
    return ":".join("unlimited" if v == resource.RLIM_INFINITY else str(v) for v in resource.getrlimit(kind))


def listing(directory: str) -> str:
    """The sorted names in directory, comma-joined."""
    try:
        return ",".join(sorted(os.listdir(directory)))
    except FileNotFoundError:
        return "<missing>"
    except OSError as exc:
        return f"<{exc.strerror}>"


def strays() -> int:
    """Processes a probe left in the background (they carry "probe-background" in their argv)."""
    count = 0
    for pid in os.listdir("/proc"):
        try:
            count += pid.isdigit() and b"probe-background" in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
    return count


def attempt(action) -> str:
    """"ok", or the name of the error the action raised."""
    try:
        action()
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, type(exc).__name__)


def connect() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        sock.connect(("192.0.2.1", 53))


def create(path: str) -> None:
    with open(path, "x"):
        pass
    os.unlink(path)


def leave_traces() -> None:
    Path("/tmp/left-by-probe").write_text("x")
    os.makedirs("/tmp/left-dir/deeper", exist_ok=True)
    os.chmod("/tmp/left-dir", 0o500)
    if os.path.isdir("/dev/shm"):
        Path("/dev/shm/left-by-probe").write_text("x")
    subprocess.Popen(["python3", "-c", "import time; time.sleep(3600)", "probe-background"], start_new_session=True)


def probe(resource_list: ResourceList) -> ResourceList:
    status = status_fields()
    v1 = "/sys/fs/cgroup"
    data = {
        "uid": str(os.getuid()),
        "gid": str(os.getgid()),
        "noNewPrivs": status.get("NoNewPrivs", UNKNOWN),
        "capEff": status.get("CapEff", UNKNOWN),
        "capBnd": status.get("CapBnd", UNKNOWN),
        "seccomp": status.get("Seccomp", UNKNOWN),
        "interfaces": ",".join(interfaces()),
        "rootWritable": writable("/"),
        "rootReadOnly": str("ro" in mount("/")[1]).lower(),
        "tmpWritable": writable("/tmp"),
        "tmpFsType": mount("/tmp")[0] or UNKNOWN,
        "localWritable": writable("/local") if os.path.isdir("/local") else "false",
        "localListing": listing("/local"),
        "nofile": rlimit(resource.RLIMIT_NOFILE),
        "nproc": rlimit(resource.RLIMIT_NPROC),
        "memoryLimit": first_readable(f"{v1}/memory.max", f"{v1}/memory/memory.limit_in_bytes"),
        "pidsLimit": first_readable(f"{v1}/pids.max", f"{v1}/pids/pids.max"),
        "cpuMax": cpu_max(v1),
        "tmpListing": listing("/tmp"),
        "shmListing": listing("/dev/shm"),
        "strays": str(strays()),
        "network": attempt(connect),
        "rootWrite": attempt(lambda: create("/probe-write")),
        "localWrite": attempt(lambda: create("/local/probe-write")) if os.path.isdir("/local") else "<missing>",
    }
    wanted = ["LOG_TO_STDERR", "STRUCTURED_RESULTS"]
    wanted += [n.strip() for n in str(config(resource_list).get("envs") or "").split(",")]
    for name in filter(None, wanted):
        data[f"env.{name}"] = os.environ.get(name, "<unset>")
    if str(config(resource_list).get("leave") or "") == "true":
        leave_traces()
    resource_list["items"] = list(resource_list.get("items") or []) + [{
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sandbox-probe"},
        "data": data,
    }]
    return resource_list


run(probe)
