"""The catalog end to end: each real image `fnrun/<name>:v1` runs through the real `fnrun run` on a
copy of its sample package (`samples/<name>/`, which declares it), and is judged on the files it
leaves: exactly the lines the function should change differ (difflib against the copy as it was),
comments stay, a second run writes nothing, and validators fail with their results and the package
untouched. The same module run as an exec function (`--exec functions/<name>.py`) must leave the
same files, so the fast development loop tells the truth about the image.

test_catalog_functions.py covers each function's logic over hand-made ResourceLists; this file
covers what only the image and the orchestrator together can break (entry point, read-only root,
user 65534, ruamel 0.17 in the image, the orchestrator's diff-and-write)."""

from __future__ import annotations

import difflib
import re
import shutil
from pathlib import Path

import pytest

from testing.catalog import (  # noqa: F401
    CATALOG,
    EXEC_CASES,
    SAMPLES,
    VALIDATORS,
    Edit,
    Hunk,
    _build_images_module,
    _drop_limits,
    _include_selectors,
    _unmatch,
    _unready,
    copy_sample,
    image,
    module,
    replace_in,
)
from testing.pipeline_helpers import REPO, Result, assert_one_line_error, fnrun, load, snapshot

# ---------------------------------------------------------------------------------------- images


# ---------------------------------------------------------------------------------------- helpers


def changed_lines(before: bytes, after: bytes) -> list[Hunk]:
    """Where two versions of a file differ, as difflib sees it: (removed, added) per place."""
    old, new = before.decode().splitlines(), after.decode().splitlines()
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    return [(old[i1:i2], new[j1:j2]) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]


def assert_changes(before: dict[str, tuple[bytes, int]], package: Path, expected: dict[str, list[Hunk]]) -> None:
    """Exactly the expected lines changed, in exactly the expected files; no file came or went, and
    files with no change were not rewritten (same mtime)."""
    after = snapshot(package)
    assert sorted(after) == sorted(before), "files created or deleted"
    actual = {rel: changed_lines(before[rel][0], after[rel][0]) for rel in before}
    assert {rel: hunks for rel, hunks in actual.items() if hunks} == expected
    for rel in before:
        if rel not in expected:
            assert after[rel] == before[rel], f"{rel} was rewritten without a change"


def assert_comments_kept(before: dict[str, tuple[bytes, int]], package: Path) -> None:
    """Every comment of the sample is still in its file (full-line and end-of-line ones alike)."""
    for rel, (content, _) in before.items():
        text = (package / rel).read_text()
        for line in content.decode().splitlines():
            if "#" in line:
                comment = line[line.index("#"):]
                assert comment in text, (rel, comment)


def run_declared(package: Path, results: Path | None = None) -> Result:
    """`fnrun run DIR`: the sample's own declaration picks the image."""
    extra = ["--results-dir", str(results)] if results else []
    result = fnrun("run", str(package), *extra)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def run_exec(package: Path, name: str, fn_config: Path, results: Path | None = None) -> Result:
    """`fnrun run DIR --exec functions/<module>.py` with the sample's config: the development loop."""
    extra = ["--results-dir", str(results)] if results else []
    result = fnrun("run", str(package), "--exec", f"functions/{module(name)}.py", "--enable-exec",
                   "--fn-config", str(fn_config), *extra, cwd=REPO)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def run_and_converge(package: Path) -> dict[str, tuple[bytes, int]]:
    """Run the declared image, which must succeed, then again: the second run writes nothing."""
    first = run_declared(package)
    assert first.code == 0, first
    settled = snapshot(package)
    second = run_declared(package)
    assert second.code == 0, second
    assert snapshot(package) == settled, "the second run changed the package"
    return settled


def function_results(results_dir: Path) -> list[dict]:
    """The results the (one) function reported, from --results-dir's results.yaml."""
    runs = load(results_dir / "results.yaml")["items"]
    assert len(runs) == 1, runs
    return runs[0].get("results") or []


