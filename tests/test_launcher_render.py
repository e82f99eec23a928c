"""The launcher's early start for `fnrun render` (orchestrator.launch, orchestrator.render.first_container):
the first container step of a package whose only Kptfile is its root's starts before fnrun is
imported, the render adopts it, the package comes out as without it, and no container is ever left
behind. Each CLI run is a new process whose pid is on its containers' fnrun.pid label. Behaviour
only; the speed is bench/bench_render.py's."""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest

from orchestrator.launch import _early_container
from testing.launching import adopted, launch, said, signalled_at_start, signalled_in_function
from testing.pipeline_helpers import snapshot, write_package
from testing.runtime_fixtures import containers_of

IDENTITY, LABEL, FAIL, SLEEP = "fnrun-test/identity:v1", "fnrun-test/label:v1", "fnrun-test/fail:v1", "fnrun-test/sleep:v1"
NEVER = ("--image-pull-policy", "never")


def kptfile(steps: str, name: str = "app") -> str:
    """A Kptfile whose pipeline holds `steps` (YAML list entries, one per line, under mutators)."""
    return f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\npipeline:\n  mutators:\n" + "".join(f"  {line}\n" for line in steps.splitlines())


def kpt_package(root: Path, steps: str, extra: dict[str, str] | None = None) -> Path:
    return write_package(root, {
        "Kptfile": kptfile(steps),
        "deploy.yaml": "# the web tier\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web  # keep me\nspec:\n  replicas: 2\n",
        "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  k: v\n",
        **(extra or {}),
    })


def contents(root: Path) -> dict[str, bytes]:
    return {path: data for path, (data, _) in snapshot(root).items()}


def rendered_with_and_without_early_start(tmp_path: Path, steps: str, printed: bool) -> list[tuple[object, ...]]:
    """The package, the messages (and with `printed`, what `-o stdout` printed) rendered with the
    early start and without; each time adopted exactly when on, and nothing left behind: no
    container, no warm container's /local staging directory."""
    outcomes = []
    for early in ("1", "0"):
        root = kpt_package(tmp_path / f"pkg{early}", steps)
        done, pid = launch("render", str(root), *NEVER, env={"FNRUN_EARLY_START": early})
        assert done.returncode == 0, done.stderr
        assert adopted(done.stderr) == (early == "1"), done.stderr
        outcome: tuple[object, ...] = (contents(root), said(done.stderr))
        if printed:
            shown, _ = launch("render", str(root), *NEVER, "-o", "stdout", env={"FNRUN_EARLY_START": early})
            assert shown.returncode == 0 and adopted(shown.stderr) == (early == "1"), shown.stderr
            outcome += (shown.stdout,)
        outcomes.append(outcome)
        assert containers_of(pid) == []
        assert not list(Path(tempfile.gettempdir()).glob(f"fnrun-warm-local-{pid}-*")), "a staging directory was left"
    return outcomes


def test_the_render_adopts_the_early_container_and_the_package_is_the_same_without_it(tmp_path: Path, test_images: None) -> None:
    outcomes = rendered_with_and_without_early_start(tmp_path, f"- image: {LABEL}\n  configMap: {{team: web}}\n- image: {IDENTITY}", True)
    assert outcomes[0] == outcomes[1]
    assert b"team: web" in outcomes[0][0]["deploy.yaml"] and b"# keep me" in outcomes[0][0]["deploy.yaml"]


def test_an_image_the_pipeline_calls_again_gets_its_warm_container_early(tmp_path: Path, test_images: None) -> None:
    """The container the warm pool would start for the image (warm.plan), started by the launcher
    and adopted by the pool."""
    steps = f"- image: {LABEL}\n  configMap: {{team: web}}\n- image: {LABEL}\n  configMap: {{tier: front}}"
    outcomes = rendered_with_and_without_early_start(tmp_path, steps, False)
    assert outcomes[0] == outcomes[1]
    assert b"team: web" in outcomes[0][0]["deploy.yaml"] and b"tier: front" in outcomes[0][0]["deploy.yaml"]


