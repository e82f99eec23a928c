"""Every catalog function fnrun runs in-process gives the bytes its container gives, on every form
of input: plain YAML (one document, several), a ResourceList with fnrun's annotations (`fnrun
source`), with none, with only `config.kubernetes.io/*` ones, `kpt fn source` output, and a
package directory (the files written, and the package printed with `--output -`).

In-process has three ways (orchestrator/runtimes/host/builtin.py): the items handed over to a fork
(handover.py), the ResourceList's text through a fork (FNRUN_BUILTIN_HANDOVER=0), and a new
interpreter (FNRUN_BUILTIN_FORK=0); each is compared with the container. fnrun's own catalog is
compared with its images (`--no-builtin`). kpt's catalog builtins (`--builtin-catalog`) are
fnrun's code, not the images': their container is an image built here from this checkout's
functions/ (the code the builtin runs), started as any container function."""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import docker
import pytest

from testing.pipeline_helpers import REPO, Result, fnrun

FIXTURE = REPO / "tests" / "fixtures" / "parity"
#: Block YAML the handover takes, and flow collections and anchors for which it gives way to the
#: text (a step is handed over whole or not at all, so each needs a package of its own).
PACKAGES = ("plain", "odd")
CONFIGS = FIXTURE / "configs"

#: image -> function arguments, for fnrun's own catalog (`--no-builtin` starts the image).
OWN = {
    "set-labels": ["--", "color=blue"],
    "set-namespace": ["--", "namespace=zzz"],
    "require-resource-limits": [],
    "tshirt-size": [],
    "inject-sidecar": ["--fn-config", str(CONFIGS / "inject-sidecar.yaml")],
    "check-service-selectors": [],
}
#: kpt catalog name -> function arguments.
KPT = {
    "set-namespace": ["--", "namespace=zzz"],
    "set-labels": ["--", "color=blue"],
    "set-annotations": ["--", "owner=team-a"],
    "set-image": ["--", "name=nginx", "newName=registry.local/nginx", "newTag=1.27"],
    "apply-setters": ["--", "sidecar-image=busybox:1.37"],
    "search-replace": ["--", "by-path=spec.replicas", "put-value=5"],
    "starlark": ["--fn-config", str(CONFIGS / "starlark.yaml")],
}
#: The in-process ways, by the environment that chooses each.
WAYS = {
    "handover": {"FNRUN_BUILTIN": "1"},
    "text-in-fork": {"FNRUN_BUILTIN": "1", "FNRUN_BUILTIN_HANDOVER": "0"},
    "new-interpreter": {"FNRUN_BUILTIN": "1", "FNRUN_BUILTIN_FORK": "0"},
}
FORMS = ("plain-one", "plain-many", "fnrun-source", "list-bare", "list-config-only", "kpt-source", "directory", "directory-output")


def _documents(package: Path) -> list[str]:
    docs = []
    for path in sorted(package.glob("*.yaml")):
        docs.extend(part if part.endswith("\n") else part + "\n" for part in re.split(r"(?m)^---\n", path.read_text()))
    return docs


def _bare_list(docs: list[str]) -> str:
    items = "".join("".join(("- " if n == 0 else "  ") + line if line.strip() else line
                            for n, line in enumerate(doc.splitlines(keepends=True))) for doc in docs)
    return f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}"


_NOT_PUBLIC = re.compile(r"^ *(internal\.config\.kubernetes\.io/|config\.k8s\.io/)[^\n]*\n", re.M)