# ------------------------------------------------------------------------------- set-namespace
def test_set_namespace_image_moves_the_package(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    package = copy_sample("set-namespace", tmp_path)
    before = snapshot(package)
    run_and_converge(package)
    assert_changes(before, package, {
        "cart.yaml": [(["  namespace: shop # moved by set-namespace"], ["  namespace: shop-staging # moved by set-namespace"]),
                      (["  namespace: shop"], ["  namespace: shop-staging"])],
        "namespace.yaml": [(["  name: shop"], ["  name: shop-staging"])],
        "rbac.yaml": [(["  namespace: shop"], ["  namespace: shop-staging"]),
                      (["    namespace: shop"], ["    namespace: shop-staging"])],
    })
    assert_comments_kept(before, package)
    binding = [d for d in _documents(package / "rbac.yaml") if d["kind"] == "ClusterRoleBinding"][0]
    assert "namespace" not in binding["metadata"], "cluster-scoped: no namespace"
    assert [s["namespace"] for s in binding["subjects"]] == ["shop-staging", "monitoring"]


def _documents(path: Path) -> list[dict]:
    """Each `---` document of a file, read with fnrun's YAML 1.2 loader."""
    from orchestrator.yamlio import fast

    return [fast.load(part, str(path)) for part in re.split(r"(?m)^---\n", path.read_text())]


# ---------------------------------------------------------------------------------- set-labels
def labels_at(column: int) -> list[str]:
    """The sample's two labels as set-labels writes them, at a column."""
    return [" " * column + "team: payments", " " * column + "cost-center: '4711'"]


def test_set_labels_image_labels_resources_and_pods_not_selectors(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    package = copy_sample("set-labels", tmp_path)
    before = snapshot(package)
    run_and_converge(package)
    assert_changes(before, package, {
        "api.yaml": [([], labels_at(4)), ([], labels_at(8)), ([], ["  labels:", *labels_at(4)])],
        "reconcile.yaml": [([], ["  labels:", *labels_at(4)]),
                           ([], ["    metadata:", "      labels:", *labels_at(8)]),
                           ([], ["        metadata:", "          labels:", *labels_at(12)])],
    })
    assert_comments_kept(before, package)
    deployment, service = _documents(package / "api.yaml")
    wanted = {"team": "payments", "cost-center": "4711"}
    assert deployment["spec"]["selector"]["matchLabels"] == {"app": "payments-api"}, "immutable: left alone"
    assert deployment["spec"]["template"]["metadata"]["labels"] == {"app": "payments-api", **wanted}
    assert service["spec"]["selector"] == {"app": "payments-api"}
    cronjob = load(package / "reconcile.yaml")
    assert cronjob["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"] == wanted


def test_set_labels_image_include_selectors_keeps_selectors_matching_pods(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    """With includeSelectors the selectors get the labels too, and every selector still matches the
    pod template it selects (the API rejects a Deployment whose selector does not)."""
    package = copy_sample("set-labels", tmp_path, _include_selectors)
    before = snapshot(package)
    run_and_converge(package)
    assert_changes(before, package, {
        "api.yaml": [([], labels_at(4)), ([], labels_at(6)), ([], labels_at(8)),
                     ([], ["  labels:", *labels_at(4)]), ([], labels_at(4))],
        "reconcile.yaml": [([], ["  labels:", *labels_at(4)]),
                           ([], ["    metadata:", "      labels:", *labels_at(8)]),
                           ([], ["        metadata:", "          labels:", *labels_at(12)])],
    })
    deployment, service = _documents(package / "api.yaml")
    pods = deployment["spec"]["template"]["metadata"]["labels"]
    for selector in (deployment["spec"]["selector"]["matchLabels"], service["spec"]["selector"]):
        assert selector == {"app": "payments-api", "team": "payments", "cost-center": "4711"}
        assert selector.items() <= pods.items()


# ---------------------------------------------------------------------------------- validators
@pytest.mark.parametrize("name", VALIDATORS)
def test_validator_image_passes_its_sample_untouched(name: str, tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    """The samples are clean: the validators succeed and no file is written, not even the first time."""
    package = copy_sample(name, tmp_path)
    before = snapshot(package)
    run_and_converge(package)
    assert snapshot(package) == before


def run_failing(name: str, edit: Edit, tmp_path: Path) -> tuple[Result, list[dict]]:
    """Run a validator's image on its sample made to fail: exit 1 with one error line, the package
    untouched (bytes and mtimes), and the results it reported (from --results-dir)."""
    package = copy_sample(name, tmp_path, edit)
    before = snapshot(package)
    result = run_declared(package, tmp_path / "results")
    assert_one_line_error(result, image(name), "exit code 1", code=1)
    assert snapshot(package) == before, "a failed run writes nothing"
    return result, function_results(tmp_path / "results")


def test_require_resource_limits_image_names_every_missing_limit(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    result, results = run_failing("require-resource-limits", _drop_limits, tmp_path)
    prefix = "spec.template.spec"
    assert [(r["severity"], r["field"]["path"]) for r in results] == [
        ("error", f"{prefix}.initContainers[name=wait-for-queue].resources.limits.cpu"),
        ("error", f"{prefix}.initContainers[name=wait-for-queue].resources.limits.memory"),
        ("error", f"{prefix}.containers[name=worker].resources.limits.memory"),
    ]
    for r in results:
        assert r["resourceRef"] == {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "worker"}
        assert r["file"] == {"path": "workers.yaml", "index": 0}
    assert "init container 'wait-for-queue' of StatefulSet worker has no cpu limit" in results[0]["message"]
    assert "container 'worker' of StatefulSet worker has no memory limit" in results[2]["message"]
    assert "wait-for-queue" in result.stderr and "limits.memory" in result.stderr, "results are shown"


# -------------------------------------------------------------------------------- tshirt-size
SMALL = ["              cpu: 250m", "              memory: 256Mi", "            requests:", "              cpu: 100m",
         "              memory: 128Mi"]


def test_tshirt_size_image_sizes_the_containers(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    package = copy_sample("tshirt-size", tmp_path)
    before = snapshot(package)
    run_and_converge(package)
    assert_changes(before, package, {
        "frontend.yaml": [([], SMALL)],
        "search.yaml": [([], ["          resources:", "            requests:", "              cpu: '2'", "              memory: 8Gi",
                              "            limits:", "              cpu: '4'", "              memory: 16Gi"])],
    })
    assert_comments_kept(before, package)
    frontend = load(package / "frontend.yaml")["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert frontend == {"limits": {"ephemeral-storage": "1Gi", "cpu": "250m", "memory": "256Mi"},
                        "requests": {"cpu": "100m", "memory": "128Mi"}}


def test_tshirt_size_image_resize_changes_only_those_values(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    """small -> large rewrites the four quantities in place. (Not medium: its cpu request is small's
    cpu limit, `cpu: 250m` on another line, and difflib would pair the two lines up.)"""
    package = copy_sample("tshirt-size", tmp_path)
    run_and_converge(package)
    replace_in(package / "frontend.yaml", "tshirt-size: small #", "tshirt-size: large #")
    before = snapshot(package)
    run_and_converge(package)
    assert_changes(before, package, {"frontend.yaml": [
        (["              cpu: 250m", "              memory: 256Mi"], ["              cpu: '2'", "              memory: 4Gi"]),
        (["              cpu: 100m", "              memory: 128Mi"], ["              cpu: '1'", "              memory: 2Gi"]),
    ]})


# ----------------------------------------------------------------------------- inject-sidecar
def test_inject_sidecar_image_injects_once(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    package = copy_sample("inject-sidecar", tmp_path)
    before = snapshot(package)
    run_and_converge(package)
    assert_changes(before, package, {"orders.yaml": [
        ([], ["      initContainers:",
              "        - name: log-dir-setup",
              "          image: busybox:1.36",
              '          command: ["sh", "-c", "mkdir -p /var/log/app"]',
              "          volumeMounts:",
              "            - name: app-logs",
              "              mountPath: /var/log/app"]),
        ([], ["        - name: log-shipper # ships /var/log/app to the log store; this comment travels with it",
              "          image: registry.example.com/platform/log-shipper:1.8.0",
              "          resources:",
              "            limits: {cpu: 100m, memory: 64Mi}",
              "          volumeMounts:",
              "            - name: app-logs",
              "              mountPath: /var/log/app",
              "              readOnly: true",
              "      volumes:",
              "        - name: app-logs",
              "          emptyDir: {}"]),
    ]})
    assert_comments_kept(before, package)
    pod = load(package / "orders.yaml")["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["initContainers"]] == ["log-dir-setup"]
    assert [c["name"] for c in pod["containers"]] == ["orders", "log-shipper"], "injected exactly once"
    assert [v["name"] for v in pod["volumes"]] == ["app-logs"]


# -------------------------------------------------------------------- check-service-selectors


def test_check_service_selectors_image_reports_an_unmatched_selector(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    _, [found] = run_failing("check-service-selectors", _unmatch, tmp_path)
    assert found["severity"] == "error"
    assert found["resourceRef"] == {"apiVersion": "v1", "kind": "Service", "name": "inventory", "namespace": "warehouse"}
    assert found["file"] == {"path": "services.yaml", "index": 0}
    assert found["field"] == {"path": "spec.selector", "currentValue": {"app": "inventory", "tier": "backend"}}
    assert "closest is Deployment warehouse/inventory, whose pods lack tier=backend" in found["message"]


# --------------------------------------------------------------------------- image == exec


@pytest.mark.parametrize("name, edit", EXEC_CASES)
def test_exec_function_leaves_the_same_files_as_the_image(name: str, edit: Edit | None, tmp_path: Path,
                                                          catalog_images: tuple[str, ...]) -> None:
    """The module as an exec function, given the sample's config with --fn-config, does what its image
    does: same exit code, same results, byte-identical files. (The config file is passed from outside
    the package; the package's own copy of it stays among the items, as in the declared run.)"""
    by_image = copy_sample(name, tmp_path / "image", edit)
    by_exec = copy_sample(name, tmp_path / "exec", edit)
    fn_config = tmp_path / "fn-config.yaml"
    shutil.copyfile(by_exec / "fn-config.yaml", fn_config)
    declared = run_declared(by_image, tmp_path / "image-results")
    local = run_exec(by_exec, name, fn_config, tmp_path / "exec-results")
    assert (local.code, declared.code) == ((1, 1) if name in VALIDATORS and edit else (0, 0)), (declared, local)
    assert function_results(tmp_path / "exec-results") == function_results(tmp_path / "image-results")
    image_files, exec_files = snapshot(by_image), snapshot(by_exec)
    assert {rel: content for rel, (content, _) in exec_files.items()} == {rel: content for rel, (content, _) in image_files.items()}


def test_exec_with_the_packages_own_fn_config(tmp_path: Path) -> None:
    """The obvious development loop, `--fn-config DIR/fn-config.yaml`, should find functions/<name>.py
    where the user is, as it does when the config lives elsewhere."""
    package = copy_sample("set-namespace", tmp_path)
    result = fnrun("run", str(package), "--exec", "functions/set_namespace.py", "--enable-exec",
                   "--fn-config", str(package / "fn-config.yaml"), cwd=REPO)
    assert result.code == 0, result
    assert load(package / "namespace.yaml")["metadata"]["name"] == "shop-staging"


# ---------------------------------------------------------------------------------- fnrun list
LISTING = re.compile(r"^(\d+)\. (\S+)  scope: (\S+)  declared in: (\S+)$")


def listing(directory: Path) -> list[tuple[str, str, str]]:
    """`fnrun list DIR` as (image, scope, declared in), checked to be numbered 1..n."""
    result = fnrun("list", str(directory))
    assert result.code == 0 and not result.stderr.strip(), result
    rows = [LISTING.match(line) for line in result.stdout.splitlines() if line.strip()]
    assert all(rows), result.stdout
    assert [int(m.group(1)) for m in rows if m] == list(range(1, len(rows) + 1))
    return [(m.group(2), m.group(3), m.group(4)) for m in rows if m]


def test_fnrun_list_samples_shows_every_function_in_order() -> None:
    """Samples sit side by side (one depth), so the run order is their path order; the catalog's
    six are among them, each declared by its sample's fn-config.yaml."""
    rows = listing(SAMPLES)
    scopes = [scope for _, scope, _ in rows]
    assert scopes == sorted(set(scopes)), "one function per sample, in path order"
    catalog_rows = [row for row in rows if row[0] in {image(n) for n in CATALOG}]
    assert catalog_rows == [(image(n), f"{n}/", f"{n}/fn-config.yaml[0]") for n in sorted(CATALOG)]


@pytest.mark.parametrize("name", CATALOG)
def test_fnrun_list_of_one_sample(name: str) -> None:
    assert listing(SAMPLES / name) == [(image(name), "./", "fn-config.yaml[0]")]
