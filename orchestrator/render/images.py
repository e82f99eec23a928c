"""Which image a step names: kpt's short names, default prefix, `:latest` and `tag:`.

There is no registry lookup: a `tag:` semver constraint is resolved against the tags of that
image the local engine already has (so `--image-pull-policy never` works offline)."""

from __future__ import annotations

import re

from ..errors import InputError
from .reference import check_reference

DEFAULT_PREFIX = "ghcr.io/kptdev/krm-functions-catalog/"
_VERSION = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?$")
# Starts only where a version starts (the lookbehind): an unanchored search that
# retried inside a long run of digits would be quadratic in a Kptfile's tag constraint.
_HYPHEN = re.compile(r"(?<![\w.*])(v?[\d.x*]+)\s+-\s+(v?[\d.x*]+)")
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
_CONSTRAINT = re.compile(r"^\s*(\^|~|>=|<=|>|<|!=|=)?\s*(v?[\w.*-]+)\s*$")


def image_prefix(flag: str | None) -> str:
    """--image-prefix (KPT_IMAGE_PREFIX when not passed: the option schema reads it at the edge),
    else kpt's catalog; always ends with `/`."""
    prefix = flag or DEFAULT_PREFIX
    return prefix if prefix.endswith("/") else prefix + "/"


def split_tag(image: str) -> tuple[str, str | None]:
    """(repository, tag or None); a digest stays on the repository."""
    if "@" in image:
        return image, None
    name, sep, tag = image.rpartition(":")
    if sep and "/" not in tag:
        return name, tag
    return image, None


def resolve(image: str, tag: str | None, prefix: str, where: str, builtin_catalog: bool = False) -> str:
    """The full image reference a step runs. With `builtin_catalog`, a tag constraint no local
    tag satisfies is answered by fnrun's builtin of that catalog function when the release it
    follows satisfies it (there is no registry to ask, as kpt would)."""
    if "/" not in image:  # a short name (a registry with a port has a `/` after it too)
        image = prefix + image
    check_reference(image, where)
    repo, own_tag = split_tag(image)
    if tag is None:
        return image if own_tag is not None or "@" in image else f"{image}:latest"
    if not is_constraint(tag) or not parses(tag):  # as kpt: what is no constraint is a literal tag
        if not _TAG.match(tag):
            raise InputError(f"{where}: tag {tag!r} is neither a semver constraint nor a valid image tag")
        return f"{repo}:{tag}"
    best = best_match(tag, local_tags(repo), where)
    if best is None and builtin_catalog:
        best = best_match(tag, _builtin_versions(repo), where)
    if best is None:
        raise InputError(f"{where}: no local tag of {repo} satisfies {tag!r} (fnrun resolves tag constraints against the engine's images only)")
    return f"{repo}:{best}"


def is_constraint(tag: str) -> bool:
    """As kpt decides: a tag that reads as a version (`v0.4`, `1.2.3`) is used literally."""
    return _VERSION.match(tag) is None and bool(re.search(r"[\^~<>=*x, |]", tag))


def parses(constraint: str) -> bool:
    try:
        best_match(constraint, [], "")
    except InputError:
        return False
    return True


def local_tags(repo: str) -> list[str]:
    """The engine's tags of `repo`, asked through the Engine API (as every engine call is)."""
    import docker
    import requests

    from ..runtimes.container.runtime import api_client

    try:
        images = api_client().images(name=repo)
    except (docker.errors.DockerException, requests.exceptions.RequestException) as err:
        raise InputError(f"cannot list local tags of {repo}: {' '.join(str(err).split())}") from None
    prefix = repo + ":"
    return [tag[len(prefix):] for image in images for tag in image.get("RepoTags") or [] if tag.startswith(prefix)]


def _builtin_versions(repo: str) -> list[str]:
    """The release fnrun's builtin of this catalog image follows, if it has one."""
    from functions.kpt_catalog import VERSIONS

    from ..runtimes.host.kpt_catalog import catalog_name

    name = catalog_name(repo)
    return [VERSIONS[name]] if name in VERSIONS else []


def best_match(constraint: str, tags: list[str], where: str) -> str | None:
    """The highest tag satisfying a Masterminds-style constraint (`||` of comma/space AND'd terms)."""
    alternatives = [_terms(alt, where) for alt in constraint.split("||")]
    candidates = [(v, t) for t in tags if (v := _version(t)) is not None and v[3] is None]
    fitting = [(v, t) for v, t in candidates if any(all(ok(v) for ok in alt) for alt in alternatives)]
    return max(fitting)[1] if fitting else None


def _version(text: str) -> tuple[int, int, int, str | None] | None:
    m = _VERSION.match(text)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0), m.group(4)


def _hyphen(match: re.Match) -> str:
    """Masterminds' `A - B`: `>=A, <=B`, or below the next release when B is partial (`- 1.4`)."""
    high = match.group(2).lstrip("v").rstrip(".x*").rstrip(".").split(".")
    if len(high) == 3 or not all(p.isdigit() for p in high):
        return f">={match.group(1)},<={match.group(2)}"
    nums = [int(p) for p in high]
    nums[-1] += 1
    return f">={match.group(1)},<{'.'.join(map(str, nums))}"


def _terms(text: str, where: str) -> list:
    text = _HYPHEN.sub(_hyphen, text)
    parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    merged: list[str] = []
    for part in parts:  # ">= 1.2" written with a space
        if merged and merged[-1] in ("^", "~", ">=", "<=", ">", "<", "!=", "="):
            merged[-1] += part
        else:
            merged.append(part)
    return [_term(p, where) for p in merged]


def _term(text: str, where: str):
    m = _CONSTRAINT.match(text)
    if not m:
        raise InputError(f"{where}: tag constraint {text!r} is not a semver constraint")
    op, ver = m.group(1) or "=", m.group(2).rstrip(".x*").rstrip(".")
    parts = ver.lstrip("v").split(".") if ver not in ("", "v") else []
    if not all(p.isdigit() for p in parts) or len(parts) > 3:
        raise InputError(f"{where}: tag constraint {text!r} is not a semver constraint")
    nums = [int(p) for p in parts]
    low = tuple(nums + [0] * (3 - len(nums)))
    if op == "=" and len(nums) < 3:  # 1.2 or 1.2.x: that minor series
        op = "~" if nums else ">="
    if op == "^":
        first = next((i for i, n in enumerate(nums) if n != 0), max(len(nums) - 1, 0))
        high = tuple(nums[:first] + [nums[first] + 1] + [0] * (2 - first)) if nums else (1 << 30, 0, 0)
        return lambda v: low <= v[:3] < high
    if op == "~":
        keep = 1 if len(nums) == 1 else 2
        high = tuple(nums[: keep - 1] + [nums[keep - 1] + 1] + [0] * (3 - keep)) if nums else (1 << 30, 0, 0)
        return lambda v: low <= v[:3] < high
    compare = {">=": lambda a: a >= low, "<=": lambda a: a <= low, ">": lambda a: a > low,
               "<": lambda a: a < low, "!=": lambda a: a != low, "=": lambda a: a == low}[op]
    return lambda v: compare(v[:3])
