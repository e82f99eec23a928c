"""What a function may answer with (docs/reference/protocol.md), and what fails the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.in_process import fnrun_here
from testing.pipeline_helpers import assert_one_line_error, deployment, load, snapshot, write_package

# Each script reads the ResourceList, labels every item, and answers in a different shape.
READ = "#!/usr/bin/env python3\nimport sys, yaml\nrl = yaml.safe_load(sys.stdin)\nitems = rl['items']\nfor i in items: i['metadata'].setdefault('labels', {})['shape'] = SHAPE\n"
ANSWERS = {
    "v1beta1": "rl['apiVersion'] = 'config.kubernetes.io/v1beta1'\nyaml.safe_dump(rl, sys.stdout)\n",
    "v1alpha1": "rl['apiVersion'] = 'config.kubernetes.io/v1alpha1'\nyaml.safe_dump(rl, sys.stdout)\n",
    "list": "yaml.safe_dump({'apiVersion': 'v1', 'kind': 'List', 'items': items}, sys.stdout)\n",
    "stream": "yaml.safe_dump_all(items, sys.stdout)\n",
    "json": "import json\njson.dump(rl, sys.stdout)\n",
}


def _script(directory: Path, name: str, body: str) -> Path:
    path = directory / f"{name}.py"
    path.write_text(body)
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("shape", sorted(ANSWERS))
def test_accepted_answers(tmp_path: Path, shape: str) -> None:
    script = _script(tmp_path.parent, f"{tmp_path.name}-{shape}", READ.replace("SHAPE", repr(shape)) + ANSWERS[shape])
    write_package(tmp_path, {"a.yaml": deployment("a", "kept comment"), "b.yaml": deployment("b")})
    result = fnrun_here("run", str(tmp_path), "--exec", str(script), "--enable-exec")
    assert result.code == 0, result
    for name in ("a", "b"):
        assert load(tmp_path / f"{name}.yaml")["metadata"]["labels"] == {"shape": shape}
    assert (tmp_path / "a.yaml").read_text().startswith("# kept comment\n")  # the original comment survives


@pytest.mark.parametrize(
    ("answer", "needle"),
    [
        ("print('- just\\n- a list')", "invalid output"),
        ("print('42')", "invalid output"),
        ("print('apiVersion: config.kubernetes.io/v1\\nkind: ResourceList\\nitems: {}')", "items must be a list"),
        ("print('apiVersion: config.kubernetes.io/v1\\nkind: ResourceList\\nitems:\\n- just: data')", "not a resource"),
        ("pass", "wrote nothing"),
    ],
)
def test_rejected_answers_fail_and_write_nothing(tmp_path: Path, answer: str, needle: str) -> None:
    script = _script(tmp_path.parent, f"{tmp_path.name}-bad", "#!/usr/bin/env python3\nimport sys\nsys.stdin.read()\n" + answer + "\n")
    write_package(tmp_path, {"a.yaml": deployment("a")})
    before = snapshot(tmp_path)
    result = fnrun_here("run", str(tmp_path), "--exec", str(script), "--enable-exec")
    assert_one_line_error(result, needle, code=1)
    assert snapshot(tmp_path) == before


def test_a_commented_element_added_to_an_inline_list_becomes_a_block_list(tmp_path: Path) -> None:
    script = _script(
        tmp_path.parent,
        f"{tmp_path.name}-sidecar",
        "#!/usr/bin/env python3\nimport sys\nrl = sys.stdin.read()\n"
        "rl = rl.replace('containers: [{name: db, image: db:1}]', 'containers:\\n    - {name: db, image: db:1}\\n    - name: side # the sidecar\\n      image: side:1')\n"
        "sys.stdout.write(rl)\n",
    )
    write_package(tmp_path, {"db.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: db\nspec:\n  containers: [{name: db, image: db:1}]\n"})
    result = fnrun_here("run", str(tmp_path), "--exec", str(script), "--enable-exec")
    assert result.code == 0, result
    written = (tmp_path / "db.yaml").read_text()
    assert "# the sidecar" in written
    assert load(tmp_path / "db.yaml")["spec"]["containers"] == [{"name": "db", "image": "db:1"}, {"name": "side", "image": "side:1"}]
