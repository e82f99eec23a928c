"""`fnrun run` as a library: read → for each function (scope → runtime → reconcile → merge back)
→ write. Nothing is written unless every function succeeded."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace as _replace
from pathlib import Path

from ..errors import EnvironmentProblem, FunctionError, ImageUnavailable, InputError
from ..events import Events, FunctionReport
from ..kinds import Kind
from ..merge import scope
from ..merge.comments_kept import with_comments_kept
from ..merge.origin import compare
from ..read import notices
from ..read.package import Package, read_package
from ..read.unparsed import read_or_refuse
from ..report.plain import PlainEvents
from ..resource import Resource
from ..runtimes import Invocation, Registry, RunOutput, Runtime
from ..select.functions import FunctionSpec, declaration, discover
from ..write import writeback
from . import resourcelist, results
from .invocations import check_policy, choose_runtime, invocation
from .options import RunOptions, RuntimeFor
from .output import OutputDecoder
from .pipes import META_FILES

__all__ = ["Events", "FunctionReport", "Outcome", "RunOptions", "RuntimeFor", "run_package", "run_stream", "run_functions", "run_scoped"]


@dataclass
class Outcome:
    resources: list[Resource]
    reports: list[FunctionReport]
    plan: writeback.WritePlan | None = None
    package: Package | None = None


def run_package(
    root: Path | str,
    functions: list[FunctionSpec] | None = None,
    options: RunOptions = RunOptions(),
    events: Events | None = None,
    registry: Registry | None = None,
    write: bool = True,
    shard: tuple[int, int] | None = None,
    meta_resources: bool = False,
) -> Outcome:
    """Run the package's declared functions (or `functions`) over it and write the result back;
    with `shard` (I, N), only those of shard I's kpt packages (orchestrator.select.shard). With
    `meta_resources`, the package is read as `kpt fn eval` reads it for its --image/--exec
    function: Kptfiles and kustomization files are items too, and YAML that is not KRM is refused
    (declared functions leave both alone: they are not resources a function was declared for).
    `registry`: the run's runtimes (None: the run makes its own, closed at its end)."""
    root = Path(root)
    workers = options.settings.workers
    if meta_resources and functions is not None:  # kpt fn eval's reading: every file it refuses, in one error
        package = read_or_refuse(root, META_FILES, "kpt fn eval", lambda note: _declares(note.data) or scope.receiver(functions, note.path, note.data),
                                 workers)
    elif meta_resources:
        package = read_package(root, META_FILES, kustomizations=True, workers=workers)
    else:
        package = read_package(root, workers=workers)
    specs = discover(package.resources) if functions is None else functions
    if options.global_scope:
        specs = [_global(s) for s in specs]
    if shard is not None:
        from ..select.shard import run_share

        specs = run_share(specs, root, [r.path for r in package.resources if r.path], *shard)
    check_policy(specs, options, root)

    def receives(note: notices.Note) -> str | None:
        return _declares(note.data) or scope.receiver(specs, note.path, note.data)

    if meta_resources:  # as kpt fn eval: YAML that is not KRM is refused, with the unreadable, in one error
        notices.refuse(notices.refused_as_not_krm(package.notes, "kpt fn eval") + notices.unreadable(package.notes, receives), root)
    else:
        notices.unreadable_for(package.notes, receives, root)
    notices.warn(package.notes)
    paths = writeback.checker(root, package)
    outcome = run_functions(specs, package.resources, options, root, events or PlainEvents(), registry, paths)
    outcome.package = package
    outcome.plan = writeback.plan(root, outcome.resources, package, paths, workers)
    if write:
        writeback.apply(outcome.plan)
    return outcome


def _declares(data: object) -> str | None:
    """Why a resource read leniently must be refused though no function receives it: it declares one."""
    return "that declares a function" if isinstance(data, dict) and declaration(data) is not None else None


def run_stream(
    content: str,
    functions: list[FunctionSpec] | None = None,
    options: RunOptions = RunOptions(),
    events: Events | None = None,
    registry: Registry | None = None,
    root: Path | None = None,
) -> tuple[str, Outcome]:
    """`fnrun run -`: a ResourceList (or stream) in, the rendered ResourceList out."""
    items = resourcelist.decode(content, "stdin", options.settings.workers).items
    specs = discover(items) if functions is None else functions
    options = _replace(options, handover=False)
    if options.global_scope:
        specs = [_global(s) for s in specs]
    root = root or Path.cwd()
    check_policy(specs, options, root)
    outcome = run_functions(specs, items, options, root, events or PlainEvents(), registry)
    return resourcelist.encode(outcome.resources, workers=options.settings.workers), outcome


def _global(spec: FunctionSpec) -> FunctionSpec:
    return _replace(spec, global_scope=True)


