"""The catalog functions, each run as an exec function (`python3 functions/<name>.py`, ResourceList on
stdin) and judged on its real output: edits, comments kept, idempotence, results and exit codes.
The same modules are the images' entry points (`python3 -m functions.<name>`, see Dockerfiles/)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml.comments import CommentedMap

from functions import sdk
from functions.sdk import layout
from functions.sdk.resourcelist import dump_yaml, new_yaml
from tests.testing.in_process import script_here  # as `tests.`: the re-run under another ruamel has no conftest

REPO = Path(__file__).resolve().parents[2]
CATALOG = {  # image name -> module
    "set-namespace": "set_namespace",
    "set-labels": "set_labels",
    "require-resource-limits": "require_resource_limits",
    "tshirt-size": "tshirt_size",
    "inject-sidecar": "inject_sidecar",
    "check-service-selectors": "check_service_selectors",
}
FUNCTION_KEY = "config.kubernetes.io/function"


@dataclass
class Output:
    code: int
    text: str
    stderr: str

    @property
    def data(self) -> Any:
        return new_yaml().load(self.text)

    @property
    def items(self) -> list[sdk.Resource]:
        return [sdk.Resource(i) for i in self.data["items"]]

    def item(self, kind: str, name: str) -> sdk.Resource:
        return next(i for i in self.items if i.kind == kind and i.name == name)

    @property
    def results(self) -> list[dict]:
        return sdk.plain(self.data.get("results") or [])


def stamp(doc: CommentedMap, path: str, index: int) -> CommentedMap:
    """What the orchestrator adds on read: both sets of path/index annotations."""
    meta = doc.setdefault("metadata", CommentedMap())
    ann = meta.setdefault("annotations", CommentedMap())
    for prefix in ("", "internal."):
        ann[f"{prefix}config.kubernetes.io/path"] = path
        ann[f"{prefix}config.kubernetes.io/index"] = str(index)
    return doc


def encode(items: list[tuple[CommentedMap, str]], config: str | None = None) -> str:
    """A ResourceList laid out as the orchestrator sends one: each (stamped) item in the style of the
    text it was read from, head comments above its dash, the function config indented below."""
    out = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
    out += "".join(layout.as_item(dump_yaml(doc, layout.guess_style(text)), 0, 2) for doc, text in items)
    if config:
        out += "functionConfig:\n" + textwrap.indent(textwrap.dedent(config), "  ")
    return out


def resource_list(docs: str, config: str | None = None, path: str = "app.yaml") -> str:
    """A ResourceList of the `---`-separated documents, stamped as if read from `path`."""
    texts = re.split(r"(?m)^---\n", textwrap.dedent(docs))
    return encode([(stamp(new_yaml().load(text), path, i), text) for i, text in enumerate(texts)], config)


def config_map(**data: str) -> str:
    lines = "".join(f"  {k}: {v!r}\n" for k, v in data.items())
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn-config\ndata:\n{lines}"


def run(module: str, stdin: str, cwd: Path | None = None) -> Output:
    """Run the catalog module as an exec function runs it (its file as `__main__`), from outside
    the checkout (as the orchestrator does), in a fork of this process: what it makes of its input
    is the subject here; the script and the module started as new interpreters are
    test_image_entry_point_form's."""
    proc = script_here(REPO / "functions" / f"{module}.py", stdin=stdin, cwd=cwd or Path("/"))
    assert "Traceback" not in proc.stderr, proc.stderr
    return Output(proc.code, proc.stdout, proc.stderr)


def run_twice(module: str, stdin: str) -> Output:
    """Run, then run again over the output: the second run must change nothing."""
    first = run(module, stdin)
    assert first.code == 0, first.stderr
    second = run(module, first.text)
    assert second.code == 0 and second.text == first.text
    return first


DEPLOYMENT = textwrap.dedent("""\
    # The storefront.
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web # keep me
      namespace: shop
      labels:
        app: web
    spec:
      replicas: 2
      selector:
        matchLabels:
          app: web
      template:
        metadata:
          labels:
            app: web
        spec:
          initContainers:
            - name: migrate
              image: migrate:1
          containers:
            # the main container
            - name: nginx
              image: "nginx:1.25" # pinned
              resources:
                limits:
                  cpu: 500m
    """)
