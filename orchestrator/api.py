"""The library API: what the CLI calls, and what tests and other programs should call.

Each entry reads like the data flow: read → (functions) → write."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING

from . import annotations as ann, collector
from .errors import FnrunError, InputError, Interrupted
from .read import notices
from .read.package import Package, read_package
from .requests import (
    CI,
    Functions,
    Images,
    Output,
    RenderRequest,
    Request,
    RunRequest,
    SandboxSettings,
    Speed,
    full_image,
    given_functions,
    pipeline_options,
    selections,
    shard_of,
    validate,
)
from .run import pipes, resourcelist
from .run.pipes import read_chunks, source_chunks
from .write import writeback
from .write.writeback import WritePlan
from .yamlio import fast

if TYPE_CHECKING:
    from .doctor import Finding
    from .render import save
    from .report import RunSummary
    from .run.pipeline import Events, RunOptions
    from .runtimes import Registry
    from .runtimes.container.early import EarlyContainer
    from .select.functions import FunctionSpec
    from .settings import Settings


@collector.paused()
def source(root: Path | str, workers: int | None = None) -> str:
    """The package as a config.kubernetes.io/v1 ResourceList, comments and origin annotations
    included. `workers` here and below: FNRUN_WORKERS as the caller's edge read it (None: the
    cores decide how many processes share a big package's work)."""
    return "".join(source_chunks(root, workers=workers))


@collector.paused()
def write_source(root: Path | str, out: IO[str], fn_config: Path | str | None = None, workers: int | None = None) -> None:
    """`source` written to `out` while the package is read (what `fnrun source` does); with
    `fn_config`, that file's resource as the list's functionConfig."""
    pipes.write_source(root, out, fn_config=Path(fn_config) if fn_config is not None else None, workers=workers)


@collector.paused()
def sink(root: Path | str, content: str | IO[bytes], source_name: str = "stdin", workers: int | None = None) -> WritePlan:
    """Write a ResourceList, List or plain stream (text, or a binary stream read as it arrives)
    into root, created when missing.

    An existing root is brought in line with the input: files whose resources are unchanged keep
    their bytes, changed ones are edited in place, and resource files the input no longer holds are
    deleted (so `fnrun source d | filter | fnrun sink d` works like an in-place run). An input
    without any document is refused rather than taken as "delete everything": an empty list says
    `items: []`."""
    root = Path(root)
    original = read_package(root, workers=workers) if root.exists() else None
    if original is not None:
        notices.warn(note for note in original.notes if note.problem)  # the others are not the input's business
    chunks = [content] if isinstance(content, str) else read_chunks(content, source_name)
    streaming = writeback.StreamWriter(root, original)
    guard = notices.KeepOddFiles(streaming, original.notes if original is not None else ())
    try:
        decoded = resourcelist.decode_stream(chunks, source_name, guard, other_documents=True)
        if decoded.kind == "stream" and not decoded.items:
            raise InputError(f"{source_name}: no resources in the input (an empty ResourceList says `items: []`); nothing written")
        for path, line in decoded.odd:
            if path not in guard.kept:
                print(f"fnrun: warning: {line}", file=sys.stderr)
        return streaming.finish()
    except BaseException:
        streaming.abort()
        raise


def read_stdin() -> str:
    """All of stdin as text, with invalid UTF-8 reported as an input error."""
    return fast.decode(sys.stdin.buffer.read(), "stdin")


@collector.paused()
def run(request: RunRequest, events: Events | None = None, stdout: IO[str] | None = None, early: EarlyContainer | None = None) -> RunSummary:
    """`fnrun run`: the functions a package (or stdin) declares, or the one `request.functions`
    names. stdout gets data only: the rendered ResourceList (`--output -`, stdin), the diff
    (`--check`, `--diff`) or the results document; the display (`events`, by default the one for
    stderr) gets the progress. `early`: the container fnrun's launcher started for this command
    line while fnrun loaded, for the run to adopt (or remove). Raises FnrunError on failure,
    `Drift` when `--check` finds files that would change."""
    validate(request, save=request.functions.save)
    return _carry_out(request, partial(_run_functions, request), events, stdout, early)


@collector.paused()
def render(request: RenderRequest, events: Events | None = None, stdout: IO[str] | None = None,
           early: EarlyContainer | None = None) -> RunSummary:
    """`fnrun render`: a kpt package's Kptfile pipelines, subpackages first; stdout, the display,
    `early` and the errors as for `run`."""
    validate(request)
    return _carry_out(request, partial(_render, request), events, stdout, early)


