"""`fnrun doctor` through the real CLI: the machine's engine, a missing image, no engine at all."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from testing.pipeline_helpers import REPO, fnrun, function_config, write_package

pytestmark = pytest.mark.engine  # doctor asks the engine (DOCKER_HOST="" names the machine's own)


def lines(stdout: str) -> dict[str, list[str]]:
    """The findings by topic, each as 'ok ...' or 'FAIL ...' text plus its fix line."""
    found: dict[str, list[str]] = {}
    topic = ""
    for line in stdout.splitlines():
        if line.startswith(("ok ", "FAIL ")):
            topic = line.split()[1]
            found.setdefault(topic, []).append(line)
        elif line.strip().startswith("fix:"):
            found[topic][-1] += " || " + line.strip()
    return found


def test_doctor_on_the_machines_engine_with_a_catalog_sample(tmp_path: Path) -> None:
    shutil.copytree(REPO / "samples" / "set-labels", tmp_path / "pkg")
    result = fnrun("doctor", str(tmp_path / "pkg"), env={"DOCKER_HOST": ""})
    assert result.code == 0, result
    found = lines(result.stdout)
    assert found["engine"][0].startswith("ok") and "unix:///var/run/docker.sock (local) over unix" in found["engine"][0]
    assert found["mounts"][0].startswith("ok   mounts    bind (auto: the engine is local)")
    assert found["api"][0].startswith("ok   api       1.")
    assert "rootless" in found and "runc" in found["runtimes"][0]
    assert found["image"] == ["ok   image     fnrun/set-labels:v1 present"]
    assert found["builtins"][0].startswith("ok   builtins  confined: builtin functions run with no network")
    assert found["warm"][0].startswith("ok   warm      on: two calls ran in one warm container")
    assert result.stdout.endswith("no problems\n")


def test_a_missing_image_and_an_unknown_runtime_are_problems_with_fixes(tmp_path: Path) -> None:
    write_package(tmp_path, {"p/fn.yaml": function_config("fnrun-test/does-not-exist:v9")})
    result = fnrun("doctor", str(tmp_path), "--runtime", "kata", env={"DOCKER_HOST": ""})
    assert result.code == 1, result
    found = lines(result.stdout)
    assert found["image"] == ["FAIL image     fnrun-test/does-not-exist:v9 is not present (declared in p/fn.yaml) || fix: `docker pull fnrun-test/does-not-exist:v9`"
                              " (fnrun pulls it on the first run under --image-pull-policy ifNotPresent)"]
    assert any("'kata' is not offered" in f and "fix: register it" in f and "runc" in f for f in found["runtimes"])
    assert found["container"][0].startswith("FAIL container no function container can run here")  # the probe, under kata
    assert result.stdout.endswith("3 problems\n")


def test_no_engine_is_one_problem_naming_where_it_looked(tmp_path: Path) -> None:
    socket = tmp_path / "nothing.sock"
    result = fnrun("doctor", env={"DOCKER_HOST": f"unix://{socket}"})
    assert result.code == 1, result
    assert "Traceback" not in result.stderr
    found = lines(result.stdout)
    assert list(found) == ["engine", "builtins"]  # builtins run without an engine: still reported
    assert f"unix://{socket}" in found["engine"][0] and "fix: start dockerd" in found["engine"][0]


def test_builtins_without_namespaces_are_a_problem_with_a_fix(monkeypatch) -> None:
    """A kernel that refuses unprivileged namespaces cannot be made on a shared machine without
    changing it for everyone: the one fault here that is simulated."""
    from orchestrator import doctor
    from orchestrator.runtimes.host import confine
    monkeypatch.setattr(confine, "available", lambda: False)
    finding = doctor.builtins()
    assert finding.problem and "not confined" in finding.text and "--no-builtin" in (finding.fix or "")
    monkeypatch.undo()
    assert not doctor.builtins().problem  # this machine gives them (root or unprivileged user namespaces)


def test_doctor_looks_for_every_image_the_kptfiles_name(tmp_path: Path) -> None:
    """What `render` would start counts as much as what `run` would: Kptfile pipelines at any depth."""
    kptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\npipeline:\n  mutators:\n  - image: {image}\n"
    write_package(tmp_path, {
        "Kptfile": kptfile.format(name="app", image="fnrun-test/identity:v1"),
        "db/Kptfile": kptfile.format(name="db", image="fnrun-test/not-built-anywhere:v3"),
        "db/cache/Kptfile": kptfile.format(name="cache", image="fnrun-test/not-built-anywhere:v3"),
    })
    result = fnrun("doctor", str(tmp_path), env={"DOCKER_HOST": ""})
    assert result.code == 1, result
    assert lines(result.stdout)["image"] == [
        "ok   image     fnrun-test/identity:v1 present",
        "FAIL image     fnrun-test/not-built-anywhere:v3 is not present (declared in db/Kptfile and 1 more) || fix: "
        "`docker pull fnrun-test/not-built-anywhere:v3` (fnrun pulls it on the first run under --image-pull-policy ifNotPresent)",
    ]


def test_doctor_reports_what_a_locked_run_would_refuse(tmp_path: Path) -> None:
    write_package(tmp_path, {"a/fn.yaml": function_config("fnrun-test/identity:v1")})
    assert fnrun("lock", str(tmp_path)).code == 0
    write_package(tmp_path, {"b/fn.yaml": function_config("fnrun-test/label:v1")})
    result = fnrun("doctor", str(tmp_path), env={"DOCKER_HOST": ""})
    assert result.code == 1, result
    found = lines(result.stdout)["image"]
    assert found[0] == "ok   image     fnrun-test/identity:v1 present"
    assert found[1].startswith("FAIL image     ") and "b/fn.yaml: image fnrun-test/label:v1 is not in" in found[1]
    assert found[1].endswith("|| fix: run `fnrun lock` to add it, or pass --no-lock")


KPT_PIPELINE = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
pipeline:
  mutators:
  - image: set-namespace:v0.4
    configMap:
      namespace: prod
  - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2
    configMap:
      team: web
"""
KPT_IMAGES = ("ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2", "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4")  # as listed