SERVICE = textwrap.dedent("""\
    apiVersion: v1
    kind: Service
    metadata:
      name: web
      namespace: shop
    spec:
      selector:
        app: web # pods of the Deployment
      ports:
        - port: 80
    """)


def assert_comments_kept(text: str) -> None:
    for comment in ("name: web # keep me", "# the main container", 'image: "nginx:1.25" # pinned'):
        assert comment in text, comment


# every function ----------------------------------------------------------------------------------
@pytest.mark.parametrize("image, module", CATALOG.items())
def test_each_function_has_an_image_and_a_sample(image: str, module: str) -> None:
    dockerfile = (REPO / "Dockerfiles" / f"{image}.Dockerfile").read_text()
    assert re.search(r"^FROM fnrun/fnrun-base:v1$", dockerfile, re.M)
    assert f'ENTRYPOINT ["python3", "-m", "functions.{module}"]' in dockerfile
    declared = [d for d in sample_docs(image) if FUNCTION_KEY in d["metadata"].get("annotations", {})]
    assert len(declared) == 1
    ann = declared[0]["metadata"]["annotations"]
    assert new_yaml().load(ann[FUNCTION_KEY]) == {"container": {"image": f"fnrun/{image}:v1"}}
    assert ann["config.kubernetes.io/local-config"] == "true"


def sample_docs(image: str) -> list[CommentedMap]:
    return [d for p in sorted((REPO / "samples" / image).glob("*.yaml")) for d in new_yaml().load_all(p.read_text())]


def sample_list(image: str) -> str:
    """The sample package as the orchestrator would send it: stamped items, its config apart."""
    items, config = [], None
    for path in sorted((REPO / "samples" / image).glob("*.yaml")):
        for index, text in enumerate(re.split(r"(?m)^---\n", path.read_text())):
            doc = new_yaml().load(text)
            if FUNCTION_KEY in doc["metadata"].get("annotations", {}):
                config = text
            else:
                items.append((stamp(doc, path.name, index), text))
    return encode(items, config)


@pytest.mark.parametrize("image, module", CATALOG.items())
def test_samples_run_clean_and_converge(image: str, module: str) -> None:
    out = run_twice(module, sample_list(image))
    assert [r for r in out.results if r["severity"] == "error"] == []


def test_image_entry_point_form(tmp_path: Path) -> None:
    """`python3 -m functions.<name>` with fnrun under /opt/fnrun-like PYTHONPATH, as in the images,
    and the file run as a script, both started anew, give what the script run in a fork gives."""
    root = tmp_path / "opt" / "fnrun"
    for part in ("functions", "orchestrator"):
        shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(root)}
    stdin = resource_list(DEPLOYMENT, config_map(namespace="prod"))
    as_module = subprocess.run([sys.executable, "-m", "functions.set_namespace"], input=stdin, env=env,
                               capture_output=True, text=True, cwd=tmp_path)
    as_script = subprocess.run([sys.executable, str(root / "functions" / "set_namespace.py")], input=stdin,
                               capture_output=True, text=True, cwd=tmp_path)
    assert as_module.returncode == as_script.returncode == 0, as_module.stderr + as_script.stderr
    assert as_module.stdout == as_script.stdout and "namespace: prod" in as_module.stdout
    here = script_here(REPO / "functions" / "set_namespace.py", stdin=stdin, cwd=tmp_path)  # what the other tests use
    assert (here.code, here.stdout, here.stderr) == (0, as_script.stdout, as_script.stderr)


@pytest.mark.parametrize("module", CATALOG.values())
def test_modules_are_executables_for_exec_functions(module: str) -> None:
    """`exec: {path: functions/<name>.py}` runs the file itself: it needs its shebang and mode."""
    path = REPO / "functions" / f"{module}.py"
    assert os.access(path, os.X_OK) and path.read_text().startswith("#!/usr/bin/env python3\n")


