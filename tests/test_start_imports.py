"""What `fnrun` loads before it does the user's work, for the commands people run most.

A fresh interpreter runs each command line as `python -m orchestrator` runs it and says which of
a list of heavy modules it imported on the way (import sets, never timings: bench/bench_start.py
times them). `fnrun --version` is answered before the CLI framework, the dataclasses, typing and
importlib.metadata load; `source`, `sink`, `run`, `render` and kpt's spellings (`fnrun eval`)
are carried out without the CLI framework (orchestrator.direct), and each gives what
the CLI gives for the same command line: exit code, stdout, stderr and the package's files.
And the version is read as importlib.metadata reads it, without it, wherever it can be."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from orchestrator import _version_on_path, version
from testing.launching import DEBUG, adopted, said
from testing.pipeline_helpers import REPO, deployment, function_config, snapshot, test_images, write_package  # noqa: F401 - fixture
from testing.sizing import examples

#: The CLI framework.
CLI_FRAMEWORK = ("typer", "click", "rich", "shellingham", "orchestrator.cli")
#: And what `--version` through it loads: a command that reaches no engine loads none of it (one
#: that does loads importlib.metadata and email with the engine's client: urllib3 imports them).
FRAMEWORK = (*CLI_FRAMEWORK, "importlib.metadata", "email")
#: `source` and `sink` run no function: nothing of the runtimes or the engine's client either.
PACKAGE_TOOL_NEVER = (*FRAMEWORK, "orchestrator.runtimes", "docker", "orchestrator.render", "orchestrator.run.pipeline")
#: `fnrun --version` loads none of fnrun's machinery either: no dataclass, no typing, no schema.
VERSION_NEVER = (*FRAMEWORK, "dataclasses", "inspect", "typing", "orchestrator.option_schema", "orchestrator.runtimes",
                 "orchestrator.api", "orchestrator.edge", "orchestrator.direct", "yaml")

# fnrun's own entry (orchestrator.__main__), as users start it, or with the launcher's path without
# the CLI framework turned off ("cli"); on leaving, the watched modules it imported that were not
# there when the interpreter was ready (what site loaded is not fnrun's doing), last on stderr.
PROBE = """
import os, sys
ready = set(sys.modules)
from orchestrator import __main__ as entry, launch
if sys.argv[1] == "cli":
    from orchestrator import direct
    direct.carried_out = lambda args, environ, early: None
watched = sys.argv[2].split(",")
def leave(code):
    new = set(sys.modules) - ready
    loaded = sorted(n for n in watched if any(m == n or m.startswith(n + ".") for m in new))
    sys.stdout.flush()
    print("probe: loaded", ",".join(loaded) or "-", file=sys.stderr, flush=True)
    os._exit(code)