@dataclass
class _Produced:
    """What a command's own step hands the shared path: the resources, the plan to write (None:
    nothing to write), whether Kptfiles go last on stdout (as kpt prints them), what --save records."""

    resources: list
    plan: WritePlan | None
    kptfiles_last: bool
    saving: save.SaveRequest | None = None


Produce = Callable[["RunOptions", "Path | None", "Events", "RunSummary", "Registry"], _Produced]


def _carry_out(request: Request, produce: Produce, events: Events | None, stdout: IO[str] | None,
               early: EarlyContainer | None = None) -> RunSummary:
    """What run and render share around their own step: the display, the annotations, the diff,
    the write, stdout and the results document. The step runs on the run's own runtimes
    (`Registry`: its engine connection, fork server, result cache and the launcher's `early`
    container), ended as soon as the step is done, before anything is written; the early
    container then goes back to the launcher, which removes it unless the run adopted it."""
    from .merge import origin
    from .report import RunSummary, choose, formats
    from .report.base import Recorder
    from .write import diff

    output, ci = request.output, request.ci
    out = stdout or sys.stdout
    from_stdin = request.directory == "-"
    root = None if from_stdin else Path(request.directory)
    display = events if events is not None else choose(sys.stderr, output.quiet, output.verbose, root)
    summary = RunSummary(check=ci.check, root=root, command=request.command.name)
    annotating = output.origin_annotations or output.transformer_annotations
    tracker = origin.Tracker() if annotating else None
    recorder = Recorder(display, summary, tracker)
    started = time.monotonic()
    document = ci.results_format  # written last, also for a failed run
    error: FnrunError | None = None
    diff_text: str | None = None
    try:
        options = pipeline_options(request, root)
        with _registry(options, early) as registry:
            produced = produce(options, root, recorder, summary, registry)
        summary.plan, resources, saving = produced.plan, produced.resources, produced.saving
        if tracker is not None:
            resources = origin.annotate(resources, tracker, output.origin_annotations, output.transformer_annotations)
        if saving is not None and saving.skipped is None and summary.plan is not None:
            from .render.save import add_to_plan  # only for --save: not loaded by every run

            saved_note: str | None = saving.describe(add_to_plan(summary.plan, saving))
        elif saving is not None:
            saved_note = saving.skipped
        if summary.plan is not None and (ci.check or output.diff):
            from .report.paths import repo_prefix

            diff_text = diff.unified(summary.plan, prefix=repo_prefix(root))
        if summary.plan is not None and not (ci.check or output.to_stdout):
            writeback.apply(summary.plan)
            summary.written = True
            if saving is not None and saving.skipped is not None:
                print(f"fnrun: warning: {saved_note}", file=sys.stderr)
            elif saving is not None and not output.quiet:
                print(f"fnrun: {saved_note}", file=sys.stderr)
        summary.elapsed = time.monotonic() - started
        display.summary(summary)
        if document is None and diff_text is not None:
            out.write(diff_text)
        elif document is None and (from_stdin or output.to_stdout):
            if output.exclude_local_config:
                resources = for_cluster(resources)
            from .render import output as render_output  # stdout only: not loaded by every run

            if produced.kptfiles_last:  # kpt's render and fn eval print Kptfiles last
                resources = render_output.kptfiles_last(resources)
            out.write(render_output.unwrapped(resources) if output.unwrap else resourcelist.encode(resources, workers=options.settings.workers))
        if ci.check and summary.plan is not None and summary.plan.changes:
            raise diff.Drift(diff.drift_message(request.directory, summary.plan, summary.command, ci.rerun))
    except FnrunError as err:
        error = err
        display.failed(err)
        raise
    except BaseException as err:  # Ctrl-C, a bug: no results document that would claim success
        document = None
        if isinstance(err, KeyboardInterrupt) and summary.written:  # the CLI must not say "nothing was written"
            raise Interrupted.of(err, written=True) from None
        raise
    finally:
        display.close()
        if document is not None:
            summary.elapsed = summary.elapsed or time.monotonic() - started
            out.write(formats.render(document, summary, error, diff_text))
        out.flush()
    return summary


