"""`fnrun render` against kpt itself (the oracle: same packages, same local images, results
compared as data), and kpt 1.0 points beta.56 lacks (tag constraints, `when`, status, bfs)
against kpt's render semantics (docs/guides/kpt-users.md and kpt's own e2e cases)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import docker
import pytest
from ruamel.yaml import YAML

from testing.pipeline_helpers import as_data, assert_one_line_error, fnrun, snapshot, write_package

KPT = shutil.which("kpt")
LABEL, GENERATE, DELETE, FAIL, IDENTITY = (f"fnrun-test/{n}:v1" for n in ("label", "generate", "delete", "fail", "identity"))


def kptfile(name: str, mutators: str = "", validators: str = "", annotations: str = "") -> str:
    text = f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n"
    if annotations:
        text += "  annotations:\n" + "".join(f"    {line}\n" for line in annotations.splitlines())
    if mutators or validators:
        text += "pipeline:\n"
        if mutators:
            text += "  mutators:\n" + "".join(f"  {line}\n" for line in mutators.strip("\n").splitlines())
        if validators:
            text += "  validators:\n" + "".join(f"  {line}\n" for line in validators.strip("\n").splitlines())
    return text


def cm(name: str, labels: str = "") -> str:
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"
    if labels:
        text += "  labels:\n" + "".join(f"    {line}\n" for line in labels.splitlines())
    return text + "data:\n  key: value\n"


def deploy(name: str) -> str:
    return f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: 1\n"


def render_both(tmp_path: Path, files: dict[str, str], *flags: str) -> tuple[subprocess.CompletedProcess, object, Path, Path]:
    kpt_dir, fnrun_dir = tmp_path / "kpt" / "pkg", tmp_path / "fnrun" / "pkg"
    write_package(kpt_dir, files)
    write_package(fnrun_dir, files)
    assert KPT is not None
    by_kpt = subprocess.run([KPT, "fn", "render", str(kpt_dir), "--image-pull-policy", "never", *flags], capture_output=True, text=True, timeout=300)
    by_fnrun = fnrun("render", str(fnrun_dir), "--image-pull-policy", "never", "--no-status", "-q", *flags)
    return by_kpt, by_fnrun, kpt_dir, fnrun_dir


ORACLE_CASES = {
    "nested-subpackages": {
        "Kptfile": kptfile("root", f"- image: {LABEL}\n  configMap: {{root: 'yes'}}"),
        "a.yaml": cm("a"),
        "plain-dir/b.yaml": deploy("b"),
        "sub/Kptfile": kptfile("sub", f"- image: {LABEL}\n  configMap: {{sub: 'yes'}}"),
        "sub/c.yaml": cm("c"),
        "sub/deeper/Kptfile": kptfile("deeper", f"- image: {LABEL}\n  configMap: {{deeper: 'yes'}}"),
        "sub/deeper/d.yaml": deploy("d"),
        "sub2/Kptfile": kptfile("sub2"),
        "sub2/e.yaml": cm("e"),
    },
    "selectors-and-exclude": {
        "Kptfile": kptfile("root", f"""- image: {LABEL}
  configMap: {{picked: 'yes'}}
  selectors:
  - kind: Deployment
  - name: named
    apiVersion: v1
  exclude:
  - labels: {{skip: 'true'}}