launch._leave = leave
sys.argv = ["fnrun", *sys.argv[3:]]
entry.main()
"""


def probe(way: str, args: list[str], cwd: Path, watched: tuple[str, ...] = FRAMEWORK, stdin: str = "",
          env: dict[str, str] | None = None) -> tuple[int, str, list[str], str]:
    """`fnrun ARGS` by `way` (direct: as users run it; cli: the launcher's path without the CLI
    framework off), with the launcher's debug lines on: exit code, stdout, fnrun's own stderr
    lines (timings blanked; the launcher's lines, when it adopted its early container, as one
    line saying so), and which of `watched` it imported."""
    env = {**os.environ, **DEBUG, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])), **(env or {})}
    proc = subprocess.run([sys.executable, "-c", PROBE, way, ",".join(watched), *args], input=stdin, capture_output=True, text=True,
                          cwd=cwd, timeout=300, env=env)
    lines = said(proc.stderr)
    assert lines and lines[-1].startswith("probe: loaded "), proc.stderr
    return proc.returncode, proc.stdout, lines[:-1] + ["(the early container adopted)"] * adopted(proc.stderr), lines[-1].removeprefix("probe: loaded ")


def both(tmp_path: Path, files: dict[str, str], args: list[str], stdin: str = "", watched: tuple[str, ...] = FRAMEWORK,
         env: dict[str, str] | None = None) -> tuple[tuple, tuple, str]:
    """The command line both ways, each over a fresh copy of the package (PKG in `args`, run from
    inside it): (code, stdout, stderr, files after) for each, and what the direct way imported of
    the CLI framework."""
    results, loaded = [], ""
    for way in ("direct", "cli"):
        root = write_package(tmp_path / way / "pkg", files)
        given = [str(root) if arg == "PKG" else arg for arg in args]
        code, stdout, lines, imported = probe(way, given, root, watched, stdin, env)
        loaded = imported if way == "direct" else loaded
        stderr = [line.replace(str(root), "PKG") for line in lines]
        results.append((code, stdout.replace(str(root), "PKG"), stderr, {p: b for p, (b, _) in snapshot(root).items()}))
    return results[0], results[1], loaded


PACKAGE = {"app.yaml": deployment("web", "the front end"), "db.yaml": deployment("db")}
KPTFILE = ("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: shop\npipeline:\n  mutators:\n"
           "  - image: fnrun/set-labels:v1\n    configMap:\n      tier: one\n")
LIST = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm\n    annotations:\n      config.kubernetes.io/path: cm.yaml\n  data:\n    a: b\n")


def test_version_is_answered_before_anything_heavy_loads(tmp_path: Path) -> None:
    code, stdout, lines, loaded = probe("direct", ["--version"], tmp_path, VERSION_NEVER)
    assert (code, stdout, lines) == (0, f"fnrun {metadata.version('fnrun')}\n", [])
    assert loaded == "-", f"fnrun --version loaded {loaded}"
    # with more on the line the CLI answers, with the same line
    code, stdout, lines, loaded = probe("direct", ["--version", "--version"], tmp_path)
    assert (code, stdout, lines) == (0, f"fnrun {metadata.version('fnrun')}\n", [])
    assert "typer" in loaded.split(",")


@pytest.mark.parametrize(("args", "stdin"), [
    (["source", "PKG"], ""),
    (["source"], ""),
    (["sink", "PKG"], LIST),
    (["sink", "new"], LIST),
    (["eval", "PKG", "-i", "fnrun/set-labels:v1", "--", "team=web"], ""),
    (["fn", "render", "PKG"], ""),
], ids=["source", "source-here", "sink", "sink-new", "eval", "fn-render"])
def test_the_package_tools_skip_the_cli_framework_and_do_what_it_does(tmp_path: Path, args: list[str], stdin: str) -> None:
    direct, cli, loaded = both(tmp_path, PACKAGE, args, stdin, PACKAGE_TOOL_NEVER)
    assert direct == cli
    assert loaded == "-", f"fnrun {' '.join(args)} loaded {loaded}"
    assert direct[0] == (2 if args[0] in ("eval", "fn") else 0), direct


BUILTIN = {"FNRUN_BUILTIN": "1"}  # the suite turns builtins off (tests/conftest.py): these cases are about them


@pytest.mark.engine
@pytest.mark.usefixtures("test_images")
@pytest.mark.parametrize(("files", "args", "env"), [
    ({**PACKAGE, "Kptfile": KPTFILE}, ["render", "PKG"], BUILTIN),
    ({**PACKAGE, "Kptfile": KPTFILE}, ["render", "-o", "stdout"], BUILTIN),
    (PACKAGE, ["run", "PKG", "--image", "fnrun/set-labels:v1", "--diff", "--", "team=web"], BUILTIN),
    (PACKAGE, ["run", "-i", "fnrun/set-labels:v1", "--", "team=here"], BUILTIN),
    ({**PACKAGE, "Kptfile": KPTFILE.replace("fnrun/set-labels", "fnrun-test/label")}, ["render", "PKG"], {}),
    (PACKAGE, ["run", "PKG", "--image", "fnrun-test/label:v1", "--", "team=web"], {}),
    (PACKAGE, ["run", "PKG", "--image", "fnrun-test/fail:v1"], {}),
], ids=["render-builtin", "render-stdout", "run-builtin", "run-kpt-habit", "render-container", "run-container", "run-failing"])
def test_run_and_render_skip_the_cli_framework_and_do_what_it_does(tmp_path: Path, files: dict[str, str], args: list[str], env: dict[str, str]) -> None:
    """The same whether a builtin serves the function or a container runs it (the launcher's early
    container adopted either way), or it fails."""
    direct, cli, loaded = both(tmp_path, files, args, watched=CLI_FRAMEWORK, env=env)
    assert direct == cli
    assert loaded == "-", f"fnrun {' '.join(args)} loaded {loaded}"
    assert direct[0] == (1 if "fnrun-test/fail:v1" in args else 0), direct
    assert (", builtin," in "\n".join(direct[2])) == bool(env), direct[2]
    if "fnrun-test/label:v1" in args:
        assert "(the early container adopted)" in direct[2], direct[2]


@pytest.mark.parametrize(("args", "files", "stdin"), [
    (["source", "missing"], PACKAGE, ""),
    (["source", "PKG"], {**PACKAGE, "bad.yaml": "a: [\n"}, ""),
    (["sink", "PKG"], PACKAGE, "kind: [\n"),
    (["run", "PKG", "--image", "fnrun/set-labels:v1", "--memory", "lots"], PACKAGE, ""),
    (["render", "PKG"], PACKAGE, ""),
], ids=["source-missing", "source-bad-yaml", "sink-bad-yaml", "run-bad-value", "render-no-kptfile"])
def test_a_failure_is_the_same_one_line_without_the_cli_framework(tmp_path: Path, args: list[str], files: dict[str, str], stdin: str) -> None:
    direct, cli, loaded = both(tmp_path, files, args, stdin)
    assert direct == cli
    assert direct[0] == 2 and len([line for line in direct[2] if line.startswith("fnrun: error:")]) == 1, direct
    assert "Traceback" not in "\n".join(direct[2]) and loaded == "-", loaded


WORDS = st.sampled_from(["PKG", "missing", "-", "--", "-h", "--help", "--fn-config", "fn.yaml", "--fn-config=fn.yaml", "extra", "."])


@settings(max_examples=examples(15), deadline=None)
@given(st.sampled_from(["source", "sink"]), st.lists(WORDS, max_size=3))
def test_a_source_or_sink_line_is_read_as_the_cli_reads_it(command: str, words: list[str]) -> None:
    """Whatever the launcher carries out itself, or leaves to the CLI, ends as the CLI's would."""
    files = {**PACKAGE, "fn.yaml": function_config("fnrun/set-labels:v1", {"team": "a"})}
    with tempfile.TemporaryDirectory() as tmp:
        direct, cli, _ = both(Path(tmp), files, [command, *words], LIST if command == "sink" else "")
    assert direct == cli