# set-namespace -----------------------------------------------------------------------------------
def test_set_namespace_moves_namespaced_resources_only() -> None:
    docs = DEPLOYMENT + "---\n" + SERVICE + textwrap.dedent("""\
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: no-namespace-yet
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRole
        metadata:
          name: reader
        ---
        apiVersion: v1
        kind: Namespace
        metadata:
          name: shop
        ---
        apiVersion: v1
        kind: Namespace
        metadata:
          name: unrelated
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: tool-settings
          namespace: shop
          annotations:
            config.kubernetes.io/local-config: "true"
        """)
    out = run_twice("set_namespace", resource_list(docs, config_map(namespace="prod")))
    assert out.results == []
    assert {(i.kind, i.name): i.namespace for i in out.items} == {
        ("Deployment", "web"): "prod", ("Service", "web"): "prod", ("ConfigMap", "no-namespace-yet"): "prod",
        ("ClusterRole", "reader"): None, ("Namespace", "prod"): None, ("Namespace", "unrelated"): None,
        ("ConfigMap", "tool-settings"): "shop",
    }
    assert_comments_kept(out.text)
    assert "# The storefront." in out.text
    for item in out.items:  # the orchestrator's annotations come back
        assert item.annotations["config.kubernetes.io/path"] == "app.yaml"
        assert item.annotations["internal.config.kubernetes.io/index"] == item.annotations["config.kubernetes.io/index"]


def test_set_namespace_follows_references_out_of_moved_namespaces() -> None:
    docs = """\
        apiVersion: v1
        kind: ServiceAccount
        metadata: {name: app, namespace: shop}
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata: {name: app}
        subjects:
          - {kind: ServiceAccount, name: app, namespace: shop}
          - {kind: ServiceAccount, name: agent, namespace: kube-system}
          - {kind: Group, name: shop, apiGroup: rbac.authorization.k8s.io}
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: RoleBinding
        metadata: {name: app, namespace: shop}
        subjects:
          - {kind: ServiceAccount, name: app, namespace: shop}
        ---
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingWebhookConfiguration
        metadata: {name: hook}
        webhooks:
          - name: check.example.com
            clientConfig:
              service: {name: hook, namespace: shop}
        ---
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata: {name: widgets.example.com}
        spec:
          group: example.com
          scope: Cluster
          names: {kind: Widget, plural: widgets}
        ---
        apiVersion: example.com/v1
        kind: Widget
        metadata: {name: w}
        """
    out = run_twice("set_namespace", resource_list(docs, config_map(namespace="prod")))
    crb = out.item("ClusterRoleBinding", "app")
    assert [s.get("namespace") for s in crb.get("subjects")] == ["prod", "kube-system", None]
    assert out.item("RoleBinding", "app").get("subjects[0].namespace") == "prod"
    assert out.item("ValidatingWebhookConfiguration", "hook").get("webhooks[0].clientConfig.service.namespace") == "prod"
    assert out.item("Widget", "w").namespace is None, "the CRD in the list declares Widget cluster-scoped"


@pytest.mark.parametrize("config, message", [
    (config_map(namespace="Not_Valid"), "namespace 'Not_Valid' is not a valid namespace name (RFC 1123 label)"),
    (config_map(), "missing required config field 'namespace'"),
    (config_map(namespace="a", extra="b"), "unknown config field 'extra' (known: namespace)"),
    (None, "missing required config field 'namespace'"),
])
def test_set_namespace_config_errors(config: str | None, message: str) -> None:
    out = run("set_namespace", resource_list(DEPLOYMENT, config))
    assert (out.code, out.text) == (1, "")
    assert out.stderr == f"set-namespace: {message}\n"


def test_set_namespace_from_a_custom_resource() -> None:
    config = "apiVersion: fnrun.dev/v1\nkind: SetNamespace\nmetadata: {name: x}\nspec:\n  namespace: prod\n"
    assert run_twice("set_namespace", resource_list(DEPLOYMENT, config)).item("Deployment", "web").namespace == "prod"


# set-labels --------------------------------------------------------------------------------------
CRONJOB = textwrap.dedent("""\
    apiVersion: batch/v1
    kind: CronJob
    metadata: {name: nightly}
    spec:
      schedule: "0 3 * * *"
      jobTemplate:
        spec:
          template:
            spec:
              containers: [{name: job, image: job:1}]
    """)
SELECTORLESS_SERVICE = textwrap.dedent("""\
    apiVersion: v1
    kind: Service
    metadata: {name: external-db}
    spec:
      ports: [{port: 5432}]
    """)


def labelled_package() -> str:
    return "---\n".join(textwrap.dedent(d) for d in (DEPLOYMENT, SERVICE, CRONJOB, SELECTORLESS_SERVICE))


