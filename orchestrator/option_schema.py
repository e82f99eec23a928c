"""The options of `fnrun run` and `fnrun render`, declared once: the CLI takes their spellings from
here, and the launcher (orchestrator.launch), which reads the command line before the CLI framework
is imported, decides from here whether it may start the first function's container early.

An option the launcher does not find here turns the early start off, and a test walks every
option the CLI declares for either command and checks that it is here: a new flag cannot slip past
the launcher. Standard library only: the launcher imports this before anything heavy."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Option:
    """One option of `fnrun run` (`name` is the CLI's parameter)."""

    name: str
    spellings: tuple[str, ...]  # the first is the one the launcher files its values under
    takes_value: bool
    # Whether its value goes into the container fnrun creates for a function (the create
    # request of orchestrator.runtimes.container.settings): the launcher must read it, or leave
    # the start to the ordinary path.
    container: bool = False
    # Whether the launcher may start the container early when the option is given: it knows what
    # the option does to that container (nothing, or what it reads from it).
    early: bool = True


def _value(name: str, *spellings: str, container: bool = False, early: bool = True) -> Option:
    return Option(name, spellings, True, container, early)


def _switch(name: str, *spellings: str, container: bool = False, early: bool = True) -> Option:
    return Option(name, spellings, False, container, early)


_SELECTORS = ("api_version", "kind", "name", "namespace", "labels", "annotations")

RUN_OPTIONS: tuple[Option, ...] = (
    # what runs: only --image is foreseen; the others change the function or its input
    _value("image", "--image", "-i", container=True),
    _value("tag", "--tag", container=True, early=False),
    _value("exec_path", "--exec", early=False),
    _value("fn_config", "--fn-config", early=False),
    _value("image_prefix", "--image-prefix", container=True, early=False),
    _switch("save", "--save", "-s", early=False),
    _value("function_type", "--type", "-t", early=False),
    _switch("allow_exec", "--allow-exec", "--enable-exec", early=False),
    _switch("fn_config_as_item", "--fn-config-as-item", early=False),
    _switch("fn_config_only", "--fn-config-only", early=False),
    _switch("include_meta_resources", "--include-meta-resources", "-m", early=False),
    # what the function sees, and what becomes of its output: not the container's business
    _switch("global_scope", "--global-scope"),
    *(_value(f"{which}_{what}", f"--{which}-{what.replace('_', '-')}") for which in ("match", "exclude") for what in _SELECTORS),
    _value("output", "--output", "-o"),
    _switch("exclude_local_config", "--exclude-local-config"),
    _switch("origin_annotations", "--origin-annotations"),
    _switch("transformer_annotations", "--transformer-annotations"),
    _value("file_names", "--file-names", early=False),
    _switch("diff", "--diff"),
    _value("results_dir", "--results-dir"),
    _switch("quiet", "--quiet", "-q"),
    _switch("verbose", "--verbose", "-v"),
    _switch("check", "--check"),
    _value("results_format", "--results-format"),
    _value("shard", "--shard", early=False),
    # the sandbox: the launcher builds the container from these
    _switch("network", "--network", "--allow-network", container=True),
    _switch("as_current_user", "--as-current-user", container=True),
    _value("mount", "--mount", container=True, early=False),
    _value("env", "--env", "-e", container=True),
    _value("timeout", "--timeout"),  # kept by fnrun's wait, not by the container
    _value("max_output", "--max-output"),  # counted by fnrun's reader
    _value("memory", "--memory", container=True),
    _value("pids_limit", "--pids-limit", container=True),
    _value("cpus", "--cpus", container=True),
    _value("tmpfs_size", "--tmpfs-size", container=True),
    _switch("writable_root", "--writable-root", container=True),
    _switch("keep_capabilities", "--keep-capabilities", container=True),
    # the engine and speed
    _value("image_pull_policy", "--image-pull-policy"),  # whether the image is pulled; `always` is read: no early start
    _value("oci_runtime", "--runtime", container=True),
    _value("mount_mode", "--mounts"),  # how mounts travel; an --image run without --mount has none
    _value("jobs", "--jobs", "-j"),
    _switch("no_cache", "--no-cache"),
    _switch("no_builtin", "--no-builtin"),
    _switch("no_warm", "--no-warm"),
    _switch("builtin_catalog", "--builtin-catalog", early=False),
    _switch("no_lock", "--no-lock"),
    _value("server", "--server", early=False),  # the calls go to a function runner: nothing starts here
)

BY_NAME: dict[str, Option] = {option.name: option for option in RUN_OPTIONS}
BY_SPELLING: dict[str, Option] = {spelling: option for option in RUN_OPTIONS for spelling in option.spellings}



def _as_render(name: str, **changed: Any) -> Option:
    """One of run's options as render takes it: the same spellings; `changed` where render's early
    start reads it otherwise (render's first container comes from the root Kptfile)."""
    return replace(BY_NAME[name], **changed)


RENDER_OPTIONS: tuple[Option, ...] = (
    # what runs is the Kptfiles': --image-prefix completes their short names, as the launcher does
    _as_render("image_prefix", early=True),
    _as_render("allow_exec", early=True),  # exec steps run on this machine, never in the early container
    _as_render("builtin_catalog"),
    _as_render("server"),
    # a Kptfile step declares no network of its own, so the flag does not reach its container
    # (orchestrator.run.invocations): the launcher's request leaves it out as the render's does
    _as_render("network", container=False),
    *(_as_render(name) for name in (
        "output", "exclude_local_config", "file_names", "diff", "results_dir", "quiet", "verbose", "check", "results_format", "shard",
        "as_current_user", "env", "timeout", "max_output", "memory", "pids_limit", "cpus", "tmpfs_size", "writable_root",
        "keep_capabilities", "image_pull_policy", "oci_runtime", "no_cache", "no_builtin", "no_lock", "jobs",
        "mount_mode",  # read: `upload` copies the package's directory (/local) in, so the early start is left out
        "no_warm",  # read: without warm containers, an image the pipeline calls twice may start early too
    )),
    # render's own: what becomes of the output, not the container's business
    _switch("no_status", "--no-status"),
    _switch("strict_results", "--strict-results"),
)

RENDER_BY_NAME: dict[str, Option] = {option.name: option for option in RENDER_OPTIONS}
RENDER_BY_SPELLING: dict[str, Option] = {spelling: option for option in RENDER_OPTIONS for spelling in option.spellings}


def spellings(name: str) -> tuple[str, ...]:
    """How the CLI spells the option `name` (its typer declaration takes them from here)."""
    return (BY_NAME.get(name) or RENDER_BY_NAME[name]).spellings
