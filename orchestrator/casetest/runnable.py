"""Why fnrun cannot run a case on this machine, if it cannot: the case skips itself, it needs WASM,
a registry (setup.sh pulls), a command in exec.sh that is not kpt fn render/eval/source/sink, or an
image that is neither in the local engine nor served in-process (fnrun's catalog; kpt's with
--builtin-catalog). Such a case is skipped with this reason, never counted as a pass. A case that
expects a failure runs with a missing image only when the failure it expects is that absence."""

from __future__ import annotations

from pathlib import Path

import yaml

from ..errors import FnrunError
from ..render.images import DEFAULT_PREFIX, resolve
from ..runtimes.container.inspect import inspect_image
from ..runtimes.host.kpt_catalog import catalog_name
from ..runtimes.host.sources import CATALOG
from .commands import RunOptions
from .config import EVAL, EXPECTED, CaseConfig

# words in an expected stderr saying the failure a case is about is a missing image
_ABSENCE_WORDS = ("no such image", "image not known", "denied", "initializing source", "not found", "pull access")
_OTHER_TOOLS = ("docker", "podman", "kustomize", "helm", "$KRM_FN_RUNTIME", "${KRM_FN_RUNTIME}")
_KPT_STANDINS = ("render", "eval", "source", "sink")


def cannot_run(case: Path, config: CaseConfig, options: RunOptions) -> str | None:
    """The reason the case cannot run here, or None."""
    if config.skip:
        return "the case marks itself skip"
    if config.runtimes and options.engine not in {name.lower() for name in config.runtimes}:
        return f"runs only on {', '.join(config.runtimes)} (KRM_FN_RUNTIME is {options.engine})"
    if config.allow_wasm:
        return "a WASM function (fnrun runs containers, exec and builtins)"
    setup = case / EXPECTED / "setup.sh"
    if setup.exists() and {"pull", "push"} & set(_words(setup.read_text(errors="replace"))):
        return "setup.sh pulls or pushes images (a registry)"
    script = case / EXPECTED / "exec.sh"
    if script.exists():
        for line in script.read_text(errors="replace").splitlines():
            other = _other_command(line.split("#", 1)[0])
            if other:
                return f"exec.sh runs {other}, which fnrun does not stand in for"
    missing = sorted(image for image in images_of(case, config) if not _served(image, options))
    if not missing:
        return None
    said = " ".join([config.std_err, config.std_err_regex, str(config.raw.get("StdErrRegEx") or "")]).lower()
    if config.exit_code and any(word in said for word in _ABSENCE_WORDS):
        return None  # the failure it expects is the image's absence: it runs
    what = ", ".join(missing)
    if config.exit_code:
        return f"expects a failure of {what}, which is neither in the local engine nor served in-process (a missing image would fail it for the wrong reason)"
    return f"needs {what}: not in the local engine, nor served in-process" + ("" if options.builtin_catalog else " (try --builtin-catalog)")


def _words(text: str) -> list[str]:
    return text.replace(";", " ").replace("|", " ").replace("&", " ").replace("(", " ").split()


def _other_command(code: str) -> str | None:
    """The first command of a shell line that is another tool or a kpt command with no stand-in."""
    words = _words(code)
    for index, word in enumerate(words):
        if word in _OTHER_TOOLS:
            return word
        if word == "kpt":
            following = words[index + 1 : index + 3]
            if following[:1] != ["fn"] or following[1:2] == [] or following[1] not in _KPT_STANDINS:
                return " ".join(["kpt", *following])
    return None


def _served(image: str, options: RunOptions) -> bool:
    if (image in CATALOG and options.builtin) or (options.builtin_catalog and catalog_name(image)):
        return True
    return inspect_image(image) is not None


def images_of(case: Path, config: CaseConfig) -> set[str]:
    """The images the case runs: its Kptfiles' steps (tags resolved as render resolves them), the
    eval case's image, exec.sh's --image/-i."""
    images = set()
    for kptfile in case.rglob("Kptfile"):
        if EXPECTED in kptfile.relative_to(case).parts:
            continue
        for image, tag in _steps(kptfile):
            try:
                images.add(resolve(image, tag, DEFAULT_PREFIX, str(kptfile)))
            except FnrunError:  # a bad reference or a constraint no local tag meets: the run will say so
                continue
    if config.test_type == EVAL and config.image:
        images.add(_with_tag(config.image if "/" in config.image else DEFAULT_PREFIX + config.image, config.tag))
    script = case / EXPECTED / "exec.sh"
    if script.exists():
        images |= _script_images(script.read_text(errors="replace"))
    return images


def _steps(kptfile: Path) -> list[tuple[str, str | None]]:
    try:
        data = yaml.safe_load(kptfile.read_text(errors="replace"))
    except yaml.YAMLError:
        return []
    pipeline = data.get("pipeline") if isinstance(data, dict) else None
    found = []
    for section in ("mutators", "validators"):
        steps = pipeline.get(section) if isinstance(pipeline, dict) else None
        for step in steps if isinstance(steps, list) else []:
            if isinstance(step, dict) and isinstance(step.get("image"), str):
                found.append((step["image"], str(step["tag"]) if step.get("tag") is not None else None))
    return found


def _script_images(script: str) -> set[str]:
    """--image/-i values of an exec.sh, a $NAME resolved from the script's own NAME=value lines."""
    assigned: dict[str, str] = {}
    images = set()
    for line in script.splitlines():
        words = line.split("#", 1)[0].split()
        if words[:1] == ["export"]:
            words = words[1:]
        if len(words) == 1 and "=" in words[0] and not words[0].startswith("-"):
            name, _, assigned_value = words[0].partition("=")
            assigned[name] = assigned_value.strip("\"'")
        for index, word in enumerate(words):
            value: str | None = None
            if word in ("--image", "-i") and index + 1 < len(words):
                value = words[index + 1]
            elif word.startswith("--image="):
                value = word.split("=", 1)[1]
            if value:
                value = value.strip("\"'")
                if value.startswith("$"):
                    value = assigned.get(value.strip("${}"), "")
                if value and not value.startswith("$"):
                    images.add(_with_tag(value if "/" in value else DEFAULT_PREFIX + value, None))
    return images


def _with_tag(image: str, tag: str | None) -> str:
    if tag and "@" not in image and ":" not in image.rsplit("/", 1)[-1]:
        return f"{image}:{tag}"
    return image if "@" in image or ":" in image.rsplit("/", 1)[-1] else image + ":latest"
