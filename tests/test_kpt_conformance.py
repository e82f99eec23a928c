"""kpt semantics `fnrun render` follows for Kptfile packages where kpt's e2e/testdata/fn-render
and the catalog's cases showed fnrun differing (issues 11 and 14; bench/conformance_known.py).

Run with the real CLI and fnrun's builtins for kpt's catalog images (no registry here)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pipeline_helpers import assert_one_line_error, fnrun

from orchestrator.yamlio import fast

ON = {"FNRUN_BUILTIN_CATALOG": "1"}
CATALOG = "ghcr.io/kptdev/krm-functions-catalog"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip())


KPTFILE = """
    apiVersion: kpt.dev/v1
    kind: Kptfile
    metadata:
      name: app
    pipeline:
      mutators:
"""


def docs(path: Path) -> list[dict]:
    return [d for d in fast.load_all(path.read_text(), path.name) if d is not None]


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
    """Issue 11 §4: a configPath resource is the function's config, not one of its items, so
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
    result = fnrun("render", str(tmp_path), env=ON)
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
    result = fnrun("render", str(tmp_path), env=ON)
    assert result.code == 0, result.stderr
    assert docs(tmp_path / "labels.yaml")[0]["data"] == {"tier": "cache"}
    assert docs(tmp_path / "app.yaml")[0]["metadata"]["labels"] == {"tier": "cache"}


def test_run_keeps_a_declared_functions_config_out_of_its_items(tmp_path: Path) -> None:
    """SPEC-NOTES decides for `fnrun run --fn-config`: the config is functionConfig only, written
    back untouched (kpt's `fn eval --fn-config` differs: tests/starlark/eval-fn-config)."""
    write(tmp_path, {"labels.yaml": LABEL_CONFIG, "app.yaml": APP})
    before = (tmp_path / "labels.yaml").read_text()
    result = fnrun("run", str(tmp_path), "--image", f"{CATALOG}/set-labels:latest", "--fn-config", str(tmp_path / "labels.yaml"), env=ON)
    assert result.code == 0, result.stderr
    assert (tmp_path / "labels.yaml").read_text() == before
    assert docs(tmp_path / "app.yaml")[0]["metadata"]["labels"] == {"tier": "db"}


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
    result = fnrun("render", str(tmp_path), env=ON)
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
    result = fnrun("render", str(tmp_path), env=ON)
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
    result = fnrun("run", str(tmp_path), "--image", image, "--", *args, env=ON)
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
    result = fnrun("run", str(tmp_path), "--image", image, "--", "by-path=data.OTHER", "put-value=example.com", "put-comment=kpt-set: ${domain}", env=ON)
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
    assert_one_line_error(fnrun("render", str(tmp_path), env=ON), "configPath labels.yaml", "metadata.name", code=2)
    assert (tmp_path / "app.yaml").read_text() == before


def test_render_refuses_two_resources_at_one_path_and_index(tmp_path: Path) -> None:
    """kpt's path-index-duplicate: a function's new resource claims a place an existing one holds."""
    starlark_package(tmp_path, """
        ctx.resource_list["items"].append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "twin",
          "annotations": {"internal.config.kubernetes.io/path": "./app.yaml", "internal.config.kubernetes.io/index": "0"}}})
    """)
    before = (tmp_path / "app.yaml").read_text()
    assert_one_line_error(fnrun("render", str(tmp_path), env=ON), "'app.yaml'", "index 0 already exists", code=1)
    assert (tmp_path / "app.yaml").read_text() == before
