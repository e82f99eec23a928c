"""kpt's everyday catalog functions in-process (functions/kpt_catalog/).

Each function against packages shaped like the catalog's tests and examples
(kptdev/krm-functions-catalog tests/<fn>/ and examples/<fn>-*/), with the results their
expected diffs show, written out here; `bench/conformance_render.py CATALOG --builtin-catalog`
scores the catalog's own cases. Also: the builtins run only when asked, and an absent kpt image
offers them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from orchestrator.runtimes.host.kpt_catalog import catalog_name
from testing.in_process import fnrun_here
from testing.pipeline_helpers import assert_one_line_error

ON = {"FNRUN_BUILTIN_CATALOG": "1"}


def package(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "resources.yaml").write_text(textwrap.dedent(text).lstrip())
    return root


def documents(root: Path) -> list[dict]:
    from orchestrator.yamlio import fast

    return [d for d in fast.load_all((root / "resources.yaml").read_text(), "resources.yaml") if d is not None]


def run(root: Path, image: str, *args: str) -> list[dict]:
    result = fnrun_here("run", str(root), "--image", image, "--", *args, env=ON)
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return documents(root)


@pytest.mark.parametrize("image, name", [
    ("ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2", "set-labels"),
    ("gcr.io/kpt-fn/set-namespace:unstable", "set-namespace"),
    ("gcr.io/kpt-fn/apply-setters@sha256:" + "0" * 64, "apply-setters"),
    ("starlark", "starlark"),
    ("gcr.io/kpt-fn/kubeval:v0.3", None),
    ("example.com/set-labels:v1", None),
])
def test_catalog_names(image: str, name: str | None) -> None:
    assert catalog_name(image) == name


def test_set_namespace(tmp_path: Path) -> None:
    """Namespaced resources, the Namespace object, ServiceAccount subjects, CRD webhooks and
    depends-on references to moved resources follow; cluster-scoped kinds and custom resources
    without a namespace stay (catalog examples set-namespace-simple, set-namespace-depends-on)."""
    root = package(tmp_path, """
        apiVersion: v1
        kind: Namespace
        metadata:
          name: example
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: web # the web tier
          namespace: example
          annotations:
            config.kubernetes.io/depends-on: apps/namespaces/example/StatefulSet/db,apps/namespaces/example/StatefulSet/elsewhere
        ---
        apiVersion: apps/v1
        kind: StatefulSet
        metadata:
          name: db
          namespace: example
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata:
          name: crb
        subjects:
          - kind: ServiceAccount
            name: default
            namespace: example
        ---
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata:
          name: things.example.com
        spec:
          conversion:
            webhook:
              clientConfig:
                service:
                  name: svc
                  namespace: example
        ---
        apiVersion: example.com/v1
        kind: Thing
        metadata:
          name: no-namespace
        """)
    ns, web, db, crb, crd, thing = run(root, "gcr.io/kpt-fn/set-namespace:unstable", "namespace=prod")
    assert ns["metadata"]["name"] == "prod"
    assert web["metadata"]["namespace"] == db["metadata"]["namespace"] == "prod"
    assert web["metadata"]["annotations"]["config.kubernetes.io/depends-on"] == (
        "apps/namespaces/prod/StatefulSet/db,apps/namespaces/example/StatefulSet/elsewhere")
    assert "namespace" not in crb["metadata"] and crb["subjects"][0]["namespace"] == "prod"
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["namespace"] == "prod"
    assert "namespace" not in thing["metadata"]
    assert "  name: web # the web tier\n" in (root / "resources.yaml").read_text()


def test_set_namespace_matcher_changes_only_that_namespace(tmp_path: Path) -> None:
    root = package(tmp_path, """
        apiVersion: v1
        kind: Service
        metadata:
          name: a
          namespace: one
        ---
        apiVersion: v1
        kind: Service
        metadata:
          name: b
          namespace: two
        """)
    a, b = run(root, "gcr.io/kpt-fn/set-namespace:unstable", "namespace=new", "namespaceMatcher=two")
    assert (a["metadata"]["namespace"], b["metadata"]["namespace"]) == ("one", "new")


WORKLOADS = """
    apiVersion: v1
    kind: Service
    metadata:
      name: svc
    spec:
      selector:
        app: web
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
    spec:
      selector:
        matchLabels:
          app: web
      template:
        metadata:
          labels:
            app: web
        spec:
          containers:
            - name: web
              image: nginx:1.20.2
            - name: sidecar
              image: postgres:14.1
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: no-template
    spec:
      selector:
        matchLabels:
          app: x
    ---
    apiVersion: batch/v1
    kind: CronJob
    metadata:
      name: job
    spec:
      jobTemplate:
        spec:
          template:
            spec:
              containers:
                - name: job
                  image: nginx
    """


def test_set_labels(tmp_path: Path) -> None:
    """Metadata, Service and workload selectors, pod templates (catalog set-labels-full-coverage);
    a Deployment without a template gets none."""
    root = package(tmp_path, WORKLOADS)
    svc, web, bare, job = run(root, "gcr.io/kpt-fn/set-labels:unstable", "color=orange")
    want = {"color": "orange"}
    assert svc["metadata"]["labels"] == want and svc["spec"]["selector"] == {"app": "web", **want}
    assert web["spec"]["selector"]["matchLabels"] == web["spec"]["template"]["metadata"]["labels"] == {"app": "web", **want}
    assert "template" not in bare["spec"]
    assert job["spec"]["jobTemplate"]["metadata"]["labels"] == job["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"] == want


def test_set_annotations(tmp_path: Path) -> None:
    root = package(tmp_path, WORKLOADS)
    svc, web, bare, job = run(root, "gcr.io/kpt-fn/set-annotations:unstable", "fruit=apple")
    want = {"fruit": "apple"}
    assert svc["metadata"]["annotations"] == web["spec"]["template"]["metadata"]["annotations"] == want
    assert "annotations" not in svc["spec"]
    assert job["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["annotations"] == want


def test_set_image_tag_and_digest(tmp_path: Path) -> None:
    """Only images named `name`, any depth of containers (catalog set-image-simple, -digest)."""
    root = package(tmp_path, WORKLOADS)
    _, web, _, job = run(root, "gcr.io/kpt-fn/set-image:unstable", "name=nginx", "newName=bitnami/nginx", "newTag=1.21.4")
    assert [c["image"] for c in web["spec"]["template"]["spec"]["containers"]] == ["bitnami/nginx:1.21.4", "postgres:14.1"]
    assert job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] == "bitnami/nginx:1.21.4"
    digest = "sha256:" + "a" * 64
    _, web, _, _ = run(root, "gcr.io/kpt-fn/set-image:unstable", "name=postgres", f"digest={digest}")
    assert web["spec"]["template"]["spec"]["containers"][1]["image"] == f"postgres@{digest}"


def test_set_image_refuses_tag_and_digest_together(tmp_path: Path) -> None:
    root = package(tmp_path, WORKLOADS)
    result = fnrun_here("run", str(root), "--image", "gcr.io/kpt-fn/set-image:unstable", "--", "name=nginx", "newTag=1", "digest=sha256:1", env=ON)
    assert result.code == 1 and "`newTag` and `digest` both specified" in result.stderr


def test_apply_setters_keeps_types_and_comments(tmp_path: Path) -> None:
    """Scalars (a partial pattern, a number), a list from a YAML string (catalog apply-setters-simple)."""
    root = package(tmp_path, """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: web
        spec:
          replicas: 4 # kpt-set: ${replicas}
          template:
            spec:
              containers:
                - name: web
                  image: "nginx:1.16.1" # kpt-set: nginx:${tag}
        ---
        apiVersion: v1
        kind: MyKind
        metadata:
          name: foo # kpt-set: ${unset}
        environments: # kpt-set: ${env}
          - dev
          - stage
        """)
    web, kind = run(root, "gcr.io/kpt-fn/apply-setters:unstable", "replicas=3", "tag=1.16.2", "env=[prod, dev]")
    assert web["spec"]["replicas"] == 3
    assert web["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.16.2"
    assert kind["environments"] == ["prod", "dev"] and kind["metadata"]["name"] == "foo"
    text = (root / "resources.yaml").read_text()
    assert "  replicas: 3 # kpt-set: ${replicas}\n" in text and 'image: "nginx:1.16.2" # kpt-set: nginx:${tag}\n' in text


def test_search_replace(tmp_path: Path) -> None:
    """by-path + by-value + put-value, by-value-regex with capture groups, and by-path creating the
    field (catalog search-replace-simple and the documented examples)."""
    root = package(tmp_path, """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: the-deployment
          namespace: something-bar
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: something-foo
        """)
    deploy, cm = run(root, "gcr.io/kpt-fn/search-replace:unstable", "by-path=metadata.name", "by-value=the-deployment", "put-value=my-deployment")
    assert deploy["metadata"]["name"] == "my-deployment" and cm["metadata"]["name"] == "something-foo"
    deploy, cm = run(root, "gcr.io/kpt-fn/search-replace:unstable", "by-value-regex=something-(.*)", "put-value=project-${1}")
    assert (deploy["metadata"]["namespace"], cm["metadata"]["name"]) == ("project-bar", "project-foo")
    deploy, cm = run(root, "gcr.io/kpt-fn/search-replace:unstable", "by-path=metadata.namespace", "put-value=shop")
    assert deploy["metadata"]["namespace"] == cm["metadata"]["namespace"] == "shop"


def test_search_replace_reads_regexes_as_go_does_in_linear_time(tmp_path: Path) -> None:
    """by-value-regex is RE2, Go's syntax: POSIX classes match; `(a+)+b` on a long run of `a`s is
    answered at once (Python's backtracking engine would take longer than the universe has; the
    run's timeout is the only bound this test needs); a pattern Go refuses is one line naming it,
    with nothing of RE2's own logging on stderr, and nothing is written."""
    root = package(tmp_path, f"""
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: cm
        data:
          word: abc
          run: {"a" * 5000}
        """)
    cm, = run(root, "gcr.io/kpt-fn/search-replace:unstable", "by-value-regex=[[:alpha:]]{3}", "put-value=three")
    assert cm["data"]["word"] == "three"
    cm, = run(root, "gcr.io/kpt-fn/search-replace:unstable", "by-value-regex=(a+)+b", "put-value=stalled")
    assert cm["data"]["run"] == "a" * 5000
    before = (root / "resources.yaml").read_bytes()
    result = fnrun_here("run", str(root), "--image", "gcr.io/kpt-fn/search-replace:unstable", "--", r"by-value-regex=(\w)\1", "put-value=x", env=ON)
    assert_one_line_error(result, "search-replace", code=1)
    assert r"search-replace: by-value-regex: invalid regular expression '(\\w)\\1'" in result.stderr  # the function's own line
    assert "re2.cc" not in result.stderr and "absl" not in result.stderr
    assert (root / "resources.yaml").read_bytes() == before


@pytest.mark.engine
def test_only_when_asked_and_offered_when_absent(tmp_path: Path) -> None:
    """Without the flag or variable the image is what runs; it is absent here, so the one-line
    error names it and offers the builtin. Nothing is written."""
    root = package(tmp_path, WORKLOADS)
    before = (root / "resources.yaml").read_bytes()
    result = fnrun_here("run", str(root), "--image", "gcr.io/kpt-fn/set-labels:v0.1", "--image-pull-policy", "never", "--", "a=b")
    assert_one_line_error(result, "gcr.io/kpt-fn/set-labels:v0.1", "--builtin-catalog", code=4)
    assert (root / "resources.yaml").read_bytes() == before
    result = fnrun_here("run", str(root), "--builtin-catalog", "--image", "gcr.io/kpt-fn/set-labels:v0.1", "--results-format", "json", "--", "a=b")
    assert result.code == 0, result.stderr
    assert '"builtin": true' in result.stdout
