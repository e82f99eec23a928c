"""kpt semantics `fnrun render` (and `fnrun run` where kpt fn eval is the model) follows for
Kptfile packages where kpt's e2e/testdata/fn-render and the catalog's cases showed fnrun
differing (bench/conformance_render.py scores both suites).

Run with the real CLI (in this process where a command's outcome is the subject: testing.in_process)
and fnrun's builtins for kpt's catalog images (no registry here)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from orchestrator.yamlio import fast
from testing.in_process import fnrun_here
from testing.kpt import CATALOG, ON, docs, write
from testing.pipeline_helpers import assert_one_line_error, fnrun

KPTFILE = """
    apiVersion: kpt.dev/v1
    kind: Kptfile
    metadata:
      name: app
    pipeline:
      mutators:
"""


LABEL_CONFIG = """
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: label-config
    data:
      tier: db
"""

APP = """
    apiVersion: v1
    kind: Service
    metadata:
      name: web
"""


def test_render_keeps_a_functions_own_config_out_of_its_items(tmp_path: Path) -> None:
    """A configPath resource is the function's config, not one of its items, so
    set-labels does not label the ConfigMap it reads its labels from. kpt beta.56 (and its
    fn-render `fnconfig` cases) hand it over as an item too; kpt fixed that after beta.56
    (kptdev/kpt#4673), so fnrun follows the issue and the fix."""
    write(tmp_path, {
        "Kptfile": KPTFILE + f"""
                - image: {CATALOG}/set-labels:latest
                  configPath: labels.yaml
        """,
        "labels.yaml": LABEL_CONFIG,
        "app.yaml": APP,
    })
    result = fnrun_here("render", str(tmp_path), env=ON)
    assert result.code == 0, result.stderr
    assert "labels" not in docs(tmp_path / "labels.yaml")[0]["metadata"]
    assert docs(tmp_path / "app.yaml")[0]["metadata"]["labels"] == {"tier": "db"}


def test_render_gives_a_step_its_config_as_earlier_steps_left_it(tmp_path: Path) -> None:
    """kpt's `fnconfig-updated-in-render`: a step's configPath resource, edited by the step before,
    is what the later step reads."""
    write(tmp_path, {
        "Kptfile": KPTFILE + f"""
                - image: {CATALOG}/search-replace:latest
                  configMap:
                    by-path: data.tier
                    by-value: db
                    put-value: cache
                - image: {CATALOG}/set-labels:latest
                  configPath: labels.yaml
        """,
        "labels.yaml": LABEL_CONFIG,
        "app.yaml": APP,
    })
    result = fnrun_here("render", str(tmp_path), env=ON)
    assert result.code == 0, result.stderr
    assert docs(tmp_path / "labels.yaml")[0]["data"] == {"tier": "cache"}
    assert docs(tmp_path / "app.yaml")[0]["metadata"]["labels"] == {"tier": "cache"}


def test_run_hands_an_fn_config_in_the_package_over_as_an_item_too(tmp_path: Path) -> None:
    """kpt fn eval --fn-config (the catalog's tests/starlark/eval-fn-config) hands the file over as
    the functionConfig and, being a resource of the package, as an item too: so does `fnrun run`;
    --fn-config-only keeps it the functionConfig only, written back untouched
    (docs/reference/declaring-functions.md); a config from outside the package is never an item."""
    write(tmp_path / "pkg", {"labels.yaml": LABEL_CONFIG, "app.yaml": APP})
    image, config = f"{CATALOG}/set-labels:latest", str(tmp_path / "pkg/labels.yaml")
    before = (tmp_path / "pkg/labels.yaml").read_text()
    result = fnrun_here("run", str(tmp_path / "pkg"), "--image", image, "--fn-config", config, "--fn-config-only", env=ON)
    assert result.code == 0, result.stderr
    assert (tmp_path / "pkg/labels.yaml").read_text() == before
    result = fnrun_here("run", str(tmp_path / "pkg"), "--image", image, "--fn-config", config, env=ON)
    assert result.code == 0, result.stderr
    assert docs(tmp_path / "pkg/labels.yaml")[0]["metadata"]["labels"] == {"tier": "db"}
    assert docs(tmp_path / "pkg/app.yaml")[0]["metadata"]["labels"] == {"tier": "db"}
    write(tmp_path, {"outside.yaml": LABEL_CONFIG.replace("tier: db", "tier: web"), "other/app.yaml": APP})
    result = fnrun_here("run", str(tmp_path / "other"), "--image", image, "--fn-config", str(tmp_path / "outside.yaml"), env=ON)
    assert result.code == 0, result.stderr
    assert docs(tmp_path / "other/app.yaml")[0]["metadata"]["labels"] == {"tier": "web"}
    assert "labels" not in docs(tmp_path / "outside.yaml")[0]["metadata"]


def starlark_package(root: Path, source: str) -> None:
    body = textwrap.indent(textwrap.dedent(source).strip(), "      ")
    write(root, {
        "Kptfile": KPTFILE + f"""
                - image: {CATALOG}/starlark:latest
                  configPath: fn-config.yaml
        """,
        "fn-config.yaml": "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: script\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nsource: |\n" + body + "\n",
        "app.yaml": """
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: web
              annotations:
                last-applied: '{"replicas": 2, "tags": ["a", "b"]}'
        """,
    })


def test_starlark_loads_the_libraries_kpts_image_bundles(tmp_path: Path) -> None:
    """catalog examples/starlark-load-library and tests/starlark/load-library: json, yaml, base64,
    hash, math, re and krmfn work; the others load (and are empty)."""
    starlark_package(tmp_path, """
        load('encoding/json.star', 'json')
        load('encoding/yaml.star', 'yaml')
        load('encoding/base64.star', 'base64')
        load('hash.star', 'hash')
        load('math.star', 'math')
        load('re.star', 're')
        load('krmfn.star', 'krmfn')
        load('http.star', 'http')
        load('zipfile.star', 'ZipFile')
        for r in ctx.resource_list["items"]:
          if krmfn.match_gvk(r, "v1", "ConfigMap") and krmfn.match_name(r, "web"):
            obj = json.decode(r["metadata"]["annotations"]["last-applied"])
            r["data"] = {
              "json": json.encode({"b": obj["tags"], "a": obj["replicas"] + 1}),
              "yaml": yaml.dumps({"n": obj["replicas"]}),
              "b64": base64.encode("hi") + " " + base64.decode("aGk="),
              "md5": hash.md5("x"),
              "ceil": str(math.ceil(1.2)),
              "re": re.sub("[ab]", "x", "abc"),
            }
    """)
    result = fnrun_here("render", str(tmp_path), env=ON)
    assert result.code == 0, result.stderr
    assert docs(tmp_path / "app.yaml")[0]["data"] == {
        "json": '{"a":3,"b":["a","b"]}', "yaml": "n: 2\n", "b64": "aGk= hi",
        "md5": "9dd4e461268c8034f5c8564e155c67a6", "ceil": "2", "re": "xxc",
    }


def test_starlark_library_error_is_one_line(tmp_path: Path) -> None:
    starlark_package(tmp_path, """
        load('encoding/json.star', 'json')
        x = json.decode("{bad")
    """)
    result = fnrun_here("render", str(tmp_path), env=ON)
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "script.star" in result.stderr and "property name" in result.stderr


def test_search_replace_puts_comments_that_reach_the_file(tmp_path: Path) -> None:
    """catalog examples/search-replace-create-setters: put-comment with regex groups creates
    `kpt-set:` setters; put-value and put-comment together change the value and comment it."""
    write(tmp_path, {"urls.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: urls # the service's
        data:
          FQDN: nginx.com
          BAR: https://nginx.com/bar
          OTHER: example.org
    """})
    image = f"{CATALOG}/search-replace:latest"
    args = ("by-path=data.**", "by-value-regex=(.*)nginx.com(.*)", "put-comment=kpt-set: ${1}${host}${2}")
    result = fnrun_here("run", str(tmp_path), "--image", image, "--", *args, env=ON)
    assert result.code == 0, result.stderr
    assert (tmp_path / "urls.yaml").read_text() == textwrap.dedent("""\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: urls # the service's
        data:
          FQDN: nginx.com # kpt-set: ${host}
          BAR: https://nginx.com/bar # kpt-set: https://${host}/bar
          OTHER: example.org
    """)
    result = fnrun_here("run", str(tmp_path), "--image", image, "--", "by-path=data.OTHER", "put-value=example.com", "put-comment=kpt-set: ${domain}", env=ON)
    assert result.code == 0, result.stderr
    assert (tmp_path / "urls.yaml").read_text().endswith("  OTHER: example.com # kpt-set: ${domain}\n")


def test_render_refuses_a_config_without_a_name(tmp_path: Path) -> None:
    """kpt's fnconfig-missing-name: the step's configPath resource must have metadata.name."""
    write(tmp_path, {
        "Kptfile": KPTFILE + f"""
                - image: {CATALOG}/set-labels:latest
                  configPath: labels.yaml
        """,
        "labels.yaml": "apiVersion: v1\nkind: ConfigMap\ndata:\n  tier: db\n",
        "app.yaml": APP,
    })
    before = (tmp_path / "app.yaml").read_text()
    assert_one_line_error(fnrun_here("render", str(tmp_path), env=ON), "configPath labels.yaml", "metadata.name", code=2)
    assert (tmp_path / "app.yaml").read_text() == before


def test_render_refuses_two_resources_at_one_path_and_index(tmp_path: Path) -> None:
    """kpt's path-index-duplicate: a function's new resource claims a place an existing one holds."""
    starlark_package(tmp_path, """
        ctx.resource_list["items"].append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "twin",
          "annotations": {"internal.config.kubernetes.io/path": "./app.yaml", "internal.config.kubernetes.io/index": "0"}}})
    """)
    before = (tmp_path / "app.yaml").read_text()
    assert_one_line_error(fnrun_here("render", str(tmp_path), env=ON), "'app.yaml'", "index 0 already exists", code=1)
    assert (tmp_path / "app.yaml").read_text() == before


GENERATOR = """
    ctx.resource_list["items"].append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "httpbin"}})
