"""Rendering many changed files on every core: a function that touches every resource of a big
package leaves thousands of text edits, each a few libyaml parses of pure-Python work, and one
interpreter does them on one core.

Forked workers inherit the resources and the original package as they are (nothing is pickled on
the way in); each renders a contiguous share of the files and sends back only their bytes. Small
plans stay in-process: a fork costs more than it saves below a few hundred resources."""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Callable, Sequence

from ..errors import FnrunError
from ..yamlio import textedit

#: Below this many resources to render, one process is faster than forking.
MIN_RESOURCES = 1500
MAX_WORKERS = 4

Render = Callable[[str], bytes]

_job: tuple[Render, Sequence[str]] | None = None  # what forked workers inherit


def workers_for(resources: int) -> int:
    """How many processes to render with: 1 unless the plan is big, the machine has cores to
    spare, and fork exists (`FNRUN_WRITE_WORKERS` overrides, e.g. 1 to profile in-process)."""
    chosen = os.environ.get("FNRUN_WRITE_WORKERS")
    if chosen and chosen.isdigit():
        return max(1, int(chosen))
    if resources < MIN_RESOURCES:
        return 1
    import multiprocessing  # only here: its import costs a small package's whole write

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def render_all(paths: Sequence[str], weights: Sequence[int], render: Render, workers: int) -> dict[str, bytes]:
    """Each path's new bytes, rendered by `workers` processes in shares of about equal weight
    (resources per file); the same bytes, in the same order, as rendering them one by one."""
    if workers <= 1 or len(paths) < 2:
        return {path: render(path) for path in paths}
    global _job
    _job = (render, paths)
    shares = _shares(weights, workers)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=len(shares), mp_context=context, initializer=_worker_start) as pool:
            done = list(pool.map(_render_share, shares))
    finally:
        _job = None
    rendered: dict[str, bytes] = {}
    for outcome in done:
        if isinstance(outcome, _Failure):
            raise outcome.error()
        files, counts = outcome
        rendered.update(files)
        textedit.counts.update(counts)
    return {path: rendered[path] for path in paths}


def _shares(weights: Sequence[int], workers: int) -> list[tuple[int, int]]:
    """Contiguous (start, end) ranges of about equal total weight, at most `workers` of them."""
    total = sum(weights)
    shares, start, acc = [], 0, 0
    for i, weight in enumerate(weights):
        acc += weight
        if acc * workers >= total * (len(shares) + 1) and len(shares) < workers - 1:
            shares.append((start, i + 1))
            start = i + 1
    if start < len(weights):
        shares.append((start, len(weights)))
    return shares


def _worker_start() -> None:
    """Ctrl-C and SIGTERM are the parent's to handle: it stops the pool and cleans up."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    textedit.counts.clear()


class _Failure:
    """A user-facing error raised in a worker, carried back whole (exit code included)."""

    def __init__(self, err: FnrunError) -> None:
        self.kind, self.message, self.exit_code = type(err), str(err), err.exit_code

    def error(self) -> FnrunError:
        return self.kind(self.message, exit_code=self.exit_code)


def _render_share(share: tuple[int, int]) -> tuple[dict[str, bytes], Counter[str]] | _Failure:
    assert _job is not None, "render_all sets the job before forking"
    render, paths = _job
    textedit.counts.clear()
    try:
        files = {path: render(path) for path in paths[share[0] : share[1]]}
    except FnrunError as err:
        return _Failure(err)
    return files, Counter(textedit.counts)