def _registry(options: RunOptions, early: EarlyContainer | None) -> Registry:
    """The run's runtimes: this machine's, or (--server) container functions sent to a function runner."""
    from .runtimes import Registry

    if options.server is None:
        return Registry(early)
    from .runtimes.remote import RemoteRuntime

    return Registry(early, remote=RemoteRuntime(options.server))


def _run_functions(request: RunRequest, options: RunOptions, root: Path | None, events: Events, summary: RunSummary,
                   registry: Registry) -> _Produced:
    """run's own step: the package's functions (or the one given), over stdin or the directory."""
    from .run.pipeline import run_package, run_stream

    functions = given_functions(request, root)
    saving = _save_request(request, root)
    if root is None:
        _, outcome = run_stream(read_stdin(), functions, options, events, registry)
        return _Produced(outcome.resources, None, functions is not None, saving)
    outcome = run_package(root, functions, options, events, registry, write=False, shard=shard_of(request.ci),
                          meta_resources=functions is not None)
    _kptfile_pipelines_not_run(request, summary)
    plan = None if request.output.to_stdout else outcome.plan
    if request.output.output_dir is not None:
        plan = out_of_place(request.output.output_dir, outcome.resources, outcome.package, options.settings.workers)
    return _Produced(outcome.resources, plan, functions is not None, saving)


def _save_request(request: RunRequest, root: Path | None) -> save.SaveRequest | None:
    """What --save will record, checked before anything runs."""
    functions = request.functions
    if not functions.save:
        return None
    if root is None or request.output.to_stdout or request.ci.check:
        raise InputError("--save edits the package's Kptfile; it does not go with a package on stdin, --output - or --check")
    selectors, exclude = selections(functions)
    from .render.save import prepare

    function = (full_image(functions.image, request.images.prefix), functions.tag, functions.exec_path)
    return prepare(root, functions.function_type, function, functions.fn_config, functions.arguments, selectors, exclude)


def _render(request: RenderRequest, options: RunOptions, root: Path | None, events: Events, summary: RunSummary,
            registry: Registry) -> _Produced:
    """render's own step, in memory; a failed in-place render still writes the root Kptfile's
    status (and, with kpt.dev/save-on-render-failure, what rendered) before its error is raised."""
    from .render.output import check_output_dir
    from .render.runner import RenderOptions, render_package

    assert root is not None
    output = request.output
    in_place = not (output.to_stdout or output.output_dir is not None)
    if output.output_dir is not None:
        check_output_dir(output.output_dir)
    record = request.record_status and in_place and not request.ci.check
    outcome = render_package(root, RenderOptions(options, request.images.prefix, record, shard_of(request.ci)), events,
                             registry, in_place=in_place)
    if outcome.failure is not None:
        if outcome.plan is not None and not request.ci.check:
            try:
                writeback.apply(outcome.plan)
            except FnrunError as err:  # the step's failure is the news; the status did not land
                print(f"fnrun: warning: the failed render's status was not written: {err}", file=sys.stderr)
        raise outcome.failure
    if output.output_dir is not None:
        outcome.plan = out_of_place(output.output_dir, outcome.resources, outcome.package, options.settings.workers)
    return _Produced(outcome.resources, outcome.plan, kptfiles_last=True)


def out_of_place(target: Path, resources: list, source: Package | None, workers: int | None = None) -> WritePlan:
    """`-o DIR` for run and render alike: the rendered package planned into DIR, the source untouched;
    a file the source's read may land in DIR as it would in place (write.landing)."""
    from .render.output import check_output_dir

    check_output_dir(target)
    return writeback.plan(target, resources, check=writeback.PathChecker(target, source.files if source is not None else ()), workers=workers)


def for_cluster(resources: list) -> list:
    """What `--exclude-local-config` keeps: resources a cluster should get. Kptfiles and
    resources marked config.kubernetes.io/local-config are for local tools only (kpt's own apply
    leaves both out)."""
    def kptfile(data: dict) -> bool:  # by type, not file name: a stream on stdin may carry no paths
        return data.get("kind") == "Kptfile" and str(data.get("apiVersion", "")).startswith("kpt.dev/")

    return [r for r in resources if str(ann.annotations_of(r.data).get(ann.LOCAL_CONFIG)).lower() != "true" and not kptfile(r.data)]