"""


def test_render_names_new_files_as_kpt_does_and_fnruns_way_on_request(tmp_path: Path) -> None:
    """kpt's generator cases: a new resource without a path goes to `<kind>_<name>.yaml` in the
    step's package; `--file-names name_kind` gives fnrun's `<name>_<kind>.yaml` (docs/reference/annotations.md, which
    `fnrun run` keeps by default)."""
    for way, extra, expected in (("kpt", (), "deployment_httpbin.yaml"), ("fnrun", ("--file-names", "name_kind"), "httpbin_deployment.yaml")):
        starlark_package(tmp_path / way, GENERATOR)
        result = fnrun_here("render", str(tmp_path / way), *extra, env=ON)
        assert result.code == 0, result.stderr
        assert docs(tmp_path / way / expected) == [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "httpbin"}}]
    starlark_package(tmp_path / "run", GENERATOR)
    result = fnrun_here("run", str(tmp_path / "run"), "--image", f"{CATALOG}/starlark:latest", "--fn-config", str(tmp_path / "run/fn-config.yaml"), env=ON)
    assert result.code == 0, result.stderr
    assert (tmp_path / "run/httpbin_deployment.yaml").exists()
    assert_one_line_error(fnrun_here("render", str(tmp_path / "kpt"), "--file-names", "kind-name", env=ON), "--file-names 'kind-name'", code=2)


def test_render_takes_an_absolute_path_below_the_steps_package(tmp_path: Path) -> None:
    """kpt's generator-absolute-path and no-resources: `/another/file/out.yaml` from a function is
    written at `another/file/out.yaml` of the package the step belongs to."""
    generate = GENERATOR.replace('"name": "httpbin"}', '"name": "httpbin", "annotations": {"config.kubernetes.io/path": "/another/file/out.yaml"}}')
    starlark_package(tmp_path / "sub", generate)
    write(tmp_path, {"Kptfile": KPTFILE.replace("    pipeline:\n      mutators:\n", "")})
    result = fnrun_here("render", str(tmp_path), env=ON)
    assert result.code == 0, result.stderr
    assert docs(tmp_path / "sub/another/file/out.yaml")[0]["metadata"] == {"name": "httpbin"}
    assert not Path("/another/file/out.yaml").exists()


def test_render_out_of_place_as_kpt(tmp_path: Path) -> None:
    """kpt's out-of-place cases: `-o DIR` refuses a DIR that exists (empty too) and writes nothing;
    stdout has the Kptfile last; `-o unwrap` prints the files' YAML without path/index annotations."""
    write(tmp_path / "pkg", {"Kptfile": KPTFILE + f"""
            - image: {CATALOG}/set-namespace:latest
              configMap:
                namespace: staging
    """, "app.yaml": APP})
    (tmp_path / "out").mkdir()
    assert_one_line_error(fnrun_here("render", str(tmp_path / "pkg"), "-o", str(tmp_path / "out"), env=ON), "already exists", code=2)
    assert list((tmp_path / "out").iterdir()) == []
    listed = fnrun_here("render", str(tmp_path / "pkg"), "-o", "stdout", "-q", env=ON)
    assert listed.code == 0, listed.stderr
    assert [item["kind"] for item in fast.load(listed.stdout, "stdout")["items"]] == ["Service", "Kptfile"]
    unwrapped = fnrun_here("render", str(tmp_path / "pkg"), "-o", "unwrap", "-q", env=ON)
    assert unwrapped.code == 0, unwrapped.stderr
    documents = [d for d in fast.load_all(unwrapped.stdout, "stdout") if d]
    assert [d["kind"] for d in documents] == ["Service", "Kptfile"]
    assert documents[0]["metadata"] == {"name": "web", "namespace": "staging"}
    assert "config.kubernetes.io" not in unwrapped.stdout


