"""Exec functions written the way users write them, in three YAML libraries (ruamel round trip,
ruamel safe, PyYAML), run over a package through fnrun's library API: fast enough for many cases,
and the same write-back as any container function."""

from __future__ import annotations

import io
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from orchestrator import api
from orchestrator.errors import FnrunError
from orchestrator.requests import Functions, Output, RunRequest, SandboxSettings, Speed

_HEADS = {
    "ruamel": "from ruamel.yaml import YAML\ny = YAML()\n",
    "ruamel-safe": "from ruamel.yaml import YAML\ny = YAML(typ='safe', pure=True)\ny.default_flow_style = False\n",
    "pyyaml": "import yaml\n",
}
_LOAD = {"ruamel": "y.load(sys.stdin)", "ruamel-safe": "y.load(sys.stdin)", "pyyaml": "yaml.safe_load(sys.stdin)"}
_DUMP = {"ruamel": "y.dump(rl, sys.stdout)", "ruamel-safe": "y.dump(rl, sys.stdout)", "pyyaml": "yaml.safe_dump(rl, sys.stdout)"}
STYLES = tuple(_HEADS)


def script(style: str, body: str = "", setup: str = "") -> str:
    """A function in `style` whose `body` edits `items` (the ResourceList's items) in place."""
    return (
        f"#!{sys.executable}\nimport sys\n{_HEADS[style]}{textwrap.dedent(setup)}\n"
        f"rl = {_LOAD[style]}\nitems = rl['items']\n{textwrap.dedent(body)}\n{_DUMP[style]}\n"
    )


@dataclass
class Outcome:
    error: FnrunError | None
    files: dict[str, bytes]


def run_exec(root: Path, files: dict[str, bytes | str], function: str) -> Outcome:
    """Write `files` into root/pkg, run `function` (a script's text) over it, and return the error
    (if any) and every file of the package afterwards."""
    package = root / "pkg"
    for name, content in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    fn = root / "fn.py"
    fn.write_text(function)
    fn.chmod(0o755)
    request = RunRequest(
        directory=str(package), functions=Functions(exec_path=str(fn)), sandbox=SandboxSettings(enable_exec=True),
        output=Output(quiet=True), speed=Speed(cache=False),
    )
    error = None
    try:
        api.run(request, stdout=io.StringIO())
    except FnrunError as err:
        error = err
    return Outcome(error, {p.relative_to(package).as_posix(): p.read_bytes() for p in sorted(package.rglob("*")) if p.is_file()})
