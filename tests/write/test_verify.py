"""The last check before a file is written: a text that does not parse, or does not read back as
the resources returned, is written plainly instead, or refused with the file and line."""

from __future__ import annotations

import pytest

from orchestrator.errors import InputError
from orchestrator.resource import Resource
from orchestrator.write import verify

A = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}
B = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}
GOOD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v  # c\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"


def test_a_right_file_passes_with_its_other_documents_left_alone() -> None:
    resources = [Resource(A), Resource(B)]
    assert verify.problem(GOOD, resources) is None
    odd = "# a note\nnot: a resource\n---\n" + GOOD + "---\napiVersion: v1\nkind: X\nmetadata: {name: d}\nk: 1\nk: 2\n"
    assert verify.problem(odd, resources) is None


@pytest.mark.parametrize(
    ("content", "line", "what"),
    [
        ("...\n---\n" + GOOD, 1, "expected"),
        (GOOD.replace("k: v  # c", "k: w"), 1, "ConfigMap/a does not read back"),
        (GOOD.replace("name: b", "name: b\n  x: [\n"), 14, "expected"),  # libyaml points at the end
        (GOOD.split("---\n")[0], 7, "missing"),
        (GOOD + "---\n" + GOOD.split("---\n")[1], 13, "did not return"),
    ],
)
def test_what_is_wrong_and_where(content: str, line: int, what: str) -> None:
    found = verify.problem(content, [Resource(A), Resource(B)])
    assert found is not None
    assert found[0] == line
    assert what in found[1]


def test_a_wrong_text_falls_back_to_the_plain_one_then_is_refused() -> None:
    resources = [Resource(A), Resource(B)]
    tries: list[bool] = []

    def assemble(plain: bool) -> bytes:
        tries.append(plain)
        return GOOD.encode() if plain else b"...\n" + GOOD.encode()

    assert verify.checked("f.yaml", assemble, resources, None) == GOOD.encode()
    assert tries == [False, True]
    with pytest.raises(InputError, match=r"^f\.yaml:1: fnrun cannot write this file as the functions returned it \(.*\); nothing was written$"):
        verify.checked("f.yaml", lambda plain: b"...\n" + GOOD.encode(), resources, None)
    unchanged = b"...\nwhatever the file held"
    assert verify.checked("f.yaml", lambda plain: unchanged, resources, unchanged) == unchanged