def test_a_kpt_package_learns_that_fnrun_runs_its_catalog_itself(tmp_path: Path) -> None:
    """Without the flag each absent catalog image says which flag or variable runs it in-process;
    with --builtin-catalog or FNRUN_BUILTIN_CATALOG=1 (render's settings) each is ok; and a
    machine with no engine still hears how the package's functions would run."""
    write_package(tmp_path, {"Kptfile": KPT_PIPELINE})
    plain = fnrun("doctor", str(tmp_path), env={"DOCKER_HOST": ""})
    assert plain.code == 1, plain
    for image, finding in zip(KPT_IMAGES, lines(plain.stdout)["image"]):
        assert finding.startswith(f"FAIL image     {image} is not present (declared in Kptfile); fnrun can run this kpt catalog function in-process")
        assert "fix: pass --builtin-catalog to run and render (or set FNRUN_BUILTIN_CATALOG=1)" in finding
    expected = [f"ok   image     {image}: kpt's catalog function, run in-process (--builtin-catalog) (declared in Kptfile)" for image in KPT_IMAGES]
    flagged = fnrun("doctor", str(tmp_path), "--builtin-catalog", env={"DOCKER_HOST": ""})
    assert flagged.code == 0, flagged
    assert lines(flagged.stdout)["image"] == expected
    by_variable = fnrun("doctor", str(tmp_path), env={"DOCKER_HOST": "", "FNRUN_BUILTIN_CATALOG": "1"})
    assert lines(by_variable.stdout)["image"] == expected
    no_engine = fnrun("doctor", str(tmp_path), "--builtin-catalog", env={"DOCKER_HOST": f"unix://{tmp_path / 'nothing.sock'}"})
    assert no_engine.code == 1 and "Traceback" not in no_engine.stderr
    assert list(lines(no_engine.stdout)) == ["engine", "builtins", "image"]
    assert lines(no_engine.stdout)["image"] == expected