def test_set_labels_labels_resources_and_pod_templates_not_selectors() -> None:
    out = run_twice("set_labels", resource_list(labelled_package(), config_map(team="shop", tier="front")))
    want = {"team": "shop", "tier": "front"}
    deployment = out.item("Deployment", "web")
    assert deployment.labels == {"app": "web", **want}
    assert deployment.pod_labels == {"app": "web", **want}
    assert deployment.get("spec.selector.matchLabels") == {"app": "web"}, "immutable in a live cluster"
    assert out.item("Service", "web").get("spec.selector") == {"app": "web"}
    cron = out.item("CronJob", "nightly")
    assert cron.labels == cron.pod_labels == cron.get("spec.jobTemplate.metadata.labels") == want
    assert out.item("Service", "external-db").labels == want
    assert_comments_kept(out.text)


def test_set_labels_include_selectors() -> None:
    config = """\
        apiVersion: fnrun.dev/v1
        kind: SetLabels
        metadata: {name: x}
        spec:
          labels: {team: shop}
          includeSelectors: true
        """
    out = run_twice("set_labels", resource_list(labelled_package(), config))
    assert out.item("Deployment", "web").get("spec.selector.matchLabels") == {"app": "web", "team": "shop"}
    assert out.item("Service", "web").get("spec.selector") == {"app": "web", "team": "shop"}
    assert out.item("Service", "external-db").get("spec.selector") is None, "no selector is created"
    assert out.item("CronJob", "nightly").get("spec.jobTemplate.spec.selector") is None
    assert "app: web # pods of the Deployment" in out.text


@pytest.mark.parametrize("labels, message", [
    ({"bad key!": "x"}, "label key 'bad key!' is not a valid Kubernetes label key"),
    ({"team": "-dash"}, "label team: value '-dash' is not a valid label value"),
    ({"team": "x" * 64}, "is not a valid label value"),
    ({}, "no labels given"),
])
def test_set_labels_rejects_invalid_labels(labels: dict, message: str) -> None:
    out = run("set_labels", resource_list(DEPLOYMENT, config_map(**labels)))
    assert out.code == 1 and out.text == "" and message in out.stderr and out.stderr.count("\n") == 1


def test_set_labels_accepts_prefixed_keys_and_empty_values() -> None:
    config = "kind: SetLabels\napiVersion: fnrun.dev/v1\nlabels:\n  app.kubernetes.io/part-of: shop\n  canary: ''\n"
    out = run_twice("set_labels", resource_list(DEPLOYMENT, config))
    assert out.item("Deployment", "web").labels == {"app": "web", "app.kubernetes.io/part-of": "shop", "canary": ""}


# require-resource-limits ---------------------------------------------------------------------------
def test_require_resource_limits_reports_each_missing_limit() -> None:
    docs = DEPLOYMENT + "---\n" + textwrap.dedent(CRONJOB) + "---\n" + textwrap.dedent(SERVICE)
    stdin = resource_list(docs, path="apps/web.yaml")
    out = run("require_resource_limits", stdin)
    assert out.code == 1 and out.stderr == ""
    assert out.data["items"] == new_yaml().load(stdin)["items"], "a validator edits nothing"
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"}
    got = {(r["resourceRef"]["name"], r["field"]["path"]): r for r in out.results}
    assert sorted(got) == [
        ("nightly", "spec.jobTemplate.spec.template.spec.containers[name=job].resources.limits.cpu"),
        ("nightly", "spec.jobTemplate.spec.template.spec.containers[name=job].resources.limits.memory"),
        ("web", "spec.template.spec.containers[name=nginx].resources.limits.memory"),
        ("web", "spec.template.spec.initContainers[name=migrate].resources.limits.cpu"),
        ("web", "spec.template.spec.initContainers[name=migrate].resources.limits.memory"),
    ]
    first = got[("web", "spec.template.spec.initContainers[name=migrate].resources.limits.cpu")]
    assert first == {
        "message": "init container 'migrate' of Deployment shop/web has no cpu limit",
        "severity": "error",
        "resourceRef": ref,
        "file": {"path": "apps/web.yaml", "index": 0},
        "field": {"path": "spec.template.spec.initContainers[name=migrate].resources.limits.cpu"},
        "tags": {"container": "migrate", "resource": "cpu"},
    }
    assert got[("nightly", next(p for n, p in got if n == "nightly"))]["file"] == {"path": "apps/web.yaml", "index": 1}