def _kptfile_pipelines_not_run(request: RunRequest, summary: RunSummary) -> None:
    """`fnrun run` over a kpt package whose functions are all in Kptfile pipelines runs nothing;
    a CI gate must not pass for that. Refused, pointing to `fnrun render`."""
    if summary.reports or request.functions.image or request.functions.exec_path or request.ci.shard:
        return
    from .read.package import package_files, read_path
    from .render.kptfile import pipeline_step_count

    root = Path(request.directory)
    kptfiles = [rel for rel in package_files(root, ("Kptfile",)) if rel.rpartition("/")[2] == "Kptfile"]
    steps = pipeline_step_count([r for rel in kptfiles for r in read_path(root, rel)[1]])
    if steps:
        flags = " --check" if request.ci.check else ""
        raise InputError(
            f"{request.directory}: no function annotations, but its Kptfile pipelines have {steps} step{'s' if steps != 1 else ''}; "
            f"`fnrun run` does not run them: use `fnrun render {request.directory}{flags}`"
        )


@collector.paused()
def explain(request: RunRequest, selector: str, events: Events | None = None) -> str:
    """`fnrun explain`: render the package in memory and tell where the selected resource came
    from and which functions changed it (or which one removed it)."""
    from .merge import origin
    from .report import RunSummary, choose
    from .report.base import Recorder
    from .report.explain import explain as explain_resource, parse_selector
    from .run.pipeline import run_package

    wanted = parse_selector(selector)
    root = Path(request.directory)
    display = events if events is not None else choose(sys.stderr, request.output.quiet, request.output.verbose, root)
    tracker = origin.Tracker()
    try:
        options, functions = pipeline_options(request, root), given_functions(request, root)
        outcome = run_package(root, functions, options, Recorder(display, RunSummary(root=root), tracker), write=False)
    finally:
        display.close()
    return explain_resource(wanted, outcome.resources, tracker)


@collector.paused()
def merge(sources: list[Path | str], destination: Path | str, workers: int | None = None) -> WritePlan:
    """`fnrun merge`: two-way merge source packages onto a destination package, in place."""
    from .merge.packages import merge as merge_packages

    return merge_packages(sources, destination, workers)


@collector.paused()
def merge3(ancestor: Path | str, updated: Path | str, destination: Path | str, workers: int | None = None) -> WritePlan:
    """`fnrun merge3`: apply the ancestor→updated changes to the destination, keeping its edits."""
    from .merge.packages import merge3 as merge3_packages

    return merge3_packages(ancestor, updated, destination, workers)


__all__ = [
    "CI", "Functions", "Images", "Output", "Package", "RenderRequest", "RunRequest", "SandboxSettings", "Speed", "WritePlan",
    "explain", "list_functions", "merge", "merge3", "read_package", "read_stdin", "render", "run", "sink", "source",
]


@collector.paused()
def list_functions(root: Path | str, global_scope: bool = False, workers: int | None = None) -> list[FunctionSpec]:
    """The package's declared functions in the order `fnrun run` would run them."""
    from dataclasses import replace

    from .select.functions import discover

    specs = discover(read_package(root, workers=workers).resources)
    return [replace(s, global_scope=True) for s in specs] if global_scope else specs


@collector.paused()
def list_pipeline(root: Path | str, image_prefix: str | None = None, workers: int | None = None) -> list[tuple[str, FunctionSpec]]:
    """A kpt package's Kptfile steps in the order `fnrun render` runs them, each with where it is declared."""
    from .render.runner import KPTFILE_NAMES, pipeline_steps

    return [(step.where, spec) for step, spec in pipeline_steps(read_package(root, KPTFILE_NAMES, workers=workers).resources, image_prefix)]


def doctor(root: Path | str | None = None, oci_runtime: str | None = None, mount_mode: str = "auto",
           image_prefix: str | None = None, builtin_catalog: bool = False, settings: Settings | None = None) -> list[Finding]:
    """What the engine offers and what will not hold there (`fnrun doctor`); when a package is
    given, every image a run or render of it would start (orchestrator.select.inventory), and how:
    `builtin_catalog` serves kpt's catalog (the CLI passes FNRUN_BUILTIN_CATALOG's too, as for run
    and render). `settings`: the switches as the caller's edge read them (None: a user's who set none)."""
    from .doctor import diagnose
    from .lock.inventory import inventory
    from .settings import Settings

    settings = settings if settings is not None else Settings()
    images = inventory([Path(root)], image_prefix, relative_to=Path(root), workers=settings.workers) if root is not None else {}
    from .requests import check_mode

    return diagnose(images, oci_runtime, check_mode(mount_mode), Path(root) if root is not None else None,
                    builtin_catalog, settings)
