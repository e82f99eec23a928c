"""The builtins kpt's render suite needs beside the everyday ones: apply-replacements (kustomize's
replacements; the catalog's examples/apply-replacements-simple and kpt's
fnconfig-updated-in-render are its spec), no-op and drop-comments (kpt's test functions), and
set-labels over a document without a kind (kpt's krm-check-exclude-kustomize). Through the real
CLI with --builtin-catalog's environment switch."""

from __future__ import annotations

import textwrap
from pathlib import Path

from testing.kpt import CATALOG, ON, docs, write
from testing.pipeline_helpers import assert_one_line_error, fnrun


def replacements(root: Path, config: str) -> None:
    """A package rendering apply-replacements with `config` (the replacements: list)."""
    write(root, {
        "Kptfile": f"""
            apiVersion: kpt.dev/v1
            kind: Kptfile
            metadata:
              name: app
              annotations:
                config.kubernetes.io/local-config: "true"
            pipeline:
              mutators:
                - image: {CATALOG}/apply-replacements:latest
                  configPath: replacements.yaml
        """,
        "replacements.yaml": "apiVersion: fn.kpt.dev/v1alpha1\nkind: ApplyReplacements\nmetadata:\n  name: r\n" + textwrap.dedent(config),
        "pod.yaml": """
            apiVersion: v1
            kind: Pod
            metadata:
              name: my-pod
              labels:
                app: web
            spec:
              containers:
                - image: busybox:1.36
                  name: main
              restartPolicy: OnFailure
        """,
        "job.yaml": """
            apiVersion: batch/v1
            kind: Job
            metadata:
              name: hello
        """,
        "deploy.yaml": """
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: web
            spec:
              template:
                spec:
                  containers:
                    - name: main
                      image: nginx:1.25
                    - name: side
                      image: envoy:1.0
        """,
    })


def test_apply_replacements_copies_a_field_creating_the_target(tmp_path: Path) -> None:
    """examples/apply-replacements-simple: a Pod's spec becomes a Job's template spec (create)."""
    replacements(tmp_path, """
        replacements:
          - source: {kind: Pod, name: my-pod, fieldPath: spec}
            targets:
              - select: {name: hello, kind: Job}
                fieldPaths: [spec.template.spec]
                options: {create: true}
    """)
    result = fnrun("render", str(tmp_path), env=ON)
    assert result.code == 0, result.stderr
    assert docs(tmp_path / "job.yaml")[0]["spec"] == {"template": {"spec": docs(tmp_path / "pod.yaml")[0]["spec"]}}


def test_apply_replacements_list_selectors_delimiters_and_rejects(tmp_path: Path) -> None:
    """`[name=main]` picks a list element, a delimiter/index source and target swap one part of a
    value, a dotted key in brackets is one key, `reject` holds a selected resource back, and a
    missing field without `create` is left alone."""
    replacements(tmp_path, """
        replacements:
          - source: {kind: Pod, name: my-pod, fieldPath: "spec.containers.[name=main].image", options: {delimiter: ":", index: 1}}
            targets:
              - select: {kind: Deployment}
                fieldPaths: ["spec.template.spec.containers.[name=main].image"]
                options: {delimiter: ":", index: 1}
          - source: {kind: Pod, fieldPath: metadata.labels.app}
            targets:
              - select: {version: v1}
                reject: [{kind: Pod}]
                fieldPaths: ["metadata.annotations.[app.kubernetes.io/name]", spec.missing.field]
    """)
    result = fnrun("render", str(tmp_path), env=ON)
    assert result.code == 0, result.stderr
    containers = docs(tmp_path / "deploy.yaml")[0]["spec"]["template"]["spec"]["containers"]
    assert [c["image"] for c in containers] == ["nginx:1.36", "envoy:1.0"]
    assert docs(tmp_path / "pod.yaml")[0]["metadata"] == {"name": "my-pod", "labels": {"app": "web"}}
    assert docs(tmp_path / "job.yaml")[0]["metadata"] == {"name": "hello"}  # no annotations to set, none created
    assert "missing" not in str(docs(tmp_path / "deploy.yaml"))


def test_apply_replacements_refuses_a_source_that_is_not_one_resource(tmp_path: Path) -> None:
    replacements(tmp_path, """
        replacements:
          - source: {kind: ConfigMap, name: nowhere}
            targets:
              - select: {kind: Job}
    """)
    before = (tmp_path / "job.yaml").read_text()
    result = fnrun("render", str(tmp_path), env=ON)
    assert result.code == 1 and "ConfigMap/nowhere matches no resource" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert (tmp_path / "job.yaml").read_text() == before


def test_apply_replacements_refuses_another_config_kind(tmp_path: Path) -> None:
    write(tmp_path, {"app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"})
    result = fnrun("run", str(tmp_path), "--image", f"{CATALOG}/apply-replacements:latest", "--", "a=b", env=ON)
    assert_one_line_error(result, "apply-replacements", "exit code 1", code=1)
    assert "expect `ApplyReplacements.fn.kpt.dev`" in result.stderr


def test_no_op_and_drop_comments_leave_the_files_as_they_were(tmp_path: Path) -> None:
    """kpt's no-op and preserve-comments cases: neither changes a byte of the package."""
    text = "# the app\napiVersion: v1\nkind: ConfigMap # a map\nmetadata:\n  name: a\ndata:\n  k: v # the value\n"
    for name in ("no-op", "drop-comments"):
        write(tmp_path / name, {"app.yaml": text})
        result = fnrun("run", str(tmp_path / name), "--image", f"{CATALOG}/{name}:latest", env=ON)
        assert result.code == 0, result.stderr
        assert (tmp_path / name / "app.yaml").read_text() == text


def test_set_labels_labels_a_document_without_a_kind_as_kpt_does(tmp_path: Path) -> None:
    """kpt's krm-check-exclude-kustomize: kpt's set-labels gives a kind-less document (a
    kustomization.yaml) the label in metadata.labels, spec.selector and spec.selector.matchLabels."""
    from functions.kpt_catalog.set_labels import set_labels

    item = {"resources": ["resources.yaml"]}
    set_labels([item], {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"tier": "backend"}})
    assert item == {"resources": ["resources.yaml"], "metadata": {"labels": {"tier": "backend"}},
                    "spec": {"selector": {"tier": "backend", "matchLabels": {"tier": "backend"}}}}