def test_require_resource_limits_config_and_clean_pass() -> None:
    only_cpu = run("require_resource_limits", resource_list(DEPLOYMENT, config_map(resources="cpu")))
    assert [r["field"]["path"] for r in only_cpu.results] == [
        "spec.template.spec.initContainers[name=migrate].resources.limits.cpu"]
    soft = run("require_resource_limits", resource_list(DEPLOYMENT, config_map(severity="warning")))
    assert soft.code == 0 and {r["severity"] for r in soft.results} == {"warning"}
    clean = DEPLOYMENT.replace("cpu: 500m", "cpu: 500m\n              memory: 1Gi").replace(
        "image: migrate:1", "image: migrate:1\n          resources: {limits: {cpu: 100m, memory: 64Mi}}")
    out = run("require_resource_limits", resource_list(clean))
    assert (out.code, out.results, out.stderr) == (0, [], "")
    bad = run("require_resource_limits", resource_list(DEPLOYMENT, config_map(severity="fatal")))
    assert bad.code == 1 and "expected one of error, warning, got 'fatal'" in bad.stderr


# tshirt-size ----------------------------------------------------------------------------------------
def sized(size: str) -> str:
    return DEPLOYMENT.replace("  labels:\n    app: web\nspec:",
                              f"  labels:\n    app: web\n  annotations:\n    fnrun.dev/tshirt-size: {size}\nspec:", 1)


def test_tshirt_size_sets_requests_and_limits_idempotently() -> None:
    stdin = resource_list(sized("medium") + "---\n" + textwrap.dedent(SERVICE))
    out = run_twice("tshirt_size", stdin)
    web = out.item("Deployment", "web")
    assert [sdk.plain(c.get("resources")) for c in web.containers()] == 2 * [
        {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"cpu": "500m", "memory": "1Gi"}}]
    assert out.item("Service", "web").get("spec") == new_yaml().load(textwrap.dedent(SERVICE))["spec"]
    assert_comments_kept(out.text)
    resized = run("tshirt_size", out.text.replace("tshirt-size: medium", "tshirt-size: large"))
    assert resized.item("Deployment", "web").get("spec.template.spec.containers[name=nginx].resources.limits") == {
        "cpu": "2", "memory": "4Gi"}


def test_tshirt_size_keeps_other_resources_and_takes_custom_sizes() -> None:
    docs = sized("XL").replace("cpu: 500m", "cpu: 500m\n              ephemeral-storage: 1Gi")
    config = """\
        apiVersion: fnrun.dev/v1
        kind: TshirtSize
        metadata: {name: sizes}
        spec:
          sizes:
            xl: {requests: {cpu: 2}, limits: {cpu: 4, memory: 8Gi}}
        """
    out = run_twice("tshirt_size", resource_list(docs, config))
    nginx = out.item("Deployment", "web").get("spec.template.spec.containers[name=nginx].resources")
    assert sdk.plain(nginx) == {"limits": {"cpu": "4", "ephemeral-storage": "1Gi", "memory": "8Gi"},
                                "requests": {"cpu": "2"}}


def test_tshirt_size_unknown_size_and_non_workload() -> None:
    service = SERVICE.replace("  namespace: shop\n", "  namespace: shop\n  annotations: {fnrun.dev/tshirt-size: small}\n")
    stdin = resource_list(sized("huge") + "---\n" + textwrap.dedent(service))
    out = run("tshirt_size", stdin)
    assert out.code == 1
    error, warning = sorted(out.results, key=lambda r: r["severity"])
    assert error["message"] == "Deployment shop/web: unknown t-shirt size 'huge' (known: small, medium, large)"
    assert error["field"] == {"path": "metadata.annotations['fnrun.dev/tshirt-size']", "currentValue": "huge"}
    assert error["resourceRef"]["name"] == "web" and error["file"] == {"path": "app.yaml", "index": 0}
    assert warning["severity"] == "warning" and warning["resourceRef"]["kind"] == "Service"
    assert out.data["items"] == new_yaml().load(stdin)["items"]