@pytest.mark.engine
def test_render_answers_a_tag_range_with_the_builtin_that_implements_it(tmp_path: Path) -> None:
    """kpt's basicpipeline-semver: with the catalog served in-process, a `tag:` range the builtin's
    release satisfies runs the builtin; one it does not is refused, naming the range."""
    write(tmp_path / "ok", {"Kptfile": KPTFILE + f"""
            - image: {CATALOG}/set-namespace
              tag: "0.4.1 - 0.4.3"
              configMap:
                namespace: staging
            - image: {CATALOG}/set-labels
              tag: "~0.2"
              configMap:
                tier: backend
    """, "app.yaml": APP})
    result = fnrun("render", str(tmp_path / "ok"), "--image-pull-policy", "never", env=ON)
    assert result.code == 0, result.stderr
    assert docs(tmp_path / "ok/app.yaml")[0]["metadata"] == {"name": "web", "namespace": "staging", "labels": {"tier": "backend"}}
    write(tmp_path / "newer", {"Kptfile": KPTFILE + f"""
            - image: {CATALOG}/set-namespace
              tag: ">=0.5"
              configMap:
                namespace: staging
    """, "app.yaml": APP})
    assert_one_line_error(fnrun("render", str(tmp_path / "newer"), "--image-pull-policy", "never", env=ON), "'>=0.5'", code=2)