- image: {LABEL}
  configMap: {{ns: 'yes'}}
  selectors:
  - namespace: prod"""),
        "r.yaml": deploy("web") + "---\n" + deploy("skipped").replace("  name: skipped\n", "  name: skipped\n  labels:\n    skip: 'true'\n")
        + "---\n" + cm("named") + "---\n" + cm("other") + "---\n" + cm("in-prod").replace("  name: in-prod\n", "  name: in-prod\n  namespace: prod\n"),
    },
    "configpath-configmap-generated-files": {
        "Kptfile": kptfile("root", f"- image: {GENERATE}\n  configMap: {{name: made-by-root}}"),
        "a.yaml": cm("a"),
        "sub/Kptfile": kptfile("sub", f"- image: {GENERATE}\n  configPath: fn/gen.yaml"),
        "sub/fn/gen.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gen-config\n  annotations:\n    config.kubernetes.io/local-config: 'true'\ndata:\n  name: made-by-sub\n",
    },
    "deletions-remove-files": {
        "Kptfile": kptfile("root", f"- image: {DELETE}\n  configMap: {{names: 'gone,gone-too'}}"),
        "keep.yaml": cm("kept") + "---\n" + cm("gone"),
        "sub/Kptfile": kptfile("sub"),
        "sub/all-gone.yaml": cm("gone-too"),
    },
}


@pytest.mark.skipif(KPT is None, reason="kpt is not installed")
@pytest.mark.parametrize("case", sorted(ORACLE_CASES))
def test_renders_like_kpt(tmp_path: Path, test_images: None, case: str) -> None:
    by_kpt, by_fnrun, kpt_dir, fnrun_dir = render_both(tmp_path, ORACLE_CASES[case])
    assert by_kpt.returncode == 0, by_kpt.stderr
    assert by_fnrun.code == 0, by_fnrun.stderr
    assert_same_render(ORACLE_CASES[case], fnrun_dir, kpt_dir)


def assert_same_render(files: dict[str, str], fnrun_dir: Path, kpt_dir: Path) -> None:
    """Every file holds the same data, new files included: fnrun's render names and places a new
    resource as kpt does (KIND_NAME.yaml in its config's directory, else the step's package)."""
    assert as_data(fnrun_dir) == as_data(kpt_dir)


@pytest.mark.skipif(KPT is None, reason="kpt is not installed")
def test_a_failing_step_writes_nothing_like_kpt(tmp_path: Path, test_images: None) -> None:
    files = {
        "Kptfile": kptfile("root", f"- image: {LABEL}\n  configMap: {{root: 'yes'}}"),
        "a.yaml": cm("a"),
        "sub/Kptfile": kptfile("sub", f"- image: {FAIL}\n  configMap: {{message: broken}}"),
        "sub/b.yaml": cm("b"),
    }
    by_kpt, by_fnrun, kpt_dir, fnrun_dir = render_both(tmp_path, files)
    assert by_kpt.returncode != 0
    assert_one_line_error(by_fnrun, FAIL, code=1)
    before = {rel: text for rel, text in files.items()}
    assert {p.relative_to(fnrun_dir).as_posix(): p.read_text() for p in fnrun_dir.rglob("*") if p.is_file()} == before
    assert as_data(fnrun_dir) == as_data(kpt_dir)


def test_status_is_recorded_in_the_root_kptfile_only_as_added_lines(tmp_path: Path, test_images: None) -> None:
    root_kptfile = kptfile("root", f"- name: tag-it\n  image: {LABEL}  # keep this comment\n  configMap: {{a: b}}")
    write_package(tmp_path, {"Kptfile": root_kptfile, "a.yaml": cm("a"), "sub/Kptfile": kptfile("sub")})
    result = fnrun("render", str(tmp_path), "-q")
    assert result.code == 0, result.stderr
    text = (tmp_path / "Kptfile").read_text()
    assert "# keep this comment" in text
    data = as_data(tmp_path)
    yaml = YAML(typ="safe", pure=True)
    status = yaml.load(text)["status"]
    assert status["conditions"] == [{"type": "Rendered", "status": "True", "reason": "RenderSuccess"}]
    assert status["renderStatus"]["mutationSteps"] == [{"name": "tag-it", "image": LABEL, "exitCode": 0}]
    assert "status" not in (tmp_path / "sub/Kptfile").read_text()
    assert data["a.yaml"][0]["metadata"]["labels"] == {"a": "b"}


def test_failure_records_render_failed_and_keeps_everything_else(tmp_path: Path, test_images: None) -> None:
    files = {"Kptfile": kptfile("root", f"- image: {LABEL}\n  configMap: {{a: b}}\n- image: {FAIL}"), "a.yaml": cm("a")}
    write_package(tmp_path, files)
    result = fnrun("render", str(tmp_path), "-q")
    assert_one_line_error(result, FAIL, code=1)
    assert (tmp_path / "a.yaml").read_text() == files["a.yaml"]
    status = YAML(typ="safe", pure=True).load((tmp_path / "Kptfile").read_text())["status"]
    assert status["conditions"][0]["status"] == "False" and status["conditions"][0]["reason"] == "RenderFailed"
    assert [s["exitCode"] for s in status["renderStatus"]["mutationSteps"]] == [0, 1]
    assert (tmp_path / "Kptfile").read_text().startswith(files["Kptfile"])


def test_save_on_render_failure_keeps_what_rendered(tmp_path: Path, test_images: None) -> None:
    files = {"Kptfile": kptfile("root", f"- image: {LABEL}\n  configMap: {{a: b}}\n- image: {FAIL}", annotations="kpt.dev/save-on-render-failure: 'true'"), "a.yaml": cm("a")}
    write_package(tmp_path, files)
    assert fnrun("render", str(tmp_path), "-q").code == 1
    assert as_data(tmp_path)["a.yaml"][0]["metadata"]["labels"] == {"a": "b"}


def test_a_validator_that_changes_anything_fails(tmp_path: Path, test_images: None) -> None:
    files = {"Kptfile": kptfile("root", validators=f"- image: {LABEL}\n  configMap: {{a: b}}"), "a.yaml": cm("a")}
    write_package(tmp_path, files)
    result = fnrun("render", str(tmp_path), "-q", "--no-status")
    assert_one_line_error(result, "pipeline.validators[0]", "validators must not", code=1)
    assert snapshot(tmp_path).keys() == set(files)
    assert (tmp_path / "a.yaml").read_text() == files["a.yaml"]
    ok = {"Kptfile": kptfile("root", validators=f"- image: {IDENTITY}"), "a.yaml": cm("a")}
    write_package(tmp_path, ok)
    assert fnrun("render", str(tmp_path), "-q", "--no-status").code == 0


def test_when_skips_a_step_and_says_so(tmp_path: Path, test_images: None) -> None:
    steps = f"""- image: {LABEL}
  configMap: {{has-cm: 'yes'}}
  when: resources.exists(r, r.kind == 'ConfigMap')