def stdin_of(package: Path, form: str) -> str:
    """The text on stdin for a form of input."""
    docs = _documents(package)
    if form == "plain-one":
        return docs[0]
    if form == "plain-many":
        return "---\n".join(docs)
    if form == "list-bare":
        return _bare_list(docs)
    if form in ("fnrun-source", "list-config-only"):
        result = fnrun("source", str(package))
        assert result.code == 0, result.stderr
        return result.stdout if form == "fnrun-source" else _NOT_PUBLIC.sub("", result.stdout)
    assert form == "kpt-source"
    proc = subprocess.run(["kpt", "fn", "source", str(package)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def outcome(tmp: Path, source: Path, form: str, image: str, args: list[str], *flags: str, env: dict[str, str] | None = None) -> tuple[int, str, dict[str, bytes]]:
    """Exit code, stdout and (for a package directory) every file after one run."""
    if form.startswith("directory"):  # the files written, or the package printed (--output -)
        package = tmp / "pkg"
        shutil.rmtree(package, ignore_errors=True)
        shutil.copytree(source, package)
        printed = ["--output", "-"] if form == "directory-output" else []
        result = fnrun("run", str(package), "--image", image, *printed, *flags, *args, env=env)
        files = {p.relative_to(package).as_posix(): p.read_bytes() for p in sorted(package.rglob("*")) if p.is_file()}
    else:
        result = fnrun("run", "-", "--image", image, *flags, *args, stdin=stdin_of(source, form), env=env)
        files = {}
    _no_traceback(result)
    return result.code, result.stdout, files


def _no_traceback(result: Result) -> None:
    assert "Traceback" not in result.stderr, result.stderr


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("package", PACKAGES)
@pytest.mark.parametrize("name", sorted(OWN))
def test_own_catalog_in_process_is_the_image(tmp_path: Path, catalog_images: tuple[str, ...], name: str, package: str, form: str) -> None:
    image, source = f"fnrun/{name}:v1", FIXTURE / package
    want = outcome(tmp_path, source, form, image, OWN[name], "--no-builtin", "--no-cache")
    for way, env in WAYS.items():
        got = outcome(tmp_path, source, form, image, OWN[name], env=env)
        assert got == want, f"{way} differs from the image {image} on {form}"


# ------------------------------------------------------------------------ kpt's catalog builtins
KPT_IMAGE = "fnrun-test/kpt-catalog-code"
_DOCKERFILE = b"""FROM fnrun/python-base:bookworm
COPY functions /opt/fnrun/functions
COPY orchestrator /opt/fnrun/orchestrator
COPY starlark_go /opt/fnrun/starlark_go
COPY re2 /opt/fnrun/re2
ENV PYTHONPATH=/opt/fnrun PYTHONDONTWRITEBYTECODE=1
USER 65534
ENTRYPOINT ["sh", "-c", "exec python3 -m functions.kpt_catalog.$KPT_FN \\"$@\\"", "--"]
"""


def _context() -> tuple[bytes, str]:
    """A build context of this checkout's functions/ (and orchestrator/annotations.py, where the
    SDK reads fnrun's annotation names), the starlark_go and re2 fnrun runs, and its hash."""
    import importlib.util

    # Found, not imported: its Go runtime's threads in this process would stop later tests' forks.
    starlark_spec = importlib.util.find_spec("starlark_go")
    assert starlark_spec is not None and starlark_spec.origin is not None

    sources = [(p, p.relative_to(REPO).as_posix()) for p in sorted((REPO / "functions").rglob("*"))
               if p.is_file() and "__pycache__" not in p.parts]
    sources += [(REPO / "orchestrator" / name, f"orchestrator/{name}") for name in ("__init__.py", "annotations.py")]
    re2_spec = importlib.util.find_spec("re2")  # the regex engine of search-replace and Starlark's re.star
    assert re2_spec is not None and re2_spec.origin is not None
    for spec in (starlark_spec, re2_spec):
        folder = Path(spec.origin).parent
        sources += [(p, f"{folder.name}/{p.name}") for p in sorted(folder.iterdir()) if p.is_file()]
    digest, buffer = hashlib.sha256(_DOCKERFILE), io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, name in sources:
            data = path.read_bytes()
            digest.update(name.encode() + b"\0" + data)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(_DOCKERFILE)
        tar.addfile(info, io.BytesIO(_DOCKERFILE))
    return buffer.getvalue(), digest.hexdigest()[:12]


@pytest.fixture(scope="module")
def kpt_catalog_image() -> str:
    """kpt's catalog as fnrun implements it, in a container: tagged by the hash of the code."""
    context, tag = _context()
    image = f"{KPT_IMAGE}:{tag}"
    client = docker.from_env()
    if not client.images.list(name=image):
        client.images.build(fileobj=io.BytesIO(context), custom_context=True, tag=image, rm=True)
    return image


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("package", PACKAGES)
@pytest.mark.parametrize("name", sorted(KPT))
def test_kpt_catalog_in_process_is_its_code_in_a_container(tmp_path: Path, kpt_catalog_image: str, name: str, package: str, form: str) -> None:
    """The same exit code, and the same data and comments in the files and printed. The text
    differs on purpose: the code in a container answers JSON, while in-process the items keep
    their own text (their comments, as kpt's containers hand them on), and a key a step adds goes
    after the item's own keys, as kyaml orders them (orchestrator/runtimes/host/catalog_handover.py),
    not where the function's JSON had it (Starlark's dicts come back sorted)."""
    fn_env, source = ["-e", f"KPT_FN={name.replace('-', '_')}"], FIXTURE / package
    want = outcome(tmp_path, source, form, kpt_catalog_image, KPT[name], "--no-builtin", "--no-cache", *fn_env)
    for way in ("handover", "new-interpreter"):
        got = outcome(tmp_path, source, form, f"ghcr.io/kptdev/krm-functions-catalog/{name}:v0.2", KPT[name], "--builtin-catalog", env=WAYS[way])
        assert _as_data(got) == _as_data(want), f"{way} differs from {name} in a container on {form}"


def _as_data(result: tuple[int, str, dict[str, bytes]]) -> tuple[int, list, dict[str, bytes]]:
    from orchestrator.run.resourcelist import decode
    from orchestrator.yamlio import fast

    code, stdout, files = result
    printed = [(i.path, i.index, i.value) for i in decode(stdout, "stdout").items] if stdout.strip() else []
    contents = {}
    for name, raw in files.items():
        text = raw.decode()
        data = fast.load_all(text, name) if name.endswith(".yaml") else text
        contents[name] = (data, sorted(line.strip() for line in text.splitlines() if "#" in line))
    return code, printed, contents


# ------------------------------------------------------------------------------ the lost change
ONE = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n"


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_change_on_stdin_is_printed(catalog_images: tuple[str, ...], way: str) -> None:
    """Plain YAML on stdin: the namespace the function set is in the output, as the image gives it."""
    result = fnrun("run", "-", "--image", "fnrun/set-namespace:v1", "--", "namespace=zzz", stdin=ONE, env=WAYS[way])
    assert result.code == 0, result.stderr
    assert "builtin" in result.stderr and "    namespace: zzz\n" in result.stdout


def test_a_handed_over_change_to_an_item_without_a_path_is_kept(catalog_images: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Through the library, where the handover may take items that came without fnrun's path
    annotations: the path fnrun then gives the item goes into a text that holds the new value."""
    import io as _io

    from orchestrator.report.plain import PlainEvents
    from orchestrator.run import resourcelist
    from orchestrator.run.pipeline import RunOptions, run_functions
    from orchestrator.runtimes import Registry
    from orchestrator.select.functions import adhoc

    monkeypatch.setenv("FNRUN_BUILTIN", "1")
    items = resourcelist.decode(ONE, "stdin").items
    spec = adhoc(None, "fnrun/set-namespace:v1", arguments=("namespace=zzz",))
    with Registry() as registry:
        outcome = run_functions([spec], items, RunOptions(builtin=True, handover=True), tmp_path, PlainEvents(_io.StringIO()), registry)
    assert outcome.reports[0].builtin
    (item,) = outcome.resources
    assert item.data["metadata"]["namespace"] == "zzz"
    assert "  namespace: zzz\n" in item.text and item.path == "cm_configmap.yaml"
