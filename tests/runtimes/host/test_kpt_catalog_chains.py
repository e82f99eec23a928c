"""kpt's catalog functions in-process, chained as users chain them, hand on what kpt's containers
hand on: every comment of an item on the fields a step leaves in place (kpt copies the input's
comments onto the output, kyaml's comments.CopyComments; its own e2e case preserve-comments runs
drop-comments and expects every comment kept), and an item a step leaves alone as it came, byte
for byte. So apply-setters finds its `# kpt-set:` markers after any other step, in place
(`render`, `run`), on stdout and in another directory.

What kpt makes of a package is worked out by calling the catalog transforms directly on its
documents (tests/testing/kpt_packages.py `expected`), with no fnrun in between."""

from __future__ import annotations

import itertools
import random
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from orchestrator.run.resourcelist import decode
from testing.in_process import fnrun_here
from testing.kpt_packages import STEPS, comments, documents, expected, image, kptfile, package
from testing.sizing import examples

ON = {"FNRUN_BUILTIN_CATALOG": "1"}
ISSUE_STEPS = ("set-namespace", "set-labels", "apply-setters")

DEPLOYMENT = textwrap.dedent("""\
    # the web tier
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: nginx # kpt-set: ${app}
      labels:
        enabled: "true"
    spec:
      replicas: 1 # kpt-set: ${replicas}
      template:
        spec:
          containers:
            - name: web
              image: 'nginx:1.0'
    # end of the web tier
    """)
LOCAL = textwrap.dedent("""\
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: settings # never deployed
      annotations:
        config.kubernetes.io/local-config: "true"
    data:
      enabled: "true"
      other: 'x'
    """)


def ok(*args: str, setters_match: bool = True) -> str:
    """fnrun's stdout after a clean exit (its CLI run in this process: what a chain makes is the
    subject, not how fnrun starts); with `setters_match`, apply-setters must have found a marker
    (its "no matches" note there means a step lost the comments it reads)."""
    result = fnrun_here(*args, env=ON)
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert not setters_match or "no matches for input setter" not in result.stderr, result.stderr
    return result.stdout


def by_place(stdout: str) -> dict[tuple[str | None, int], object]:
    return {(item.path, item.index): item for item in decode(stdout, "stdout").items}


def assert_set(deployment: dict) -> None:
    assert deployment["spec"]["replicas"] == 4
    assert deployment["metadata"]["name"] == "web"


def assert_stdout_faithful(stdout: str, source: str) -> None:
    """Every comment the package had is on stdout as often, and an item no step changed is the
    text `fnrun source` gives for it, byte for byte."""
    assert comments(stdout) == comments(source)
    before = by_place(source)
    for place, item in by_place(stdout).items():
        if place in before and item.value == before[place].value:
            assert item.text == before[place].text, place


@pytest.mark.parametrize("order", list(itertools.permutations(ISSUE_STEPS)), ids="-".join)
def test_setters_after_any_step_render(tmp_path: Path, order: tuple[str, ...]) -> None:
    """The pipeline of the report, in every order: in place, on stdout and in another directory."""
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "Kptfile").write_text(kptfile("pkg", list(order)))
    (root / "deploy.yaml").write_text(DEPLOYMENT)
    (root / "local.yaml").write_text(LOCAL)
    source = ok("source", str(root))
    stdout = ok("render", str(root), "-o", "stdout")
    deployment = next(i for i in decode(stdout, "stdout").items if i.data["kind"] == "Deployment")
    assert_set(deployment.value)
    assert_stdout_faithful(stdout, source)
    ok("render", str(root), "-o", str(tmp_path / "out"))
    ok("render", str(root))
    for written in (root, tmp_path / "out"):
        assert_set(documents(written)["deploy.yaml"][0])
        assert comments((written / "deploy.yaml").read_text()) == comments(DEPLOYMENT)
        assert (written / "local.yaml").read_text() == LOCAL
    assert documents(root) == expected(_fresh(tmp_path, order), list(order))


def _fresh(tmp_path: Path, order: tuple[str, ...]) -> Path:
    root = tmp_path / "fresh"
    root.mkdir()
    (root / "deploy.yaml").write_text(DEPLOYMENT)
    (root / "local.yaml").write_text(LOCAL)
    return root