@pytest.mark.parametrize(
    "steps, flags, env",
    [
        (f"- image: {LABEL}\n  configMap: {{a: b}}", ("--memory", "256m", "--cpus", "0.5", "--pids-limit", "99", "--tmpfs-size", "32m"), {}),
        (f"- image: {LABEL}\n  configMap: {{a: b}}", ("-e", "TIER=web", "--env", "HOME", "--writable-root", "--keep-capabilities"), {}),
        (f"- image: {LABEL}\n  configMap: {{a: b}}", ("--as-current-user", "--allow-network", "--mounts", "bind"), {}),
        ("- image: label:v1\n  configMap: {a: b}", ("--image-prefix", "fnrun-test"), {}),  # a short name, completed
        ("- image: label:v1\n  configMap: {a: b}", (), {"KPT_IMAGE_PREFIX": "fnrun-test/"}),
        (f"- exec: cat\n- image: {LABEL}\n  configMap: {{a: b}}", ("--allow-exec",), {}),  # the first container step, after an exec step
        (f"- image: {LABEL}\n  configMap: {{a: b}}\n- image: {LABEL}\n  configMap: {{c: d}}", ("--no-warm",), {}),
        (f"- image: {IDENTITY}\n  configMap: {{a: b}}", (), {"FNRUN_CACHE": "1"}),  # a cache with nothing in it cannot hit
    ],
    ids=["limits", "env-root-capabilities", "user-network-bind", "image-prefix", "KPT_IMAGE_PREFIX", "after-exec", "no-warm", "empty-cache"],
)
def test_the_render_adopts_what_the_launcher_starts_for_the_flags_it_reads(
    tmp_path: Path, test_images: None, steps: str, flags: tuple[str, ...], env: dict[str, str],
) -> None:
    """Only an identical create request adopts: each adoption is the launcher's request being the render's own."""
    root = kpt_package(tmp_path / "pkg", steps)
    cache = {"FNRUN_CACHE_DIR": str(tmp_path / "cache")} if env.get("FNRUN_CACHE") == "1" else {}
    done, pid = launch("render", str(root), *NEVER, *flags, env={**env, **cache})
    assert done.returncode == 0, done.stderr
    assert adopted(done.stderr), done.stderr
    assert containers_of(pid) == []


@pytest.mark.parametrize(
    "files, args, why",
    [
        ({"Kptfile": kptfile(f"- image: {FAIL}")}, (), "failing on purpose"),
        ({"Kptfile": kptfile("- image: fnrun-test/no-such-image:v1")}, (), "no-such-image:v1 is not present"),
        ({"Kptfile": kptfile(f"- image: {IDENTITY}\n  colour: red")}, (), "field colour not found"),  # refused before any step runs
        ({"Kptfile": kptfile(f"- image: {IDENTITY}"), "bad.yaml": "a: [\n"}, (), "bad.yaml"),
        ({"Kptfile": kptfile(f"- image: {IDENTITY}")}, ("--results-format", "xml"), "--results-format"),  # the library refuses it
    ],
    ids=["function-fails", "missing-image", "kptfile-refused", "bad-yaml", "bad-flag"],
)
def test_a_failed_render_leaves_no_container(tmp_path: Path, test_images: None, files: dict[str, str], args: tuple[str, ...], why: str) -> None:
    root = write_package(tmp_path / "pkg", {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n", **files})
    before = snapshot(root)
    done, pid = launch("render", str(root), *NEVER, "--no-status", *args)
    assert done.returncode != 0
    assert why in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "fnrun launcher:" in done.stderr, done.stderr  # it was tried (a missing image fails at its create)
    assert snapshot(root) == before
    assert containers_of(pid) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("when", [0.05, 0.3])
def test_a_signal_during_start_up_leaves_no_container(tmp_path: Path, test_images: None, signum: int, when: float) -> None:
    """The signal lands while fnrun imports itself (the container being created or started) or just after."""
    root = kpt_package(tmp_path / "pkg", f"- image: {SLEEP}\n  configMap: {{seconds: '30'}}")
    proc, stderr = signalled_at_start(["render", str(root)], signum, when)
    assert proc.returncode != 0, stderr  # (a signal inside the interpreter's own start-up may still print a traceback)
    assert containers_of(proc.pid) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_adopted_container_runs_leaves_no_container(tmp_path: Path, test_images: None, signum: int) -> None:
    root = kpt_package(tmp_path / "pkg", f"- image: {SLEEP}\n  configMap: {{seconds: '60'}}")
    before = snapshot(root)
    proc, stderr = signalled_in_function(["render", str(root), "--no-status"], "sleep: sleeping", signum)  # once the function has its input
    assert proc.returncode == (143 if signum == signal.SIGTERM else 130), stderr
    assert "interrupted" in stderr and "Traceback" not in stderr, stderr
    assert snapshot(root) == before
    assert containers_of(proc.pid) == []


PLAIN = f"- image: {IDENTITY}"


@pytest.mark.parametrize(
    "files, args, env",
    [
        ({"sub/Kptfile": kptfile(PLAIN, "sub")}, (), {}),  # a subpackage's step runs first: the whole walk would say which
        ({"a/b/c/Kptfile": kptfile(PLAIN, "c")}, (), {}),
        ({"Kptfile": kptfile(f"{PLAIN}\n  when: 'true'")}, (), {}),  # the step may be skipped
        ({"Kptfile": kptfile(f"- image: {IDENTITY.split(':')[0]}\n  tag: ~1.0")}, (), {}),  # only the engine's tags resolve it
        ({"Kptfile": kptfile("- exec: ./fn")}, ("--allow-exec",), {}),  # no container at all
        ({"Kptfile": kptfile(PLAIN) + "---\n" + kptfile(PLAIN, "again")}, (), {}),  # not one document
        ({"Kptfile": kptfile(PLAIN).replace("kpt.dev/v1", "kpt.dev/v1alpha1")}, (), {}),
        ({"Kptfile": kptfile(f"{PLAIN}\n  exec: ./fn")}, (), {}),  # refused by the render
        ({"Kptfile": kptfile(PLAIN) + "  [unclosed\n"}, (), {}),  # not YAML
        ({"Kptfile": kptfile(PLAIN), "app/cm.yaml": ""}, ("--shard", "1/2"), {}),
        ({"Kptfile": kptfile(PLAIN)}, ("--mounts", "upload"), {}),  # /local is copied in
        ({"Kptfile": kptfile(PLAIN)}, (), {"FNRUN_MOUNTS": "upload"}),
        ({"Kptfile": kptfile("- image: fnrun/set-labels:v1")}, (), {"FNRUN_BUILTIN": "1"}),  # may run in-process
        ({"Kptfile": kptfile(PLAIN)}, ("--builtin-catalog",), {}),
        ({"Kptfile": kptfile(PLAIN)}, ("--image-pull-policy", "always"), {}),
        ({"Kptfile": kptfile(PLAIN)}, ("--", "x=y"), {}),
        ({"Kptfile": kptfile(PLAIN)}, (), {"FNRUN_EARLY_START": "0"}),
        ({"Kptfile": kptfile(PLAIN)}, (), {"DOCKER_HOST": "tcp://127.0.0.1:2375"}),
        ({"Kptfile": kptfile(PLAIN), "fnrun.lock": "apiVersion: fnrun.dev/v1\nkind: ImageLock\nimages: []\n"}, (), {}),
        ({"Kptfile": None, "sub/Kptfile": kptfile(PLAIN, "sub")}, (), {}),  # a directory of packages
    ],
)
def test_what_the_launcher_leaves_to_the_render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str | None],
                                               args: tuple[str, ...], env: dict[str, str]) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    written = {"Kptfile": kptfile(PLAIN), **files}  # None: no such file
    root = write_package(tmp_path / "pkg", {rel: text for rel, text in written.items() if text is not None})
    (tmp_path / ".git").mkdir()  # a lock above the package's own directory is not looked for
    assert _early_container(["render", str(root), *args]) is None