def test_tshirt_size_configurable_annotation() -> None:
    docs = sized("small").replace("fnrun.dev/tshirt-size", "example.com/size")
    out = run_twice("tshirt_size", resource_list(docs, config_map(annotation="example.com/size")))
    assert out.item("Deployment", "web").get("spec.template.spec.containers[name=nginx].resources.requests.cpu") == "100m"


# inject-sidecar -------------------------------------------------------------------------------------
SIDECAR_CONFIG = textwrap.dedent("""\
    apiVersion: fnrun.dev/v1
    kind: SidecarInjection
    metadata: {name: proxy}
    spec:
      selector:
        kinds: [Deployment]
        matchLabels: {app: web}
      initContainers:
        - name: setup
          image: setup:1
      containers:
        # injected by inject-sidecar
        - name: proxy
          image: proxy:2 # the mesh proxy
      volumes:
        - name: proxy-certs
          emptyDir: {}
    """)
STATEFULSET = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: db, labels: {app: web}}
    spec:
      template:
        spec:
          containers: [{name: db, image: db:1}]
    """)


def test_inject_sidecar_adds_once_and_keeps_comments() -> None:
    bare = DEPLOYMENT.replace("      initContainers:\n        - name: migrate\n          image: migrate:1\n", "")
    out = run_twice("inject_sidecar", resource_list(bare + "---\n" + textwrap.dedent(STATEFULSET), SIDECAR_CONFIG))
    web = out.item("Deployment", "web")
    assert [(c.name, c.init) for c in web.containers()] == [("setup", True), ("nginx", False), ("proxy", False)]
    assert list(web.get("spec.template.spec")) == ["initContainers", "containers", "volumes"]
    assert web.get("spec.template.spec.volumes") == [{"name": "proxy-certs", "emptyDir": {}}]
    assert [c.name for c in out.item("StatefulSet", "db").containers()] == ["db"], "kind not selected"
    assert_comments_kept(out.text)
    assert "image: proxy:2 # the mesh proxy" in out.text


def test_inject_sidecar_leaves_the_configs_comments_between_keys_behind() -> None:
    """ruamel hangs the lines after an entry (a blank line, a comment above the next config key) on
    the entry's last value: copied as they are, they would land inside the workload."""
    config = SIDECAR_CONFIG.replace("  volumes:\n", "\n  # what the proxy mounts\n  volumes:\n")
    config = config.replace("  containers:\n", "\n  containers:\n").replace("emptyDir: {}\n", "emptyDir: {} # scratch\n\n# end\n")
    bare = DEPLOYMENT.replace("      initContainers:\n        - name: migrate\n          image: migrate:1\n", "")
    out = run_twice("inject_sidecar", resource_list(bare, config))
    item = out.text[: out.text.index("functionConfig:")]
    assert "# what the proxy mounts" not in item and "# end" not in item
    lines = [line.strip() for line in item.splitlines()]
    assert lines[lines.index("image: proxy:2 # the mesh proxy") + 1] == "volumes:"
    assert lines[lines.index("image: setup:1") + 1] == "containers:"
    assert "emptyDir: {} # scratch" in lines, "the entry's own end-of-line comment travels"


def test_inject_sidecar_keeps_an_inline_list_inline_without_comments() -> None:
    """`containers: [{...}]` with a commented entry appended would break inside the brackets."""
    config = SIDECAR_CONFIG.replace("kinds: [Deployment]", "kinds: [StatefulSet]")
    inline_pod = STATEFULSET.replace("  template:\n    spec:\n      containers: [{name: db, image: db:1}]\n",
                                     "  template: {spec: {containers: [{name: db, image: db:1}]}}\n")
    out = run_twice("inject_sidecar", resource_list(STATEFULSET + "---\n" + inline_pod.replace("name: db,", "name: db2,"),
                                                    config))
    item = out.text[: out.text.index("functionConfig:")]
    [line] = [line for line in item.splitlines() if line.strip().startswith("containers: [")]
    assert line.strip() == "containers: [{name: db, image: db:1}, {name: proxy, image: proxy:2}]"
    assert "template: {spec: {initContainers: [{name: setup, image: setup:1}], containers: [{name: db2, image: db:1}, " \
           "{name: proxy, image: proxy:2}], volumes: [{name: proxy-certs, emptyDir: {}}]}}\n" in item
    assert "# the mesh proxy" not in item
    for name in ("db", "db2"):
        assert [c.name for c in out.item("StatefulSet", name).containers()] == ["setup", name, "proxy"]