def _declaration(step: str) -> str:
    """A function config declaring `step` (kustomize's way, which `fnrun run DIR` runs)."""
    data = "".join(f"  {key}: {value!r}\n".replace("'", '"') for key, value in STEPS[step].items())
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: {step}
          annotations:
            config.kubernetes.io/local-config: "true"
            config.kubernetes.io/function: |
              container:
                image: {image(step)}
        data:
        """) + data


@pytest.mark.parametrize("order", list(itertools.permutations(ISSUE_STEPS)), ids="-".join)
def test_setters_after_any_step_run(tmp_path: Path, order: tuple[str, ...]) -> None:
    """The same pipeline declared in the package (`fnrun run DIR`, file order), in place and on stdout."""
    root = tmp_path / "pkg"
    root.mkdir()
    for number, step in enumerate(order):
        (root / f"fn-{number}.yaml").write_text(_declaration(step))
    (root / "deploy.yaml").write_text(DEPLOYMENT)
    (root / "local.yaml").write_text(LOCAL)
    source = ok("source", str(root))
    stdout = ok("run", str(root), "-o", "stdout")
    assert_set(next(i for i in decode(stdout, "stdout").items if i.data["kind"] == "Deployment").value)
    assert_stdout_faithful(stdout, source)
    ok("run", str(root))
    assert_set(documents(root)["deploy.yaml"][0])
    assert comments((root / "deploy.yaml").read_text()) == comments(DEPLOYMENT)
    assert (root / "local.yaml").read_text() == LOCAL


def test_one_step_on_stdout_keeps_the_text(tmp_path: Path) -> None:
    """`run -i set-labels -o stdout`: the items keep every comment and their quotes ("true"
    stays double-quoted), as the text fnrun sends them, edited only where the labels go."""
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "deploy.yaml").write_text(DEPLOYMENT)
    (root / "local.yaml").write_text(LOCAL)
    source = ok("source", str(root))
    stdout = ok("run", str(root), "-i", image("set-labels"), "-o", "stdout", "--", "tier=backend")
    assert_stdout_faithful(stdout, source)
    assert 'enabled: "true"' in stdout and "'true'" not in stdout.replace("local-config: 'true'", "")


def _checked(rng_seed: int, tmp_path: Path, pipelines: list[list[str]], to_directory: bool = True) -> None:
    """One root package with a subpackage per pipeline, rendered in place, to stdout and (with
    `to_directory`) to another directory; each subpackage's files against what kpt makes of them."""
    rng = random.Random(rng_seed)
    root = tmp_path / "root"
    root.mkdir()
    (root / "Kptfile").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: root\n")
    subpackages = [package(rng, root / f"p{number}", steps, f"p{number}") for number, steps in enumerate(pipelines)]
    originals = {sub: {path.name: path.read_text() for path in sub.glob("*.yaml")} for sub in subpackages}
    wanted = {sub: expected(sub, steps) for sub, steps in zip(subpackages, pipelines)}
    unchanged = {sub: documents(sub) for sub in subpackages}
    # a generated package may have no marker at all; then apply-setters' note is right
    marked = all("kpt-set:" in "".join(originals[sub].values()) for sub, steps in zip(subpackages, pipelines) if "apply-setters" in steps)
    source = ok("source", str(root))
    assert_stdout_faithful(ok("render", str(root), "-o", "stdout", setters_match=marked), source)
    if to_directory:
        ok("render", str(root), "-o", str(tmp_path / "out"), setters_match=marked)
    ok("render", str(root), setters_match=marked)
    for sub, steps in zip(subpackages, pipelines):
        for written in (sub, tmp_path / "out" / sub.name) if to_directory else (sub,):
            assert documents(written) == wanted[sub], (steps, written)
            for name, text in originals[sub].items():
                now = (written / name).read_text()
                assert comments(now) == comments(text), (steps, name)
                if wanted[sub][name] == unchanged[sub][name]:
                    assert now == text, (steps, name)  # no step changed it: as it was


@pytest.mark.parametrize("first", list(STEPS))
def test_every_pair(tmp_path: Path, first: str, fast_subset: bool) -> None:
    """Every ordered pair of the catalog functions fnrun runs in-process, a package per first
    step, so the pairs spread over the fast subset's processes (another directory as the output is
    the random orders' and the report's pipeline's to check). The fast subset takes three second
    steps of each first, drawn anew each run; the whole suite and CI take every pair."""
    pairs = [list(pair) for pair in itertools.permutations(STEPS, 2) if pair[0] == first]
    if fast_subset:
        pairs = random.sample(pairs, 3)
    _checked(42 + list(STEPS).index(first), tmp_path, pairs, to_directory=False)


@settings(max_examples=examples(4), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), orders=st.lists(st.permutations(list(STEPS)).map(lambda p: p[:5]), min_size=1, max_size=3))
def test_random_orders(tmp_path_factory: pytest.TempPathFactory, seed: int, orders: list[list[str]]) -> None:
    """Random orders of five of them over generated packages."""
    _checked(seed, tmp_path_factory.mktemp("orders"), orders)