def test_render_goes_on_after_an_error_result_at_exit_zero_unless_strict(tmp_path: Path) -> None:
    """The catalog's set-namespace/no-fnconfig-resource: set-namespace without a config reports an
    error result and exits 0, and kpt's render succeeds (recording the result); with
    --strict-results the step fails, as every function does in `fnrun run`."""
    files = {"Kptfile": KPTFILE + f"        - image: {CATALOG}/set-namespace:latest\n", "app.yaml": APP}
    write(tmp_path / "kpt", files)
    result = fnrun_here("render", str(tmp_path / "kpt"), env=ON)
    assert result.code == 0, result.stderr
    assert "FunctionConfig is missing" in result.stderr
    status = docs(tmp_path / "kpt/Kptfile")[0]["status"]
    assert status["renderStatus"]["mutationSteps"][0]["errorResults"][0]["message"].startswith("FunctionConfig is missing")
    write(tmp_path / "strict", files)
    before = (tmp_path / "strict/app.yaml").read_text()
    assert_one_line_error(fnrun_here("render", str(tmp_path / "strict"), "--strict-results", env=ON), "1 error result", code=1)
    assert (tmp_path / "strict/app.yaml").read_text() == before


def test_an_empty_config_map_is_no_config(tmp_path: Path) -> None:
    """The catalog's set-labels and set-annotations empty-list/simple: `configMap: {}` gives the
    function no config at all, so it fails; an empty annotation list fails set-annotations."""
    for name in ("set-labels", "set-annotations"):
        write(tmp_path / name, {"Kptfile": KPTFILE + f"        - image: {CATALOG}/{name}:latest\n          configMap: {{}}\n", "app.yaml": APP})
        result = fnrun_here("render", str(tmp_path / name), env=ON)
        assert result.code == 1 and "FunctionConfig is missing" in result.stderr, result.stderr
    write(tmp_path / "empty", {"Kptfile": KPTFILE + f"        - image: {CATALOG}/set-annotations:latest\n          configPath: fn.yaml\n",
                               "fn.yaml": "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetAnnotations\nmetadata:\n  name: f\nannotations: {}\n",
                               "app.yaml": APP})
    result = fnrun_here("render", str(tmp_path / "empty"), env=ON)
    assert result.code == 1 and "annotation list cannot be empty" in result.stderr, result.stderr