def test_inject_sidecar_selects_by_annotation_and_warns_on_a_different_namesake() -> None:
    config = SIDECAR_CONFIG.replace("kinds: [Deployment]\n    matchLabels: {app: web}",
                                    "matchAnnotations: {fnrun.dev/proxy: 'on'}")
    annotated = STATEFULSET.replace("labels: {app: web}}", "labels: {app: web}, annotations: {fnrun.dev/proxy: 'on'}}")
    existing = DEPLOYMENT.replace("          image: migrate:1\n", "          image: migrate:1\n        - name: setup\n          image: setup:0\n")
    existing = existing.replace("metadata:\n  name: web", "metadata:\n  annotations: {fnrun.dev/proxy: 'on'}\n  name: web")
    out = run("inject_sidecar", resource_list(existing + "---\n" + textwrap.dedent(annotated), config))
    assert out.code == 0
    web = out.item("Deployment", "web")
    assert [c.name for c in web.containers()] == ["migrate", "setup", "nginx", "proxy"]
    assert web.get("spec.template.spec.initContainers[name=setup].image") == "setup:0", "left as it is"
    assert [c.name for c in out.item("StatefulSet", "db").containers()] == ["setup", "db", "proxy"]
    assert [(r["severity"], r["field"]["path"]) for r in out.results] == [
        ("warning", "spec.template.spec.initContainers[name=setup]")]


@pytest.mark.parametrize("spec, message", [
    ("selector: {kinds: [Deployment]}", "nothing to inject"),
    ("containers: [{image: x}]", "config field 'containers[0]': expected a mapping with a name"),
    ("containers: [{name: a}, {name: a}]", "'a' appears twice"),
    ("containers: [{name: a}]\n  selector: {kind: [Deployment]}", "unknown config field selector.'kind'"),
])
def test_inject_sidecar_config_errors(spec: str, message: str) -> None:
    config = f"apiVersion: fnrun.dev/v1\nkind: SidecarInjection\nmetadata: {{name: x}}\nspec:\n  {spec}\n"
    out = run("inject_sidecar", resource_list(DEPLOYMENT, config))
    assert out.code == 1 and out.text == "" and message in out.stderr


# check-service-selectors -------------------------------------------------------------------------------
def test_check_service_selectors() -> None:
    docs = "---\n".join(textwrap.dedent(d) for d in (DEPLOYMENT, SERVICE, """\
        apiVersion: v1
        kind: Service
        metadata: {name: typo, namespace: shop}
        spec:
          selector: {app: web, tier: frontend}
        """, """\
        apiVersion: v1
        kind: Service
        metadata: {name: web, namespace: elsewhere}
        spec:
          selector: {app: web}
        """, """\
        apiVersion: v1
        kind: Service
        metadata: {name: ext, namespace: shop}
        spec: {type: ExternalName, externalName: db.example.com, selector: {app: nothing}}
        """, SELECTORLESS_SERVICE))
    stdin = resource_list(docs)
    out = run("check_service_selectors", stdin)
    assert out.code == 1 and out.data["items"] == new_yaml().load(stdin)["items"]
    assert out.results == [
        {"message": "Service typo: selector app=web,tier=frontend matches no workload's pods in namespace 'shop'; "
                    "closest is Deployment shop/web, whose pods lack tier=frontend",
         "severity": "error",
         "resourceRef": {"apiVersion": "v1", "kind": "Service", "name": "typo", "namespace": "shop"},
         "file": {"path": "app.yaml", "index": 2},
         "field": {"path": "spec.selector", "currentValue": {"app": "web", "tier": "frontend"}}},
        {"message": "Service web: selector app=web matches no workload's pods in namespace 'elsewhere'",
         "severity": "error",
         "resourceRef": {"apiVersion": "v1", "kind": "Service", "name": "web", "namespace": "elsewhere"},
         "file": {"path": "app.yaml", "index": 3},
         "field": {"path": "spec.selector", "currentValue": {"app": "web"}}},
    ]


def test_check_service_selectors_passes_on_matching_pods() -> None:
    out = run("check_service_selectors", resource_list(DEPLOYMENT + "---\n" + textwrap.dedent(SERVICE)))
    assert (out.code, out.results) == (0, [])
