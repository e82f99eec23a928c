"""`fnrun render` as a library: read the package → every Kptfile pipeline in kpt's order, each
step through fnrun's per-function path (scope → runtime → reconcile → merge back) → one write
plan. A failed render plans nothing but the root Kptfile's status, unless the root Kptfile asks
for `kpt.dev/save-on-render-failure`."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..errors import FnrunError, FunctionError, InputError
from ..kinds import Kind
from ..merge import scope
from ..read import notices
from ..read.package import Package, read_package
from ..report.plain import PlainEvents
from ..resource import Resource
from ..run import results
from ..run.invocations import check_policy
from ..run.pipeline import Events, FunctionReport, Outcome, RunOptions, run_scoped
from ..runtimes import Registry
from ..select.functions import FunctionSpec
from ..write import writeback
from . import kptfile as kf, packages, status as render_status
from .images import image_prefix
from .kptfile import Step
from .steps import with_current_config
from .when import holds

if TYPE_CHECKING:
    from ..run.session import RunSession

KPTFILE_NAMES = ("Kptfile",)


@dataclass(frozen=True)
class RenderOptions:
    run: RunOptions = RunOptions()
    image_prefix: str | None = None  # --image-prefix; else $KPT_IMAGE_PREFIX; else kpt's catalog
    record_status: bool = True  # write status into the root Kptfile (in-place renders only)
    shard: tuple[int, int] | None = None  # --shard I/N: only this share of the top-level packages


@dataclass
class RenderOutcome(Outcome):
    failure: FnrunError | None = None
    steps: list[tuple[Step, FunctionReport]] = field(default_factory=list)


class PlannedStep(NamedTuple):
    """A pipeline step and the function it runs."""

    step: Step
    spec: FunctionSpec


@dataclass(frozen=True)
class StepRun:
    """One step as it ran: its report, with its step (None: its `when` skipped it, so the root
    Kptfile's status leaves it out); the failure that ends its pipeline; and, when it changed
    the package, the resources after it and what it gave back (replayed on a later commit)."""

    step: Step | None
    report: FunctionReport
    failure: FnrunError | None = None
    merged: list[Resource] | None = None
    output: list[Resource] | None = None


@dataclass
class PipelineRun:
    """What one package's pipeline did, committed in kpt's order: each step's run, and the
    failure that ended it (a step's, or one raised before its step could report)."""

    steps: list[StepRun] = field(default_factory=list)
    failure: FnrunError | None = None


def pipeline_steps(resources: list[Resource], prefix: str | None = None, shard: tuple[int, int] | None = None,
                   builtin_catalog: bool = False) -> list[PlannedStep]:
    """Every step of every pipeline (of this shard's packages), in run order, as the spec it runs
    (what `fnrun list` shows); `builtin_catalog` lets fnrun's builtins answer tag constraints."""
    from .steps import to_spec

    found = packages.kptfiles(resources)
    owners = packages.order(found)
    if shard is not None:
        owners = [owner for owner in owners if owner.directory in _shard_share(found, resources, shard)]
    resolved = image_prefix(prefix)
    return [PlannedStep(step, to_spec(step, owner, resources, resolved, builtin_catalog)) for owner in owners for step in owner.steps]


def _shard_share(found: dict[str, kf.Kptfile], resources: list[Resource], shard: tuple[int, int]) -> set[str]:
    """The package directories that belong to this shard's top-level packages (render.shard)."""
    from ..select import shard as sharding

    tops, mine = sharding.split(list(found), [r.path for r in resources if r.path], *shard)
    return {directory for directory in found if sharding.owner(directory, tops) in mine}


def plan_steps(root: Path, resources: list[Resource], options: RenderOptions) -> list[PlannedStep]:
    """The steps to run; what the user has not allowed is refused before anything runs."""
    planned = pipeline_steps(resources, options.image_prefix, options.shard, options.run.builtin_catalog)
    for step, spec in planned:
        if spec.kind == Kind.EXEC and not options.run.enable_exec:
            raise InputError(f"{step.where}: exec {step.exec} needs --allow-exec")
    check_policy([spec for _, spec in planned], options.run, root)
    return planned


def render_package(
    root: Path | str,
    options: RenderOptions = RenderOptions(),
    events: Events | None = None,
    registry: Registry | None = None,
    in_place: bool = True,
) -> RenderOutcome:
    """Render the package in memory on the run's `registry` (None: one of its own, closed at its
    end); `outcome.plan` is what an in-place render writes (None with `in_place=False`),
    `outcome.failure` the error a caller raises after writing that plan."""
    root = Path(root)
    package = read_package(root, KPTFILE_NAMES, kustomizations=True, workers=options.run.settings.workers)
    _check_krm(package)
    planned = plan_steps(root, package.resources, options)
    notices.unreadable_for(package.notes, lambda note: scope.receiver([spec for _, spec in planned], note.path, note.data))
    notices.warn(package.notes)
    events = events or PlainEvents()
    outcome = RenderOutcome(package.resources, [], package=package)
    events.planned([spec for _, spec in planned])
    paths = writeback.checker(root, package)
    try:  # outcome.resources: what rendered so far, kept by save-on-render-failure
        _run_pipelines(planned, options.run, root, events, registry, outcome, paths)
    except FnrunError as err:
        outcome.failure = err
    finally:
        if options.run.results_dir is not None:
            results.write_results_dir(options.run.results_dir, [r.as_dict() for r in outcome.reports])
    save = outcome.failure is None or found_flag(package.resources, kf.SAVE_ON_FAILURE)
    if not save:
        outcome.resources = package.resources
    if in_place:
        written = outcome.resources
        if options.record_status:
            written = _with_root_status(written, outcome)
        outcome.plan = writeback.plan(root, written, package, paths, options.run.settings.workers)
    return outcome


def _run_pipelines(
    planned: list[PlannedStep],
    options: RunOptions,
    root: Path,
    events: Events,
    registry: Registry | None,
    outcome: RenderOutcome,
    paths: writeback.PathChecker,
) -> None:
    """Each package's pipeline is one unit (orchestrator.run.units): sibling packages, which do not
    see each other, may render at once; reports and failures are committed in kpt's order, and
    `outcome.resources` is the package as the last committed pipeline left it."""
    from ..run.session import session
    from ..run.units import Cancelled, Executed, Unit, run_units

    pipelines: list[list[int]] = []  # planned steps by package, in run order
    for key, (_, spec) in enumerate(planned):
        if pipelines and planned[pipelines[-1][0]].spec.declared_in == spec.declared_in:
            pipelines[-1].append(key)
        else:
            pipelines.append([key])
    units = [Unit(planned[keys[0]].spec.directory, all(planned[k].spec.kind == Kind.CONTAINER for k in keys)) for keys in pipelines]

    def execute(index: int, current: list[Resource], shown: Events, cancel: threading.Event) -> Executed:
        ran = PipelineRun()
        done = Executed(current, [], ran)
        for key in pipelines[index]:
            if cancel.is_set():
                raise Cancelled()
            try:
                step_run = _run_step(key, *planned[key], done.after, options, root, shown, active, paths)
            except FnrunError as err:  # an earlier step's report still counts, as in the serial run
                ran.failure = err
                return done
            ran.steps.append(step_run)
            if step_run.failure is not None:
                ran.failure = step_run.failure
                return done
            if step_run.merged is not None and step_run.output is not None:
                done.trace.append((planned[key].spec, step_run.output))
                done.after = step_run.merged
        return done

    def commit(index: int, done: Executed) -> None:
        ran: PipelineRun = done.payload
        outcome.resources = done.after
        for step_run in ran.steps:
            outcome.reports.append(step_run.report)
            if step_run.step is not None:
                outcome.steps.append((step_run.step, step_run.report))
        if ran.failure is not None:
            raise ran.failure

    with session(list(enumerate(spec for _, spec in planned)), options, root, registry, outcome.resources) as active:
        run_units(units, outcome.resources, events, execute, commit, options.jobs)


def _run_step(
    key: int, step: Step, spec: FunctionSpec, resources: list[Resource], options: RunOptions, root: Path, events: Events, active: RunSession,
    paths: writeback.PathChecker,
) -> StepRun:
    """One step run over `resources` (StepRun says what came of it)."""
    spec = with_current_config(spec, resources)
    items, positions = scope.split(spec, resources)
    if step.when is not None and not holds(step.when, items, step.where):
        active.done(key)
        return StepRun(None, _skipped(spec, step, events))
    output, report, failure = run_scoped(spec, items, options, root, events, active.registry, active.runtime_for(key), paths)
    active.done(key)
    if failure is not None:
        return StepRun(step, report, failure)
    assert output is not None
    if step.validator and (report.added or report.changed or report.removed):
        report.error = f"{step.where}: validator {spec.name} changed the package ({report.added} added, {report.changed} changed, {report.removed} removed); validators must not"
        return StepRun(step, report, FunctionError(report.error))
    merged = scope.merge_back(resources, positions, output)
    twice = scope.taken_twice(merged)
    if twice is not None:
        report.error = f"{step.where}: function {spec.name}: resource at path {twice[0]!r} and index {twice[1]} already exists"
        return StepRun(step, report, FunctionError(report.error))
    return StepRun(step, report, merged=merged, output=output)


def _skipped(spec: FunctionSpec, step: Step, events: Events) -> FunctionReport:
    """A step whose `when` is false: displayed and reported as run, with nothing done."""
    message = f"skipped: when {step.when!r} is false"
    report = FunctionReport(spec.name, spec.kind, spec.declared_in, results=results.normalise([{"message": message, "severity": "info"}], spec.name))
    events.started(spec)
    events.stderr(spec, message)
    events.finished(spec, report)
    return report


def _check_krm(package: Package) -> None:
    """kpt renders KRM only: a YAML document that is not a resource (nor a kustomization, which
    kpt hands to functions like one) is the package's mistake, as in kpt; `fnrun run` leaves such
    documents alone. A resource the reader could not read faithfully is judged by whether a
    function receives it (read.notices)."""
    for note in package.notes:
        if note.problem is not None and note.path.rsplit("/", 1)[-1] in KPTFILE_NAMES:
            raise InputError(f"{note.path}:{note.line}: {note.problem}; a Kptfile must be read faithfully")
    notices.require_krm(package.notes, "kpt's render", package.root)


def found_flag(resources: list[Resource], key: str) -> bool:
    root = next((r for r in resources if r.path == "Kptfile" and kf.is_kptfile(r)), None)
    return root is not None and kf.parse(root).flag(key)


def _with_root_status(resources: list[Resource], outcome: RenderOutcome) -> list[Resource]:
    error = str(outcome.failure) if outcome.failure is not None else None
    return [render_status.with_status(r, outcome.steps, error) if r.path == "Kptfile" and kf.is_kptfile(r) else r for r in resources]