def test_what_the_launcher_starts_early_for_render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    for name in ("DOCKER_HOST", "KPT_IMAGE_PREFIX", "FNRUN_MOUNTS", "FNRUN_WARM", "FNRUN_BUILTIN_CATALOG"):
        monkeypatch.delenv(name, raising=False)
    root = kpt_package(tmp_path / "pkg", f"- exec: ./fn\n- image: {LABEL}\n  configMap: {{a: b}}\n- image: {IDENTITY}",
                       {".hidden/Kptfile": kptfile(PLAIN)})  # a hidden directory is no subpackage: the reader does not enter it
    early = _early_container(["render", str(root), "--allow-network", "-e", "A=1", "--allow-exec"])
    assert early is not None
    body = early.body
    assert body["Image"] == LABEL and "A=1" in body["Env"] and body["User"] == "65534:65534"
    assert body["HostConfig"]["NetworkMode"] == "none"  # a Kptfile step declares no network of its own
    assert body["HostConfig"]["Mounts"] == [{"Target": "/local", "Source": str(root.resolve()), "Type": "bind", "ReadOnly": True}]
    monkeypatch.chdir(tmp_path)
    relative = _early_container(["render", "pkg"])
    assert relative is not None and relative.body["HostConfig"]["Mounts"][0]["Source"] == str(root.resolve())
    short = kpt_package(tmp_path / "short", "- image: set-labels:v0.1")  # kpt's catalog, by default
    by_default = _early_container(["render", str(short)])
    assert by_default is not None and by_default.body["Image"] == "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1"


def test_a_kptfile_that_is_no_regular_file_is_not_waited_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A FIFO named Kptfile would block a reader forever; the launcher leaves it to the render, which refuses it."""
    monkeypatch.setenv("FNRUN_CACHE", "0")
    root = tmp_path / "pkg"
    root.mkdir()
    os.mkfifo(root / "Kptfile")
    assert _early_container(["render", str(root)]) is None


def test_a_package_the_sandbox_user_cannot_read_is_copied_in_not_started_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    root = kpt_package(tmp_path / "pkg", PLAIN)
    assert _early_container(["render", str(root)]) is not None
    root.chmod(0o700)
    assert _early_container(["render", str(root)]) is None
    assert _early_container(["render", str(root), "--as-current-user"]) is not None