- image: {LABEL}
  configMap: {{has-svc: 'yes'}}
  when: resources.exists(r, r.kind == 'Service')"""
    write_package(tmp_path, {"Kptfile": kptfile("root", steps), "a.yaml": cm("a")})
    result = fnrun("render", str(tmp_path), "--no-status")
    assert result.code == 0, result.stderr
    assert "is false" in result.stderr
    assert as_data(tmp_path)["a.yaml"][0]["metadata"]["labels"] == {"has-cm": "yes"}
    write_package(tmp_path, {"Kptfile": kptfile("root", f"- image: {LABEL}\n  when: 'size(resources) +'")})
    assert_one_line_error(fnrun("render", str(tmp_path), "--no-status"), "Kptfile: pipeline.mutators[0]", "not valid CEL", code=2)


def test_when_matches_is_re2(tmp_path: Path, test_images: None) -> None:
    """CEL's matches() reads RE2 (POSIX classes); a bad pattern is one line that says so, not
    RE2's log lines and celpy's "no such overload"."""
    step = f"- image: {LABEL}\n  configMap: {{matched: 'yes'}}\n  when: \"resources.exists(r, r.metadata.name.matches('PATTERN'))\""
    write_package(tmp_path, {"Kptfile": kptfile("root", step.replace("PATTERN", "^[[:alpha:]]$")), "a.yaml": cm("a")})
    result = fnrun("render", str(tmp_path), "--no-status")
    assert result.code == 0, result.stderr
    assert as_data(tmp_path)["a.yaml"][0]["metadata"]["labels"] == {"matched": "yes"}
    write_package(tmp_path, {"Kptfile": kptfile("root", step.replace("PATTERN", "(")), "a.yaml": cm("a")})
    result = fnrun("render", str(tmp_path), "--no-status")
    assert_one_line_error(result, "Kptfile: pipeline.mutators[0]", "invalid regular expression '('", code=2)
    assert result.stderr.count("\n") == 1, result.stderr


@pytest.fixture
def local_tags(test_images: None):
    """Unique catalog-prefixed tags of the test images (removed afterwards; the images stay)."""
    client = docker.from_env()
    name = f"fnrun-render-suite-{os.getpid()}"
    repo = f"ghcr.io/kptdev/krm-functions-catalog/{name}"
    tags = {"1.2.0": IDENTITY, "1.2.5": LABEL, "1.3.0": FAIL, "latest": LABEL}
    for tag, source in tags.items():
        client.images.get(source).tag(repo, tag)
    yield name
    for tag in tags:
        client.images.remove(f"{repo}:{tag}", noprune=True)


def test_short_names_and_tag_constraints_resolve_against_local_tags(tmp_path: Path, local_tags: str) -> None:
    steps = f"- image: {local_tags}\n  tag: '~1.2'\n  configMap: {{picked: constraint}}\n- image: {local_tags}\n  configMap: {{picked2: latest}}"
    write_package(tmp_path, {"Kptfile": kptfile("root", steps), "a.yaml": cm("a")})
    result = fnrun("render", str(tmp_path), "--image-pull-policy", "never", "-q")
    assert result.code == 0, result.stderr
    assert as_data(tmp_path)["a.yaml"][0]["metadata"]["labels"] == {"picked": "constraint", "picked2": "latest"}
    status = YAML(typ="safe", pure=True).load((tmp_path / "Kptfile").read_text())["status"]
    images = [s["image"] for s in status["renderStatus"]["mutationSteps"]]
    prefix = "ghcr.io/kptdev/krm-functions-catalog/"
    assert images == [f"{prefix}{local_tags}:1.2.5", f"{prefix}{local_tags}:latest"]
    write_package(tmp_path, {"Kptfile": kptfile("root", f"- image: {local_tags}\n  tag: '>=2'")})
    assert_one_line_error(fnrun("render", str(tmp_path), "--image-pull-policy", "never"), "no local tag", ">=2", code=2)


def test_hyphen_tag_ranges(tmp_path: Path, local_tags: str) -> None:
    """Masterminds' `A - B` (kpt's basicpipeline-semver): inclusive, a partial B up to its next release."""
    for tag, picked in (("1.1 - 1.2.4", "1.2.0"), ("1.2.0 - 1.2", "1.2.5")):
        write_package(tmp_path, {"Kptfile": kptfile("root", f"- image: {local_tags}\n  tag: '{tag}'\n  configMap: {{picked: range}}"), "a.yaml": cm("a")})
        result = fnrun("render", str(tmp_path), "--image-pull-policy", "never", "-q")
        assert result.code == 0, result.stderr
        status = YAML(typ="safe", pure=True).load((tmp_path / "Kptfile").read_text())["status"]
        assert [s["image"] for s in status["renderStatus"]["mutationSteps"]] == [f"ghcr.io/kptdev/krm-functions-catalog/{local_tags}:{picked}"]


def test_image_prefix_flag_and_environment(tmp_path: Path, test_images: None) -> None:
    write_package(tmp_path, {"Kptfile": kptfile("root", "- image: label:v1\n  configMap: {a: b}"), "a.yaml": cm("a")})
    assert fnrun("render", str(tmp_path), "--image-prefix", "fnrun-test", "-q", "--no-status").code == 0
    assert as_data(tmp_path)["a.yaml"][0]["metadata"]["labels"] == {"a": "b"}
    assert fnrun("render", str(tmp_path), "-q", "--no-status", env={"KPT_IMAGE_PREFIX": "fnrun-test/"}).code == 0


def test_bfs_renders_parents_first(tmp_path: Path, test_images: None) -> None:
    def files(bfs: bool) -> dict[str, str]:
        return {
            "Kptfile": kptfile("root", f"- image: {LABEL}\n  configMap: {{root: 'x'}}", annotations="kpt.dev/bfs-rendering: 'true'" if bfs else ""),
            "sub/Kptfile": kptfile("sub", f"- image: {LABEL}\n  configMap: {{sub: 'x'}}"),
            "sub/a.yaml": cm("a"),
        }
    for bfs, order in ((False, ["sub", "root"]), (True, ["root", "sub"])):
        root = tmp_path / str(bfs)
        write_package(root, files(bfs))
        assert fnrun("render", str(root), "-q", "--no-status").code == 0
        assert list(as_data(root)["sub/a.yaml"][0]["metadata"]["labels"]) == order


def test_outputs_leave_the_package_alone(tmp_path: Path, test_images: None) -> None:
    files = {"Kptfile": kptfile("root", f"- image: {LABEL}\n  configMap: {{a: b}}"), "a.yaml": cm("a")}
    write_package(tmp_path / "pkg", files)
    before = snapshot(tmp_path / "pkg")
    stdout = fnrun("render", str(tmp_path / "pkg"), "-o", "stdout", "-q")
    assert stdout.code == 0 and "kind: ResourceList" in stdout.stdout and "a: b" in stdout.stdout
    unwrap = fnrun("render", str(tmp_path / "pkg"), "-o", "unwrap", "-q")
    assert unwrap.code == 0 and "ResourceList" not in unwrap.stdout and "a: b" in unwrap.stdout
    out = fnrun("render", str(tmp_path / "pkg"), "-o", str(tmp_path / "out"), "-q")
    assert out.code == 0, out.stderr
    assert as_data(tmp_path / "out")["a.yaml"][0]["metadata"]["labels"] == {"a": "b"}
    assert "status" not in (tmp_path / "out" / "Kptfile").read_text()
    assert snapshot(tmp_path / "pkg") == before
    check = fnrun("render", str(tmp_path / "pkg"), "--check", "-q")
    assert check.code == 3 and "+    a: b" in check.stdout
    assert snapshot(tmp_path / "pkg") == before


def test_bad_packages_are_one_line_errors(tmp_path: Path) -> None:
    write_package(tmp_path / "none", {"a.yaml": cm("a")})
    assert_one_line_error(fnrun("render", str(tmp_path / "none")), "no Kptfile", code=2)
    write_package(tmp_path / "exec", {"Kptfile": kptfile("root", "- exec: ./fn.sh")})
    assert_one_line_error(fnrun("render", str(tmp_path / "exec")), "Kptfile: pipeline.mutators[0]", "--allow-exec", code=2)
    write_package(tmp_path / "sel", {"Kptfile": kptfile("root", f"- image: {LABEL}\n  selectors: [{{kinds: X}}]")})
    assert_one_line_error(fnrun("render", str(tmp_path / "sel")), "Kptfile:8: field kinds not found in type v1.Selector", code=2)
    write_package(tmp_path / "cfg", {"Kptfile": kptfile("root", f"- image: {LABEL}\n  configPath: missing.yaml")})
    assert_one_line_error(fnrun("render", str(tmp_path / "cfg")), "configPath missing.yaml", code=2)
    write_package(tmp_path / "out", {"Kptfile": kptfile("root", f"- image: {LABEL}\n  configPath: a/../../x.yaml")})
    assert_one_line_error(fnrun("render", str(tmp_path / "out")), "outside the package", code=2)
    write_package(tmp_path / "subcfg", {"Kptfile": kptfile("root", f"- image: {LABEL}\n  configPath: db/c.yaml"), "db/Kptfile": kptfile("db"), "db/c.yaml": cm("c")})
    assert_one_line_error(fnrun("render", str(tmp_path / "subcfg")), "configPath db/c.yaml is in a subpackage", code=2)


def test_the_kpt_package_sample_renders_and_is_then_stable(tmp_path: Path, test_images: None) -> None:
    shutil.copytree(Path(__file__).resolve().parents[2] / "samples" / "kpt-package", tmp_path / "shop")
    first = fnrun("render", str(tmp_path / "shop"), "--image-prefix", "fnrun", "-q")
    assert first.code == 0, first.stderr
    data = as_data(tmp_path / "shop")
    db = data["backend/db.yaml"][0]["metadata"]
    assert db["namespace"] == "shop-api" and db["labels"] == {"stateful": "true", "app.kubernetes.io/part-of": "shop"}
    web, service = data["frontend/web.yaml"]
    assert web["metadata"]["namespace"] == service["metadata"]["namespace"] == "shop-web"
    assert "namespace" not in data["frontend/set-namespace.yaml"][0]["metadata"]
    assert data["backend/api.yaml"][0]["metadata"]["labels"] == {"app.kubernetes.io/part-of": "shop"}
    again = fnrun("render", str(tmp_path / "shop"), "--image-prefix", "fnrun", "--check", "-q")
    assert again.code == 0, again.stdout


def test_list_shows_a_kpt_packages_pipelines_in_render_order() -> None:
    result = fnrun("list", str(Path(__file__).resolve().parents[2] / "samples" / "kpt-package"), env={"KPT_IMAGE_PREFIX": "fnrun"})
    assert result.code == 0, result.stderr
    declared = [line.split("declared in: ")[1] for line in result.stdout.splitlines()]
    assert declared == [
        "backend/Kptfile: pipeline.mutators[0]",
        "backend/Kptfile: pipeline.mutators[1]",
        "frontend/Kptfile: pipeline.mutators[0]",
        "frontend/Kptfile: pipeline.mutators[1]",
        "Kptfile: pipeline.mutators[0]",
        "Kptfile: pipeline.validators[0]",
    ]
    assert "fnrun/set-namespace:v1" in result.stdout


@pytest.mark.skipif(KPT is None, reason="kpt is not installed")
def test_a_resource_two_selectors_match_is_sent_once_where_kpt_sends_it_twice(tmp_path: Path, test_images: None) -> None:
    """kpt's SelectInput appends a resource once per matching selector: beta.56 runs the function
    "on 2 resource(s)" for one ConfigMap, then fails (`resource at path "a.yaml" and index "0"
    already exists`). fnrun selects it once."""
    files = {
        "Kptfile": kptfile("root", f"- image: {GENERATE}\n  configMap: {{name: extra}}\n  selectors:\n  - kind: ConfigMap\n  - name: a"),
        "a.yaml": cm("a"),
    }
    by_kpt, by_fnrun, _, fnrun_dir = render_both(tmp_path, files)
    assert by_kpt.returncode != 0 and "already exists" in by_kpt.stderr
    assert by_fnrun.code == 0, by_fnrun.stderr
    assert sorted(as_data(fnrun_dir)) == ["Kptfile", "a.yaml", "configmap_extra.yaml"]  # kpt's <kind>_<name>.yaml


def test_exec_steps_results_dir_and_results_format(tmp_path: Path) -> None:
    steps = "- exec: cat\n- exec: cat\n  when: size(resources) > 100"
    write_package(tmp_path / "pkg", {"Kptfile": kptfile("root", steps, validators="- exec: cat"), "a.yaml": cm("a")})
    result = fnrun("render", str(tmp_path / "pkg"), "--allow-exec", "--results-dir", str(tmp_path / "results"), "--results-format", "json", "--no-status")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)
    written = YAML(typ="safe", pure=True).load((tmp_path / "results" / "results.yaml").read_text())["items"]
    assert [(item["exec"], item["exitCode"]) for item in written] == [(shutil.which("cat"), 0)] * 3
    assert written[1]["results"] == [{"message": "skipped: when 'size(resources) > 100' is false", "severity": "info"}]
    assert (tmp_path / "pkg" / "a.yaml").read_text() == cm("a")