def run_functions(
    specs: list[FunctionSpec],
    resources: list[Resource],
    options: RunOptions,
    root: Path,
    events: Events,
    registry: Registry | None,
    paths: writeback.PathChecker | None = None,
) -> Outcome:
    """Every function in order; functions whose scopes do not overlap may run at once, with
    everything they report kept in this order (orchestrator.run.units). `paths` judges where each
    function's resources may land (write.landing); None: a stream, only kept inside root."""
    from .session import session
    from .units import Cancelled, Executed, Unit, run_units

    reports: list[FunctionReport] = []
    deferred: list[FunctionError] = []
    events.planned(specs)
    units = [Unit(None if spec.global_scope or spec.declared_in is None else spec.directory, spec.kind == Kind.CONTAINER) for spec in specs]

    def execute(index: int, current: list[Resource], shown: Events, cancel: threading.Event) -> Executed:
        if cancel.is_set():
            raise Cancelled()
        spec = specs[index]
        items, positions = scope.split(spec, current)
        output, report, failure = run_scoped(spec, items, options, root, shown, active.registry, active.runtime_for(index), paths)
        active.done(index)
        if output is None:
            return Executed(current, [], (report, failure))
        return Executed(scope.merge_back(current, positions, output), [(spec, output)], (report, failure))

    def commit(index: int, done: Executed) -> None:
        report, failure = done.payload
        reports.append(report)
        if failure is not None:
            if not specs[index].defer_failure:
                raise failure
            deferred.append(failure)

    try:
        with session(list(enumerate(specs)), options, root, registry, resources) as active:
            resources = run_units(units, resources, events, execute, commit, options.jobs)
    finally:
        if options.results_dir is not None:
            results.write_results_dir(options.results_dir, [r.as_dict() for r in reports])
    if deferred:
        more = f" (and {len(deferred) - 1} more deferred failure(s))" if len(deferred) > 1 else ""
        raise FunctionError(f"{deferred[0]}{more}")
    return Outcome(resources, reports)


def run_scoped(
    spec: FunctionSpec,
    items: list[Resource],
    options: RunOptions,
    root: Path,
    events: Events,
    registry: Registry,
    runtime_for: RuntimeFor,
    paths: writeback.PathChecker | None = None,
) -> tuple[list[Resource] | None, FunctionReport, FunctionError | None]:
    """Run one function over the items in its scope, on the run's `registry` (`runtime_for`: the
    step's ordinary runtimes); its output (None on failure) replaces them; a resource it puts
    where `paths` refuses fails it (write.landing)."""
    with OutputDecoder(spec.name, options.settings.workers) as decoder:
        report = FunctionReport(spec.name, spec.kind, spec.declared_in)
        events.started(spec)
        started = time.monotonic()
        try:
            call = invocation(spec, options, root)
            runtime = choose_runtime(spec, call, options, registry, runtime_for)
            handed, sent = scope.as_handed(spec, items, options.package_paths)
            output = _run(runtime, call, handed, sent, lambda line: events.stderr(spec, line), options.handover, decoder.sink(runtime),
                          options.settings.workers)
        except EnvironmentProblem as err:  # a missing image, the engine: named with the file that asks for it
            from orchestrator.runtimes.host.kpt_catalog import offer

            instead = offer(spec.image) if isinstance(err, ImageUnavailable) else None
            raise err.seen_from(spec.declared_in, instead) from None
        except FunctionError as err:
            report.duration, report.exit_code, report.error = time.monotonic() - started, -1, str(err)
            events.finished(spec, report)
            return None, report, err
        report.duration, report.exit_code, report.cached = output.duration, output.exit_code, output.cached
        report.builtin = output.builtin
        try:
            decoded = decoder.decode(output)
            report.results = results.normalise(decoded.results, spec.name) if decoded else []
            if output.exit_code != 0:
                raise FunctionError(f"function {spec.name} failed with exit code {output.exit_code}")
            if options.error_results_fail and results.has_errors(report.results):
                count = sum(1 for r in report.results if r["severity"] == "error")
                raise FunctionError(f"function {spec.name} reported {count} error result(s)")
            assert decoded is not None
            new_items = scope.reconcile(spec, sent, decoded.items, options.file_names, options.package_paths)
            _check_item_paths(spec, paths or writeback.PathChecker(root).contained, new_items)
        except FunctionError as err:
            report.error = str(err)
            events.finished(spec, report)
            return None, report, err
        changes, new_items = with_comments_kept(compare(items, new_items), new_items)
        report.added, report.changed, report.removed = len(changes.added), changes.changed, len(changes.removed)
        events.transformed(spec, changes)
        events.finished(spec, report)
        return new_items, report, None



def _run(runtime: Runtime, call: Invocation, spec: FunctionSpec, items: list[Resource], on_stderr: Callable[[str], None],
         handover: bool = True, on_stdout: Callable[[bytes], None] | None = None, workers: int | None = None) -> RunOutput:
    """A runtime that takes the items as fnrun holds them (a catalog function in a forked child,
    orchestrator.runtimes.host.handover) skips the ResourceList's text both ways, where files are the
    result (the write-back edits their text to the values handed back), and one whose text way
    would lose the items' text (`items_always`) wherever it can; the others get it."""
    if runtime.takes_items and (handover or runtime.items_always):
        output = runtime.run_items(call, items, spec.config.data if spec.config is not None else None, on_stderr)
        if output is not None:
            return output
    return runtime.run(call, resourcelist.encode(items, spec.config, workers).encode("utf-8"), on_stderr, on_stdout)


def _check_item_paths(spec: FunctionSpec, check: Callable[[str], object], items: list[Resource]) -> None:
    """Every output path lands where a function's resources may (write.landing); each distinct
    path is checked once (a file holds many resources, and each check resolves symlinks on disk:
    0.5 s for 10,000 items otherwise)."""
    for path in dict.fromkeys(item.path or "" for item in items):
        try:
            check(path)
        except InputError as err:
            raise FunctionError(f"function {spec.name}: {err}") from None
