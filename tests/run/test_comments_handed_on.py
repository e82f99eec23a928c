"""A step whose function drops every comment (a PyYAML or JSON round trip) hands the next step the
items with the comments they had, as kpt does (it copies the input's comments onto the output):
`apply-setters` after such a step still finds its `# kpt-set:` markers
(orchestrator/merge/comments_kept.py). A function that kept some comments is handed on as it wrote
them. Exec functions and the in-process catalog: no engine."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.merge.comments_kept import with_comments_kept
from orchestrator.merge.origin import compare
from orchestrator.read.package import read_file
from orchestrator.resource import Resource
from testing.exec_functions import script
from testing.in_process import fnrun_here
from testing.kpt import CATALOG, ON

DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web  # the app\nspec:\n"
    "  replicas: 1 # kpt-set: ${replicas}\n"
)
#: A ruamel function that sets replicas to 4 where the item's text holds a `kpt-set` marker.
SEES_MARKER = script("ruamel", setup="import io\n", body="""
for item in items:
    text = io.StringIO()
    y.dump(item, text)
    if 'kpt-set' in text.getvalue():
        item['spec']['replicas'] = 4
""")
DROPS_ALL = script("pyyaml")
#: Keeps the name's comment, drops the marker: its own choice of comments.
DROPS_MARKER = script("ruamel", body="""
for item in items:
    if 'spec' in item:
        item['spec'].ca.items.pop('replicas', None)
""")


def _package(root: Path, steps: list[str]) -> Path:
    package = root / "pkg"
    package.mkdir()
    mutators = "".join(f"  - {step}\n" for step in steps)
    (package / "Kptfile").write_text(f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n{mutators}")
    (package / "deploy.yaml").write_text(DEPLOYMENT)
    return package


def _exec(root: Path, name: str, text: str) -> str:
    path = root / f"{name}.py"
    path.write_text(text)
    path.chmod(0o755)
    return f"exec: {path}"


def test_the_step_after_a_pyyaml_step_reads_the_markers_as_kpt_hands_them(tmp_path: Path) -> None:
    package = _package(tmp_path, [_exec(tmp_path, "drops", DROPS_ALL), _exec(tmp_path, "sees", SEES_MARKER)])
    if shutil.which("kpt"):
        theirs = tmp_path / "kpt"
        shutil.copytree(package, theirs)
        subprocess.run(["kpt", "fn", "render", str(theirs), "--allow-exec"], check=True, capture_output=True, timeout=120)
        assert "replicas: 4 # kpt-set:" in (theirs / "deploy.yaml").read_text()
    result = fnrun_here("render", str(package), "--allow-exec", "--no-status")
    assert result.code == 0, result.stderr
    assert (package / "deploy.yaml").read_text() == DEPLOYMENT.replace("replicas: 1", "replicas: 4")


def test_apply_setters_after_a_pyyaml_step(tmp_path: Path) -> None:
    setters = f"image: {CATALOG}/apply-setters:v0.2.0\n    configMap:\n      replicas: '5'"
    package = _package(tmp_path, [_exec(tmp_path, "drops", DROPS_ALL), setters])
    result = fnrun_here("render", str(package), "--allow-exec", "--no-status", env=ON)
    assert result.code == 0, result.stderr
    assert (package / "deploy.yaml").read_text() == DEPLOYMENT.replace("replicas: 1", "replicas: 5")


def test_a_function_that_kept_some_comments_is_handed_on_as_it_wrote_them(tmp_path: Path) -> None:
    package = _package(tmp_path, [_exec(tmp_path, "drops", DROPS_MARKER), _exec(tmp_path, "sees", SEES_MARKER)])
    result = fnrun_here("render", str(package), "--allow-exec", "--no-status")
    assert result.code == 0, result.stderr
    assert "replicas: 1" in (package / "deploy.yaml").read_text()


def _sent() -> list[Resource]:
    return read_file("deploy.yaml", DEPLOYMENT.encode())[1]


def _returned(sent: Resource, replicas: int, text: str | None = None) -> Resource:
    data = {**sent.data, "spec": {"replicas": replicas}}
    return Resource(data, text)


@pytest.mark.parametrize(("replicas", "text", "handed"), [
    (1, None, "the sent item"),  # left as it was, in its place: the very item sent
    (3, None, "the sent text, edited"),
    (3, "kind: Deployment  # mine\n", "its own"),  # a comment of its own
])
def test_which_item_is_handed_on(replicas: int, text: str | None, handed: str) -> None:
    sent = _sent()
    returned = [_returned(sent[0], replicas, text)]
    if text is None:
        returned[0] = Resource(returned[0].data)  # a function's text: dumped without comments
    changes, handed_on = with_comments_kept(compare(sent, returned), returned)
    out = handed_on[0]
    assert changes.pairs == [(sent[0], out, replicas != 1)]  # lineage follows what is handed on
    if handed == "the sent item":
        assert out is sent[0]
    elif handed == "its own":
        assert out is returned[0]
    else:
        assert not out.fresh and out.data == returned[0].data
        assert out.text.count("#") == 2 and "replicas: 3 # kpt-set: ${replicas}" in out.text


def test_an_item_sent_without_comments_is_handed_on_as_returned() -> None:
    sent = read_file("cm.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n")[1]
    returned = [Resource({**sent[0].data, "data": {"k": "w"}})]
    assert with_comments_kept(compare(sent, returned), returned)[1][0] is returned[0]


def test_lineage_follows_what_is_handed_on(tmp_path: Path) -> None:
    """A resource changed by one function, then passed unchanged through one that drops every
    comment, still lists the first among its transformations (`run -o stdout`)."""
    package = tmp_path / "pkg"
    package.mkdir()
    for name, function in (("a", _exec(tmp_path, "sees", SEES_MARKER)), ("b", _exec(tmp_path, "drops", DROPS_ALL))):
        path = function.removeprefix("exec: ")
        (package / f"{name}-fn.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n"
            f"    config.kubernetes.io/function: |\n      exec:\n        path: {path}\n")
    (package / "deploy.yaml").write_text(DEPLOYMENT)
    result = fnrun_here("run", str(package), "--allow-exec", "-o", "stdout", "--transformer-annotations")
    assert result.code == 0, result.stderr
    deployment = result.stdout[result.stdout.index("kind: Deployment"):]
    assert "configuredIn: a-fn.yaml" in deployment.split("- apiVersion")[0], result.stdout
    assert "replicas: 4 # kpt-set: ${replicas}" in deployment
