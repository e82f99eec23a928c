"""Combinations of flags that cannot work, refused before anything runs (exit 2)."""

from __future__ import annotations

from ..errors import InputError
from .groups import Request


def validate(request: Request, save: bool = False) -> None:
    """The checks both commands share; `save` is run's --save (render has none)."""
    from ..report.formats import FORMATS

    output, ci = request.output, request.ci
    stdin = request.directory == "-"
    shows_diff = ci.check or output.diff
    if output.exclude_local_config and not (stdin or output.to_stdout):
        raise InputError("--exclude-local-config goes with -o stdout or -o unwrap (or a package on stdin): files always keep local-config resources")
    if output.output_dir is not None and stdin:
        raise InputError("-o DIR writes a package read from a directory; with a package on stdin, use fnrun sink DIR")
    if save and (output.output_dir is not None or output.to_stdout):
        raise InputError("--save edits the package's Kptfile; it does not go with -o")
    if output.quiet and output.verbose:
        raise InputError("--quiet and --verbose contradict each other; choose one")
    if ci.results_format is not None and ci.results_format not in FORMATS:
        raise InputError(f"--results-format must be one of {', '.join(FORMATS)}, not {ci.results_format!r}")
    if ci.shard and stdin:
        raise InputError("--shard shares out the packages of a directory; it does not go with a package on stdin")
    if shows_diff and (stdin or output.to_stdout or output.output_dir is not None):
        raise InputError("--check and --diff compare the package's files; they do not go with -o or a package on stdin")
    if ci.results_format is not None and (stdin or output.to_stdout):
        raise InputError("--results-format and the rendered package both want stdout; use --results-dir for the results")
    if ci.results_format == "text" and shows_diff:
        raise InputError("--results-format text and the diff of --check/--diff would share stdout; use json or yaml (they carry the diff) or --results-dir")
    if (output.origin_annotations or output.transformer_annotations) and not (stdin or output.to_stdout):
        raise InputError("--origin-annotations and --transformer-annotations go with --output - (or `fnrun explain`); fnrun does not write them into your files")
