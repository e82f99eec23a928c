"""The user's environment is read at the edge only (orchestrator.settings): a module below it takes
the values it needs as arguments, so a run (and later each request of a server) says what it
runs with, and one spelling of each switch holds everywhere. This test finds every read of the
process environment in the package's syntax trees and compares with the list of modules allowed
to read it, each with why; an entry that no longer reads is dropped, so the list stays true."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "orchestrator"

#: Modules that may read os.environ, and why. The edge reads fnrun's own switches; the others read
#: what is not a switch of fnrun: a child's environment being built, or a tool's own variables.
ALLOWED = {
    "settings.py": "the edge: every switch parsed once, into Settings",
    "launch.py": "the launcher, the first edge: it decides before any module or run settings exist",
    "cli/__init__.py": "the CLI edge: the shell's completion request",
    "cli/casetest.py": "the edge of `fnrun test`: the engine kpt's KRM_FN_RUNTIME names, handed to the cases",
    "requests/parse.py": "the request's edge: --server's TLS files (FNRUN_SERVER_CA, _CERT, _KEY)",
    "wrap.py": "`fnrun wrap` runs a command: its environment is this process's plus the functionConfig's",
    "casetest/commands.py": "the environment a case's scripts run in, built from this process's",
    "casetest/gitrepo.py": "git's environment for a case's scratch repository (PATH only)",
    "casetest/kptshim.py": "the edge of the `kpt` shim process: the flags its parent handed it",
    "report/__init__.py": "GitHub's and the terminal's own variables (GITHUB_ACTIONS, TERM): where the display goes",
    "report/github.py": "GitHub's own variable (GITHUB_ACTIONS): whether to annotate",
    "imagebuild/base.py": "the host's Debian mirror (DEBIAN_MIRROR, as apt's sources say), for debootstrap",
    "imagebuild/flow.py": "the Docker SDK's variables (DOCKER_TLS_VERIFY, DOCKER_CERT_PATH), given to the SDK",
    "runtimes/container/runtime.py": "the Docker SDK's variables, given to the SDK",
    "runtimes/container/remote.py": "the Docker SDK's TLS variables: the transport the SDK will use",
    "runtimes/container/engine_choice.py": "the engine's address: DOCKER_HOST, kpt's KRM_FN_RUNTIME, podman's XDG_RUNTIME_DIR",
    "runtimes/container/settings.py": "--env KEY passes this process's value into the function's environment",
    "runtimes/host/exec.py": "an exec function's environment, built from this process's",
    "runtimes/host/forked.py": "the fork server's environment, built from this process's",
    "runtimes/host/zygote.py": "a forked function's environment, set (not read) in the child",
}
def _reads(tree: ast.AST) -> bool:
    """Whether the module touches os.environ, calls os.getenv, or imports either from os."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" and node.attr in (
                "environ", "environb", "getenv", "getenvb"):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                alias.name in ("environ", "environb", "getenv", "getenvb") for alias in node.names):
            return True
    return False


def readers(package: Path = PACKAGE) -> set[str]:
    return {path.relative_to(package).as_posix() for path in sorted(package.rglob("*.py")) if _reads(ast.parse(path.read_text(encoding="utf-8")))}


def test_only_the_edge_and_what_builds_a_child_s_environment_read_it() -> None:
    found = readers()
    listed = set(ALLOWED)
    assert not found - listed, f"read os.environ below the edge (parse it in orchestrator.settings and hand it down): {sorted(found - listed)}"
    assert not listed - found, f"listed as reading os.environ but no longer does (drop the entry): {sorted(listed - found)}"


def test_the_scan_sees_each_way_of_reading(tmp_path: Path) -> None:
    shapes = {
        "attribute.py": "import os\nx = os.environ.get('A')\n",
        "item.py": "import os\nx = os.environ['A']\n",
        "default.py": "import os\ndef f(env=os.environ):\n    return env\n",
        "getenv.py": "import os\nx = os.getenv('A')\n",
        "imported.py": "from os import environ\n",
        "imported_getenv.py": "from os import getenv as g\n",
    }
    clean = {"clean.py": "import os\nx = os.path.join('a', 'b')\nenviron = {}\n", "docstring.py": '"""os.environ is read at the edge."""\n'}
    for name, source in {**shapes, **clean}.items():
        (tmp_path / name).write_text(source)
    assert readers(tmp_path) == set(shapes)