def test_starlark_reads_the_kubernetes_openapi_schema(tmp_path: Path) -> None:
    """The catalog's tests/starlark/openapi: ctx.open_api holds Kubernetes' definitions."""
    starlark_package(tmp_path, """
        gvk = ctx.open_api["definitions"]["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"][0]
        print(gvk["group"] + "/" + gvk["version"] + "/" + gvk["kind"])
        spec = ctx.open_api["definitions"]["io.k8s.api.core.v1.PodSpec"]
        print("containers" in spec["properties"])
    """)
    result = fnrun_here("render", str(tmp_path), env=ON)
    assert result.code == 0, result.stderr
    assert "apps/v1/Deployment" in result.stderr and "True" in result.stderr


def test_the_conformance_bench_takes_every_expected_folder_at_any_depth(tmp_path: Path) -> None:
    """kpt's and the catalog's runners take every folder holding `.expected/` as a case, however
    deep (the catalog's set-labels/empty-list/simple), and never one without it."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from conformance_render import expected_cases

    for case in ("a", "group/b", "group/deeper/c", "group/deeper/c/sub-package-of-c"):
        (tmp_path / case).mkdir(parents=True)
    for case in ("a", "group/b", "group/deeper/c"):
        (tmp_path / case / ".expected").mkdir()
    (tmp_path / "group/deeper/c/sub-package-of-c/.expected").mkdir()
    assert [p.relative_to(tmp_path).as_posix() for p in expected_cases(tmp_path)] == [
        "a", "group/b", "group/deeper/c", "group/deeper/c/sub-package-of-c"]


def test_the_builtin_catalog_serves_an_eval_pipe(tmp_path: Path) -> None:
    """kpt's out-of-place-fnchain-stdout: render to stdout, then catalog functions over stdin, one
    after another, all in-process; the files are left alone and the Kptfile comes through last."""
    write(tmp_path, {"Kptfile": KPTFILE + f"""
            - image: {CATALOG}/set-namespace:latest
              configMap:
                namespace: staging
    """, "app.yaml": APP})
    before = (tmp_path / "app.yaml").read_text()
    rendered = fnrun("render", str(tmp_path), "-o", "stdout", "-q", env=ON)
    assert rendered.code == 0, rendered.stderr
    annotated = fnrun("run", "-", "--image", f"{CATALOG}/set-annotations:latest", "-q", "--", "foo=bar", stdin=rendered.stdout, env=ON)
    assert annotated.code == 0, annotated.stderr
    labelled = fnrun("run", "-", "--image", f"{CATALOG}/set-labels:latest", "-q", "--", "tier=backend", stdin=annotated.stdout, env=ON)
    assert labelled.code == 0, labelled.stderr
    items = fast.load(labelled.stdout, "stdout")["items"]
    assert [item["kind"] for item in items] == ["Service", "Kptfile"]
    assert items[0]["metadata"]["namespace"] == "staging" and items[0]["metadata"]["labels"] == {"tier": "backend"}
    assert items[0]["metadata"]["annotations"]["foo"] == "bar"
    assert (tmp_path / "app.yaml").read_text() == before


@pytest.mark.engine
def test_the_conformance_bench_runs_a_missing_image_case_only_when_the_absence_is_the_point(tmp_path: Path) -> None:
    """A case expecting a failure whose image is missing: kpt's missing-fn-image expects the
    engine's "no such image" and runs (fnrun must fail it too); kubeval-failure expects
    kubeconform's verdict, which a missing image would only fake, so it cannot run."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from conformance_render import _cannot_run

    kptfile = KPTFILE + "        - image: example.invalid/fnrun-absent:v0\n"
    for name, stderr in (("absence", "No such image"), ("verdict", "[error] spec.replicas: got string")):
        write(tmp_path / name, {"Kptfile": kptfile, ".expected/config.yaml": f"exitCode: 1\nstdErr: {stderr!r}\n"})
    assert _cannot_run(tmp_path / "absence", {"exitCode": 1, "stdErr": "No such image"}, True) is None
    reason = _cannot_run(tmp_path / "verdict", {"exitCode": 1, "stdErr": "[error] spec.replicas: got string"}, True)
    assert reason is not None and "example.invalid/fnrun-absent:v0" in reason and "wrong reason" in reason
    assert "needs example.invalid/fnrun-absent:v0" in (_cannot_run(tmp_path / "verdict", {}, True) or "")
