"""Whether an image reference is well formed, before any engine sees it.

A malformed reference is the user's input, not the environment: the engine answers it with a
server error that would read as exit 4. The grammar is the distribution project's (domain, path
components, tag, digest); it is checked by hand, one pass over the text, because the usual regular
expression for a path component (`[a-z0-9]+(?:(?:[._]|__|-*)[a-z0-9]+)*`) backtracks
exponentially on a long component that ends in a bad character."""

from __future__ import annotations

from ..errors import InputError

_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_HOST = _LOWER | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TAG = _HOST | frozenset("_.-")
_HEX = frozenset("0123456789abcdef")
_MAX_NAME = 255


def check_reference(image: str, where: str) -> None:
    """Raise an InputError naming `where` when `image` is no valid image reference."""
    problem = reference_problem(image)
    if problem is not None:
        raise InputError(f"{where}: image {image!r} is not a valid image reference: {problem}")


def reference_problem(image: str) -> str | None:
    """What is wrong with `image` as `[domain[:port]/]path[:tag][@digest]`, or None."""
    name, at, digest = image.partition("@")
    if at and not _digest_ok(digest):
        return "the digest must be ALGORITHM:HEX (e.g. sha256: and 64 hex digits)"
    name, tag = _split_tag(name)
    if tag is not None and not _tag_ok(tag):
        return "a tag is 1 to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'"
    if not name:
        return "it names no repository"
    if len(name) > _MAX_NAME:
        return f"the name is longer than {_MAX_NAME} characters"
    parts = name.split("/")
    if len(parts) > 1 and _is_domain(parts[0]):  # the engine also takes `a.b_c/d` as a path
        if not _domain_ok(parts[0]) and not _component_ok(parts[0]):
            return f"{parts[0]!r} is no registry host[:port]"
        parts = parts[1:]
    for part in parts:
        if not _component_ok(part):
            return f"{part!r}: a repository path is lowercase letters and digits, joined by '.', '_', '__' or dashes"
    return None


def _split_tag(name: str) -> tuple[str, str | None]:
    """The tag is what follows the last ':' when no '/' comes after it (else the ':' is a port's)."""
    head, colon, tail = name.rpartition(":")
    if colon and "/" not in tail:
        return head, tail
    return name, None


def _tag_ok(tag: str) -> bool:
    return 0 < len(tag) <= 128 and tag[0] not in ".-" and all(c in _TAG for c in tag)


def _digest_ok(digest: str) -> bool:
    algorithm, colon, hexits = digest.partition(":")
    return bool(colon and algorithm and len(hexits) >= 32 and all(c in _HEX for c in hexits)
                and all(c in _LOWER or c in "+._-" for c in algorithm))


def _is_domain(first: str) -> bool:
    """As the engine reads a reference: the first part is a registry when it could not be a path."""
    return "." in first or ":" in first or first == "localhost" or first.lower() != first


def _domain_ok(domain: str) -> bool:
    if domain.startswith("["):  # an IPv6 address, then maybe a port
        address, bracket, rest = domain[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else rest
        return bool(bracket and address) and all(c in _HEX or c in "ABCDEF:." for c in address) and _port_ok(port, rest)
    host, colon, port = domain.partition(":")
    labels = host.split(".")
    return _port_ok(port, colon) and all(
        label and label[0] != "-" and label[-1] != "-" and all(c in _HOST or c == "-" for c in label) for label in labels
    )


def _port_ok(port: str, given: str) -> bool:
    return not given or (port.isascii() and port.isdigit())


def _component_ok(part: str) -> bool:
    """Lowercase alphanumerics; between two runs of them one '.', one '_', '__' or any dashes."""
    if not part or part[0] not in _LOWER or part[-1] not in _LOWER:
        return False
    dashes, other = 0, ""  # the separator since the last alphanumeric
    for c in part:
        if c in _LOWER:
            if other and (dashes or other not in (".", "_", "__")):
                return False
            dashes, other = 0, ""
        elif c == "-":
            dashes += 1
        elif c in "._" and len(other) < 2:
            other += c
        else:
            return False
    return True
