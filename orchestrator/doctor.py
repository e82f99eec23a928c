"""`fnrun doctor`: what the container engine fnrun would use offers, and what will not hold there.

One screen, each line a finding; a problem carries its fix. The engine is asked /version and /info,
each of the package's images is looked up, and one probe function container is started in the full
sandbox (orchestrator.sandbox_probe): exit 0 only when it really ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from docker.constants import MINIMUM_DOCKER_API_VERSION

from orchestrator.errors import FnrunError
from orchestrator.kinds import Kind
from orchestrator.runtimes.container.remote import engine_host, is_remote, transport, uploads
from orchestrator.settings import HelperPlace, Settings


@dataclass(frozen=True)
class Finding:
    topic: str
    text: str
    fix: str | None = None  # set: this is a problem

    @property
    def problem(self) -> bool:
        return self.fix is not None


def diagnose(images: dict[str, list[str]], oci_runtime: str | None = None, mount_mode: str = "auto",
             package: Path | None = None, builtin_catalog: bool = False, settings: Settings = Settings()) -> list[Finding]:
    """`builtin_catalog`: kpt's catalog functions run in-process, as `run` and `render` would
    with --builtin-catalog or FNRUN_BUILTIN_CATALOG=1 (the caller decides, with the same rule)."""
    from orchestrator.runtimes.container.runtime import api_client

    host = engine_host()
    try:
        api = api_client(announce=True)
        version, info = api.version(), api.info()
    except FnrunError as err:
        return [Finding("engine", str(err),
                        "start dockerd (or `podman system service --time 0 unix://SOCKET`) and point DOCKER_HOST at it"),
                builtins(), *image_findings(images, package, builtin_catalog, engine=False)]
    except Exception as err:  # noqa: BLE001 - an engine that answers ping but not /info: still a finding
        return [Finding("engine", f"the engine at {host} does not answer /version or /info: {err}", "check the engine's log"),
                builtins(), *image_findings(images, package, builtin_catalog, engine=False)]
    findings = [_engine(host, version), Finding("api", f"{api.api_version} (fnrun needs {MINIMUM_DOCKER_API_VERSION} or later)")]
    findings.append(_rootless(info))
    findings += _runtimes(info, oci_runtime)
    findings += _sandbox(info)
    findings.append(_mounts(host, mount_mode))
    findings.append(_container(oci_runtime, mount_mode))
    findings.append(_warm(oci_runtime, mount_mode, settings) if not findings[-1].problem else
                    Finding("warm", "not tried: no function container runs here (see above)"))
    findings.append(builtins())
    findings += image_findings(images, package, builtin_catalog)
    return findings


def builtins() -> Finding:
    """Whether functions run in-process (fnrun's catalog, --builtin-catalog, Starlark) get their
    confinement here; they run with or without an engine, so this is reported either way."""
    from orchestrator.runtimes.host.confine import available

    if available():
        return Finding("builtins", "confined: builtin functions run with no network and a read-only file system "
                                   "(network and mount namespaces) under the --memory limit")
    return Finding("builtins", "not confined: this kernel refuses the namespaces, so builtin functions keep this "
                               "machine's network and file system (only the --memory limit holds)",
                   "allow unprivileged user namespaces (sysctl user.max_user_namespaces > 0, "
                   "kernel.unprivileged_userns_clone=1) or run as root; --no-builtin runs fnrun's catalog in containers")


def _engine(host: str, version: dict) -> Finding:
    from orchestrator.runtimes.container.runtime import is_podman

    product = "Podman" if is_podman(version) else "Docker Engine"
    where = "remote" if is_remote(host) else "local"
    return Finding("engine", f"{product} {version.get('Version', '?')} at {host} ({where}) over {transport(host)}")


def _rootless(info: dict) -> Finding:
    if any("rootless" in str(o) for o in info.get("SecurityOptions") or []):
        return Finding("rootless", "yes: the engine runs as an unprivileged user (a container's root is not the host's)")
    return Finding("rootless", "no: the engine runs as root (functions still run as user 65534 with no capabilities)")


def _runtimes(info: dict, wanted: str | None) -> list[Finding]:
    offered = sorted(info.get("Runtimes") or {})
    default = info.get("DefaultRuntime") or "?"
    findings = [Finding("runtimes", f"{', '.join(offered) or 'none listed'} (default: {default})")]
    if wanted and wanted not in offered:
        findings.append(Finding("runtimes", f"--runtime/FNRUN_RUNTIME {wanted!r} is not offered by this engine",
                                f"register it with the engine (dockerd --add-runtime {wanted}=PATH) or pick one of: {', '.join(offered)}"))
    return findings


def _sandbox(info: dict) -> list[Finding]:
    findings = []
    limits = {"MemoryLimit": "--memory", "PidsLimit": "--pids-limit", "CpuCfsQuota": "--cpus"}
    for key, flag in limits.items():
        if info.get(key) is False:
            findings.append(Finding("sandbox", f"{flag} will not hold: the engine has no {key} support",
                                    "enable the cgroup controller for it in the kernel (and restart the engine)"))
    if not any("seccomp" in str(o) for o in info.get("SecurityOptions") or []):
        findings.append(Finding("sandbox", "no seccomp filter: functions can make any system call",
                                "use an engine built with seccomp, or --runtime runsc where gVisor is registered"))
    if not findings:
        findings.append(Finding("sandbox", "memory, pids and CPU limits, seccomp, no network, read-only root: all hold"))
    return findings


def _container(oci_runtime: str | None, mount_mode: str) -> Finding:
    """A real function container, started in the full sandbox: the one check that proves a run works."""
    from orchestrator.runtimes.container.start_failures import explain
    from orchestrator.sandbox_probe import probe

    ran, what, fix = probe(oci_runtime, mount_mode)
    if ran:
        return Finding("container", what)
    known = explain(what)  # the engine's own words, passed through
    return Finding("container", f"no function container can run here: {what}",
                   fix or (known.fix if known else "see the engine's log; `fnrun run` will fail the same way"))


def _warm(oci_runtime: str | None, mount_mode: str, settings: Settings) -> Finding:
    """Whether an image called more than once can serve its calls from one warm container here."""
    from orchestrator.sandbox_probe import warm_probe

    fix = "runs still work, one container per call"
    off = "--no-warm (FNRUN_WARM=0) turns warm calls off"
    mismatch = _helper_arch(settings.helper)
    if mismatch:
        return Finding("warm", mismatch, f"{fix}; set FNRUN_WARM_HELPER to a fnrun-warm built for the engine's architecture; {off}")
    works, text = warm_probe(oci_runtime, mount_mode, settings)
    if works:
        return Finding("warm", text)
    if "helper" in text:
        fix += "; install fnrun from its wheel (it ships the warm-call helper), or `pip install ziglang` for fnrun to build it"
    return Finding("warm", text, f"{fix}; {off}")


def _helper_arch(place: HelperPlace) -> str:
    """Why the warm-call helper fnrun picks cannot run on the engine, when the engine (asked, as
    a run does not ask a local one) reports another architecture; else ""."""
    from orchestrator.runtimes.container.runtime import api_client
    from orchestrator.runtimes.container.warm import helper

    if helper.user_helper(place) is not None:  # a helper the user named: its architecture is theirs to choose
        return ""
    chosen, _ = helper.engine_arch()
    reported, _ = helper.asked(api_client())
    if chosen is None or reported is None or chosen == reported:
        return ""
    return f"off: the engine runs linux/{reported}, and fnrun takes a local engine for this machine's linux/{chosen}"


def _mounts(host: str, mode: str) -> Finding:
    how = f"--mounts {mode}" if mode != "auto" else f"auto: the engine is {'remote' if is_remote(host) else 'local'}"
    if uploads(mode, host):
        return Finding("mounts", f"upload ({how}): /local and --mount sources are copied in read-only; writable mounts are refused")
    if is_remote(host):
        return Finding("mounts", f"bind ({how}): /local and --mount name paths on the engine's machine, not this one",
                       "drop --mounts bind (FNRUN_MOUNTS) to upload them, or keep the package at the same path there")
    return Finding("mounts", f"bind ({how}): /local and --mount sources are bind-mounted read-only from this machine")


def image_findings(images: dict[str, list[str]], package: Path | None = None, builtin_catalog: bool = False,
                   engine: bool = True) -> list[Finding]:
    """Each image a run or render would start (the inventory: image -> declaring files): present,
    or served by fnrun's own code, and, where a fnrun.lock governs, the content it locks. With no
    engine (`engine` False) only what runs without one is ok."""
    from orchestrator.lock.pinning import governing

    lock = governing(package) if images else None
    return [_image(image, files, lock, builtin_catalog, engine) for image, files in images.items()]


def _image(image: str, files: list[str], lock, builtin_catalog: bool, engine: bool) -> Finding:
    from orchestrator.runtimes import catalog_module
    from orchestrator.runtimes.container.imagestore import identity
    from orchestrator.settings import BUILTIN_CATALOG

    declared = f"declared in {files[0]}" + (f" and {len(files) - 1} more" if len(files) > 1 else "")
    if lock is not None:
        problem = _against_lock(image, files, lock)
        if problem is not None:
            return problem
    kpt_builtin = catalog_module(image, kpt_catalog=False) is None and catalog_module(image, kpt_catalog=True) is not None
    if kpt_builtin and builtin_catalog:
        return Finding("image", f"{image}: kpt's catalog function, run in-process (--builtin-catalog) ({declared})")
    if engine and identity(image) is not None:
        return Finding("image", f"{image} present")
    if catalog_module(image, kpt_catalog=False) is not None:
        return Finding("image", f"{image} not present; fnrun runs its own code for it in-process ({declared})")
    pull = f"`docker pull {image}` (fnrun pulls it on the first run under --image-pull-policy ifNotPresent)"
    if kpt_builtin:
        return Finding("image", f"{image} is not present ({declared}); fnrun can run this kpt catalog function in-process",
                       f"pass --builtin-catalog to run and render (or set {BUILTIN_CATALOG}=1), or {pull}")
    return Finding("image", f"{image} is not present ({declared})", pull)


def _against_lock(image: str, files: list[str], lock) -> Finding | None:
    """The lock's refusal of this image as a finding (None: a locked run would accept it)."""
    from orchestrator.select.functions import FunctionSpec

    try:
        lock.check([FunctionSpec(kind=Kind.CONTAINER, image=image, declared_in=files[0])], "ifNotPresent", Path.cwd())
    except FnrunError as err:
        return Finding("image", err.what, err.fix or "run `fnrun lock`, or pass --no-lock")
    return None


def render(findings: list[Finding]) -> str:
    lines = []
    for finding in findings:
        lines.append(f"{'FAIL' if finding.problem else 'ok':<5}{finding.topic:<10}{finding.text}")
        if finding.fix:
            lines.append(f"{'':<15}fix: {finding.fix}")
    problems = sum(f.problem for f in findings)
    lines.append(f"{problems} problem{'s' if problems != 1 else ''}" if problems else "no problems")
    return "\n".join(lines) + "\n"
