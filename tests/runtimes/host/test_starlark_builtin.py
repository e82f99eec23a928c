"""Starlark in-process (functions/kpt_catalog/starlark.py, orchestrator/runtimes/host/kpt_catalog.py,
kpt's StarlarkRun and ConfigMap forms behind `--builtin-catalog`, kustomize's
declared `starlark: {path: ...}`, kpt's language options, comments kept, a script error as one line
naming the script's line, a runaway script killed at the timeout, and the child's confinement.

The packages follow the catalog's Starlark examples (set a namespace, set replicas from a
ConfigMap parameter, fail validation) with their expected results written out here."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from testing.in_process import fnrun_here
from testing.pipeline_helpers import Result, assert_one_line_error, load

STARLARK = "gcr.io/kpt-fn/starlark:unstable"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip())
    return root


def kptfile(image: str = STARLARK, config: str = "fn-config.yaml") -> str:
    return f"""
        apiVersion: kpt.dev/v1
        kind: Kptfile
        metadata:
          name: example
          annotations:
            config.kubernetes.io/local-config: "true"
        pipeline:
          mutators:
            - image: {image}
              configPath: {config}
        """


APP = """
    # the app's settings
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: my-cm # keep this comment
    data:
      some-key: some-value
    """


def starlark_run(source: str, params: str = "") -> str:
    body = textwrap.indent(textwrap.dedent(source).strip() + "\n", "  ")
    return (
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: my-script\n"
        '  annotations:\n    config.kubernetes.io/local-config: "true"\n' + params + "source: |\n" + body
    )


def render(package: Path, *extra: str, env: dict[str, str] | None = None) -> Result:
    result = fnrun_here("render", str(package), "--no-status", *extra, env=env)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_starlark_run_with_kpt_language_options_keeps_comments(tmp_path: Path) -> None:
    """set(), recursion, while and global reassignment (kpt's options); print goes to stderr; the
    edit leaves the file's comments and layout as they were."""
    script = """
        seen = set(["a", "b"])
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)
        i = 0
        while i < 3:
            i += 1
        ns = "prod"
        ns = ns + "-" + str(fib(5))
        print(len(seen), i)
        for r in ctx.resource_list["items"]:
            if r["kind"] == "ConfigMap":
                r["metadata"]["namespace"] = ns
        """
    package = write(tmp_path / "pkg", {"Kptfile": kptfile(), "fn-config.yaml": starlark_run(script), "app.yaml": APP})
    result = render(package, "--builtin-catalog", "--verbose")
    assert result.code == 0, result.stderr
    assert "2 3" in result.stderr
    assert (package / "app.yaml").read_text() == textwrap.dedent(APP).lstrip().replace(
        "  name: my-cm # keep this comment\n", "  name: my-cm # keep this comment\n  namespace: prod-5\n"
    )


def test_configmap_source_with_parameters_through_the_environment_variable(tmp_path: Path) -> None:
    """`fnrun run --image ...starlark -- source=... replicas=5` as the catalog documents it; the
    parameter arrives as ConfigMap data (a string)."""
    package = write(tmp_path / "pkg", {"deploy.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: web
        spec:
          replicas: 3 # scaled by the script
        """})
    source = 'for r in ctx.resource_list["items"]:\n  r["spec"]["replicas"] = int(ctx.resource_list["functionConfig"]["data"]["replicas"])\n'
    result = fnrun_here("run", str(package), "--image", "ghcr.io/kptdev/krm-functions-catalog/starlark:v0.5", "--results-dir", str(tmp_path / "results"),
                   "--", f"source={source}", "replicas=5", env={"FNRUN_BUILTIN_CATALOG": "1"})
    assert result.code == 0, result.stderr
    assert "  replicas: 5 # scaled by the script\n" in (package / "deploy.yaml").read_text()
    assert load(tmp_path / "results" / "results.yaml")["items"][0]["builtin"] is True


def test_validation_failure_is_one_line_with_the_script_line(tmp_path: Path) -> None:
    script = """
        # line 1 is this comment
        for r in ctx.resource_list["items"]:
            if r["kind"] == "ConfigMap":
                fail("configmaps are not allowed here")
        """
    package = write(tmp_path / "pkg", {"Kptfile": kptfile(), "fn-config.yaml": starlark_run(script), "app.yaml": APP})
    before = (package / "app.yaml").read_text()
    result = render(package, "--builtin-catalog")
    assert_one_line_error(result, STARLARK, code=1)
    messages = [line for line in result.stderr.splitlines() if "configmaps are not allowed" in line]
    assert messages and all("my-script.star:4:" in line for line in messages), result.stderr
    assert (package / "app.yaml").read_text() == before


@pytest.mark.parametrize("script, where", [
    ("x = 1\ny = x + \"a\"\n", "my-script.star:2:"),  # a runtime error
    ("x = 1\ny = 1 +* 2\n", "my-script.star:2:"),  # a syntax error
    ("x = 1\n\nprint(undefined_name)\n", "my-script.star:3:"),  # a name that does not exist
    ('load("lib.star", "f")\n', "my-script.star:1:"),  # no load(): no file system
])
def test_script_errors_are_one_line_naming_the_script_line(script: str, where: str, tmp_path: Path) -> None:
    package = write(tmp_path / "pkg", {"Kptfile": kptfile(), "fn-config.yaml": starlark_run(script), "app.yaml": APP})
    result = render(package, "--builtin-catalog")
    assert result.code == 1
    lines = [line for line in result.stderr.splitlines() if where in line]
    assert lines, result.stderr
    assert all(line.count(where) == 1 for line in lines)


def test_runaway_script_is_killed_at_the_timeout(tmp_path: Path) -> None:
    package = write(tmp_path / "pkg", {"Kptfile": kptfile(), "fn-config.yaml": starlark_run("while True:\n    pass\n"), "app.yaml": APP})
    before = (package / "app.yaml").read_text()
    result = render(package, "--builtin-catalog", "--timeout", "2")
    assert_one_line_error(result, "timed out after 2s", code=1)
    assert (package / "app.yaml").read_text() == before


def test_kustomize_declared_starlark_runs_without_a_flag(tmp_path: Path) -> None:
    """`config.kubernetes.io/function: starlark: {path: ...}`: the declaring resource is the
    functionConfig (its fields are the script's parameters); the script must be in the package."""
    package = write(tmp_path / "pkg", {
        "fn.yaml": """
            apiVersion: example.com/v1
            kind: AddTeam
            metadata:
              name: add-team
              annotations:
                config.kubernetes.io/function: |
                  starlark:
                    path: scripts/team.star
            spec:
              team: payments
            """,
        "scripts/team.star": """
            def run(items, team):
                for r in items:
                    r["metadata"].setdefault("labels", {})["team"] = team
            run(ctx.resource_list["items"], ctx.resource_list["functionConfig"]["spec"]["team"])
            """,
        "app.yaml": APP,
    })
    result = fnrun_here("run", str(package))
    assert result.code == 0, result.stderr
    assert load(package / "app.yaml")["metadata"]["labels"] == {"team": "payments"}
    assert "# keep this comment" in (package / "app.yaml").read_text()

    (package / "fn.yaml").write_text((package / "fn.yaml").read_text().replace("scripts/team.star", "../outside.star"))
    (tmp_path / "outside.star").write_text("print(1)\n")
    assert_one_line_error(fnrun_here("run", str(package)), "outside the package", code=2)


@pytest.mark.engine
def test_kpt_starlark_image_without_the_flag_is_a_container(tmp_path: Path) -> None:
    """Without --builtin-catalog the image named is what runs; absent, the error offers the builtin."""
    package = write(tmp_path / "pkg", {"Kptfile": kptfile(), "fn-config.yaml": starlark_run("print(1)\n"), "app.yaml": APP})
    result = render(package, "--image-pull-policy", "never")
    assert_one_line_error(result, STARLARK, "--builtin-catalog", "FNRUN_BUILTIN_CATALOG=1", code=4)  # a missing image: the environment


def test_builtin_child_has_no_network_no_writes_and_a_memory_limit(tmp_path: Path) -> None:
    """The confinement every builtin's child gets (orchestrator/runtimes/host/confine.py)."""
    import subprocess
    import sys

    from orchestrator.runtimes.host.confine import available, confinement

    if not available():
        pytest.skip("this kernel refuses user/network/mount namespaces (documented fallback)")
    probe = textwrap.dedent(f"""
        import socket
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", 9))
            print("connected")
        except OSError as err:
            print("network:", err.strerror)
        try:
            open({str(tmp_path / "written")!r}, "w").write("x")
            print("wrote")
        except OSError as err:
            print("write:", err.strerror)
        try:
            block = bytearray(700 << 20)
            print("allocated")
        except MemoryError:
            print("memory: refused")
        """)
    done = subprocess.run([sys.executable, "-c", probe], preexec_fn=confinement(512 << 20), capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == ["network: Network is unreachable", "write: Read-only file system", "memory: refused"], done
    assert not (tmp_path / "written").exists()
