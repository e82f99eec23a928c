"""A case's `.expected/config.yaml`, read into typed fields: the ones kpt's e2e runner reads
(pkg/test/runner), with kpt's defaults. A malformed file is a CaseError naming the case and the
field, so the run reports that case and goes on with the others."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPECTED = ".expected"
RENDER, EVAL = "render", "eval"


class CaseError(Exception):
    """A case that cannot be read or run as written (its config, its diff.patch, a script that
    hangs): one line naming the case, reported as that case's error."""


@dataclass(frozen=True)
class CaseConfig:
    """What to run and what to expect; kpt's field names in the comments."""

    exit_code: int = 0  # exitCode
    std_err: str = ""  # stdErr: must be contained in stderr
    std_out: str = ""  # stdOut: must be contained in stdout
    std_err_regex: str = ""  # stdErrRegEx (RE2, as Go's regexp)
    std_err_strip_lines: tuple[str, ...] = ()  # stdErrStripLines
    actual_strip_lines: tuple[str, ...] = ()  # actualStripLines: taken out of the actual results
    diff_strip_regex: str = ""  # diffStripRegEx
    test_type: str = RENDER  # testType
    image: str = ""
    tag: str = ""
    exec_path: str = ""  # execPath, relative to .expected/
    args: tuple[tuple[str, str], ...] = ()
    fn_config: str = ""  # fnConfig, relative to .expected/
    include_meta_resources: bool = False
    network: bool = False
    allow_exec: bool = False
    allow_network: bool = False
    allow_wasm: bool = False
    image_pull_policy: str = ""
    runtimes: tuple[str, ...] = ()
    skip: bool = False
    env: tuple[tuple[str, str], ...] = ()
    sequential: bool = False
    disable_output_truncate: bool = False
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


_TEXT = {"stdErr": "std_err", "stdOut": "std_out", "stdErrRegEx": "std_err_regex", "diffStripRegEx": "diff_strip_regex",
         "testType": "test_type", "image": "image", "tag": "tag", "execPath": "exec_path", "fnConfig": "fn_config",
         "imagePullPolicy": "image_pull_policy"}
_FLAGS = {"includeMetaResources": "include_meta_resources", "network": "network", "allowExec": "allow_exec",
          "allowNetwork": "allow_network", "allowWasm": "allow_wasm", "skip": "skip", "sequential": "sequential",
          "disableOutputTruncate": "disable_output_truncate"}
_LISTS = {"stdErrStripLines": "std_err_strip_lines", "actualStripLines": "actual_strip_lines", "runtimes": "runtimes"}
_MAPS = {"args": "args", "env": "env"}
KNOWN_FIELDS = frozenset({"exitCode", "debug", *_TEXT, *_FLAGS, *_LISTS, *_MAPS})


def load_config(case: Path) -> CaseConfig:
    """The case's config; kpt's defaults when it has no config.yaml (a render case)."""
    path = case / EXPECTED / "config.yaml"
    if not path.exists():
        return CaseConfig()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise CaseError(f"{path}: cannot be read: {err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise CaseError(f"{path}: not YAML{where}: {getattr(err, 'problem', None) or str(err).splitlines()[0]}") from None
    if data is None:
        return CaseConfig()
    if not isinstance(data, dict):
        raise CaseError(f"{path}: not a mapping of kpt's test fields but a {type(data).__name__}")
    return parse_config(data, str(path))


def parse_config(data: dict[str, Any], where: str) -> CaseConfig:
    """The typed config of a mapping; a CaseError naming `where` and the field when one is of the wrong type."""
    values: dict[str, Any] = {"raw": data}
    for key, value in data.items():
        if value is None:
            continue
        if key == "exitCode":
            if isinstance(value, bool) or not isinstance(value, int):
                raise CaseError(f"{where}: exitCode must be an integer, not {value!r}")
            values["exit_code"] = value
        elif key in _TEXT:
            values[_TEXT[key]] = _text(value, key, where)
        elif key in _FLAGS:
            if not isinstance(value, bool):
                raise CaseError(f"{where}: {key} must be true or false, not {value!r}")
            values[_FLAGS[key]] = value
        elif key in _LISTS:
            if not isinstance(value, list):
                raise CaseError(f"{where}: {key} must be a list of strings")
            values[_LISTS[key]] = tuple(_text(item, key, where) for item in value)
        elif key in _MAPS:
            if not isinstance(value, dict):
                raise CaseError(f"{where}: {key} must be a mapping of names to values")
            values[_MAPS[key]] = tuple((str(k), _text(v, f"{key}.{k}", where)) for k, v in value.items())
    if values.get("test_type", RENDER) not in (RENDER, EVAL):
        raise CaseError(f"{where}: testType must be render or eval, not {values['test_type']!r}")
    if values.get("test_type") == EVAL and not (values.get("image") or values.get("exec_path")) and not _has_exec_script(where):
        raise CaseError(f"{where}: testType eval needs image or execPath (or an exec.sh)")
    return CaseConfig(**values)


def _has_exec_script(where: str) -> bool:
    return (Path(where).parent / "exec.sh").exists()


def _text(value: Any, key: str, where: str) -> str:
    if isinstance(value, (dict, list)):
        raise CaseError(f"{where}: {key} must be a string, not a {type(value).__name__}")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
