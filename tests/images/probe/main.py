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
  functionConfig.data.envs (comma-separated); "<unset>" when not set."""

from __future__ import annotations

import os
import resource
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
    }
    wanted = ["LOG_TO_STDERR", "STRUCTURED_RESULTS"]
    wanted += [n.strip() for n in str(config(resource_list).get("envs") or "").split(",")]
    for name in filter(None, wanted):
        data[f"env.{name}"] = os.environ.get(name, "<unset>")
    resource_list["items"] = list(resource_list.get("items") or []) + [{
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sandbox-probe"},
        "data": data,
    }]
    return resource_list


run(probe)
