"""A malformed image reference is the user's input (exit 2, one line, nothing written), and the
checker agrees with the engine's own parser on what is malformed."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from orchestrator.errors import InputError
from orchestrator.render.reference import check_reference, reference_problem
from testing.io_helpers import fnrun

ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
component = st.lists(st.text(ALNUM, min_size=1, max_size=6), min_size=1, max_size=4).flatmap(
    lambda runs: st.lists(st.sampled_from([".", "_", "__", "-", "--", "---"]), min_size=len(runs) - 1, max_size=len(runs) - 1).map(
        lambda seps: "".join(r + s for r, s in zip(runs, [*seps, ""]))
    )
)
domain = st.one_of(st.just(""), st.sampled_from(["localhost/", "localhost:5000/", "ghcr.io/", "my-reg.example.com:443/", "[::1]:5000/", "Registry.Local/"]))
tag = st.one_of(st.just(""), st.from_regex(r"\A:[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}\Z"))
valid = st.builds(lambda d, parts, t: d + "/".join(parts) + t, domain, st.lists(component, min_size=1, max_size=3), tag)


@given(valid)
def test_every_reference_the_grammar_makes_is_accepted(reference: str) -> None:
    assert reference_problem(reference) is None


untagged = st.builds(lambda d, parts: d + "/".join(parts), domain, st.lists(component, min_size=1, max_size=3))


@given(untagged, st.integers(min_value=0), st.sampled_from(list(" !A$%^&*()+=|\\\"'<>,?;`~\u00e9\t")))
def test_a_foreign_character_in_the_repository_path_is_refused(name: str, at: int, bad: str) -> None:
    start = name.rfind("/") + 1  # in the last path component, which is never a registry
    position = start + at % (len(name) - start + 1)
    broken = name[:position] + bad + name[position:]
    assert reference_problem(broken) is not None, broken


@pytest.fixture(scope="module")
def engine() -> docker.APIClient:
    return docker.APIClient(timeout=30)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(valid, st.text(ALNUM + "ABC._-:@ !", min_size=1, max_size=30)))
def test_the_checker_and_the_engine_agree(engine: docker.APIClient, reference: str) -> None:
    """The engine's image lookup parses the reference first: a 400 is its "invalid reference".
    Random text has no '/' (the lookup's URL would route it elsewhere); the grammar's names do."""
    if "@" in reference or "[" in reference or (len(reference) >= 12 and all(c in "0123456789abcdef" for c in reference)):
        return  # digests and image-id prefixes are read another way by the lookup
    try:
        engine.inspect_image(reference)
        engine_refuses = False
    except docker.errors.APIError as err:
        engine_refuses = err.response is not None and err.response.status_code == 400
    assert (reference_problem(reference) is not None) == engine_refuses, reference


def test_the_message_names_where_and_what() -> None:
    with pytest.raises(InputError, match=r"^Kptfile step 2: image 'Bad Image!!' is not a valid image reference"):
        check_reference("Bad Image!!", "Kptfile step 2")


def test_a_long_component_that_ends_badly_is_refused_at_once() -> None:
    assert reference_problem("a" + "-a" * 120 + "!") is not None


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    return root


def test_run_with_a_malformed_image_is_bad_input(tmp_path: Path) -> None:
    root = _package(tmp_path)
    result = fnrun("run", str(root), "-i", "Bad Image!!")
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "'Bad Image!!'" in lines[0] and "not a valid image reference" in lines[0], lines
    assert (root / "cm.yaml").read_text() == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"


def test_render_with_a_malformed_step_image_is_bad_input(tmp_path: Path) -> None:
    root = _package(tmp_path)
    kptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n    - image: fnrun/Set-Namespace:v1\n"
    (root / "Kptfile").write_text(kptfile)
    result = fnrun("render", str(root))
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "fnrun/Set-Namespace:v1" in lines[0] and "not a valid image reference" in lines[0], lines
    assert (root / "Kptfile").read_text() == kptfile