# --------------------------------------------------------------------- the version, read directly

NAMES = st.one_of(st.just("fnrun-1.0.dist-info"), st.sampled_from([
    "FnRun-2.0.dist-info", "fnrun.dist-info", "fnrun-3.0.egg-info", "fnrun_x-1.0.dist-info", "fnrunner-1.0.dist-info", "other-1.0.dist-info",
    "fnrun-4.0.dist-info.bak"]))
HEADERS = st.sampled_from([
    "Version: {v}\n", "version:{v}\n", "VERSION:  {v}  \n", "Version:\t{v}\t\n", "Version: {v}\r\n", "Version: {v}\n  folded\n",
    "Version : {v}\n", "not a header\nVersion: {v}\n", "Summary: a\n folded\nVersion: {v}\n", "Summary: x\n", "Version:\n",
])
ENTRY = st.tuples(NAMES, st.sampled_from(["METADATA", "PKG-INFO", None, "file"]), HEADERS, st.sampled_from(["1.0", "2.5.post1", "0+unknown", "1.0\u00e9"]))


def lay_out(root: Path, entries: list[list[tuple[str, str | None, str, str]]]) -> list[str]:
    """Directories along a path, each holding metadata entries as generated."""
    path = []
    for number, directory in enumerate(entries):
        where = root / str(number)
        where.mkdir()
        for name, file, header, value in directory:
            text = f"Metadata-Version: 2.1\nName: fnrun\n{header.format(v=value)}\nVersion: not-this\n"
            if (where / name).exists():
                continue
            if file == "file":
                (where / name).write_text(text)
            else:
                (where / name).mkdir()
                if file is not None:
                    (where / name / file).write_text(text)
        path.append(str(where))
    return path


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.lists(ENTRY, max_size=3), min_size=1, max_size=3))
def test_the_version_read_directly_is_importlib_metadatas(entries: list[list[tuple[str, str | None, str, str]]]) -> None:
    """Read directly, it is what importlib.metadata says, or it is left to importlib.metadata."""
    with tempfile.TemporaryDirectory() as tmp:
        path = lay_out(Path(tmp), entries)
        mine = _version_on_path(path)
        found = next(iter(metadata.distributions(name="fnrun", path=path)), None)
        if mine is not None:
            assert found is not None and mine == found.version


def test_a_plain_install_is_read_directly(tmp_path: Path) -> None:
    """A wheel's or an editable install's one dist-info along the path: no importlib.metadata."""
    path = lay_out(tmp_path, [[("other-1.0.dist-info", "METADATA", "Version: {v}\n", "9")], [("fnrun-1.2.3.dist-info", "METADATA", "Version: {v}\n", "1.2.3")]])
    assert _version_on_path([str(tmp_path / "absent"), *path]) == "1.2.3"
    assert _version_on_path(sys.path) == metadata.version("fnrun") == version()


# --------------------------------------------------------- the CLI builds only the command it runs

WHOLE_APP_LINES = [["--help"], ["-h"], ["--bogus"], ["--bogus", "--help"], ["--help", "extra", "words"]]


@pytest.mark.parametrize("words", WHOLE_APP_LINES, ids=lambda words: " ".join(words))
def test_a_command_built_alone_reads_as_in_the_whole_app(words: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`fnrun COMMAND ...` builds COMMAND alone (orchestrator.cli `app_for`): its help, usage line
    and errors are the whole app's, for every command."""
    import typer

    from orchestrator import cli

    names = [info.name or typer.main.get_command_name(info.callback.__name__) for info in cli.app.registered_commands if info.callback]
    assert len(typer.main.get_command(cli.app_for([names[0], *words])).commands) == 1  # type: ignore[attr-defined]
    for name in names:
        alone = cli.run_app([name, *words]), capsys.readouterr()
        assert f"fnrun {name}" in alone[1].out + alone[1].err or name in ("wrap", "xargs"), (name, alone)
        with monkeypatch.context() as whole:
            whole.setattr(cli, "app_for", lambda args: cli.app)
            assert (cli.run_app([name, *words]), capsys.readouterr()) == alone, name
