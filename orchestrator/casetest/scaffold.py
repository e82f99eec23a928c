"""`fnrun init function NAME`: a new Python function on fnrun's SDK, its Dockerfile, and one test
case in kpt's format whose expectation is recorded from a real run of the new function (so the
first `fnrun test` passes by construction, and the case shows the format with real content)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .config import EXPECTED
from .discover import Case
from .runner import ERROR, FAIL, Settings, run_case

_FUNCTION = '''#!/usr/bin/env python3
"""{name}: a KRM function on fnrun's Python SDK (functions.sdk). It labels every resource with
`greeting: <config.greeting>`; replace `run` with what your function does.

Try it:  fnrun run PACKAGE --exec {module}.py --allow-exec -- greeting=hi
Test it: fnrun test tests/"""

from __future__ import annotations

from dataclasses import dataclass

from functions import sdk


@dataclass
class Config:
    greeting: str = "hello"  # ConfigMap `data.greeting`, or `spec.greeting` of a custom resource


def run(resources: sdk.ResourceList, config: Config) -> None:
    for resource in resources.items:
        resource.set_label("greeting", config.greeting)  # no change when already set: idempotent


if __name__ == "__main__":
    sdk.main(run, Config)
'''

_DOCKERFILE = '''# {name}: `fnrun images build`-style image of the function; fnrun-base holds the SDK and runs as 65534.
FROM fnrun/fnrun-base:v1
COPY {module}.py /opt/fnrun-function/{module}.py
ENTRYPOINT ["python3", "/opt/fnrun-function/{module}.py"]
'''

_RESOURCES = '''apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # the front end
spec:
  replicas: 2
---
apiVersion: v1
kind: Service
metadata:
  name: web
'''

_CONFIG = '''# kpt's test format: run the function as `kpt fn eval --exec` would, and expect diff.patch.
testType: eval
execPath: ../../../{module}.py
args:
  greeting: hello
'''


def valid_name(name: str) -> bool:
    """A DNS label: lowercase letters, digits and inner dashes, a letter first."""
    return 0 < len(name) <= 63 and name[0].isascii() and name[0].isalpha() and name[-1] != "-" and \
        all(c.isascii() and (c.islower() or c.isdigit() or c == "-") for c in name)


def init_function(name: str, parent: Path) -> Path:
    """The new function's directory under `parent`, its one case recorded and passing."""
    if not valid_name(name):
        raise InputError(f"{name!r}: a function name is lowercase letters, digits and dashes, a letter first (a DNS label)")
    root = parent / name
    if root.exists():
        raise InputError(f"{root}: already exists; give another name or remove it")
    module = name.replace("-", "_")
    case = root / "tests" / "sets-the-greeting"
    (case / EXPECTED).mkdir(parents=True)
    function = root / f"{module}.py"
    function.write_text(_FUNCTION.format(name=name, module=module), encoding="utf-8")
    function.chmod(0o755)
    (root / "Dockerfile").write_text(_DOCKERFILE.format(name=name, module=module), encoding="utf-8")
    (case / "resources.yaml").write_text(_RESOURCES, encoding="utf-8")
    (case / EXPECTED / "config.yaml").write_text(_CONFIG.format(module=module), encoding="utf-8")
    for settings in (Settings(update=True), Settings()):  # record what the function does, then check it passes
        verdict = run_case(Case(case, case.as_posix()), settings)
        if verdict.outcome in (FAIL, ERROR):
            raise InputError(f"{case}: the new function's case does not pass: {verdict.reason}")
    return root
