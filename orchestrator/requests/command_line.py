"""A command line's request, from its options' values by name (orchestrator.option_schema's
names), however they were read: typer's command functions (orchestrator.cli.runs) and the launcher's
path without typer (orchestrator.launch, `--server`) call the same builders with the same values."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from .groups import CI, Functions, Images, Output, RenderRequest, RunRequest, SandboxSettings, Selection, Speed

Values = Mapping[str, Any]


def run_request(values: Values, directory: str, arguments: Sequence[str] | None, args: Sequence[str] | None) -> RunRequest:
    """`fnrun run`'s request; `args` is the whole command line (after `fnrun`), for the rerun hint."""
    if values["include_meta_resources"]:  # kpt refuses it; the catalog's own example scripts still pass it
        print("fnrun: note: --include-meta-resources does nothing: the Kptfile and kustomization files are items already", file=sys.stderr)
    if values["fn_config_as_item"] and values["fn_config_only"]:
        raise InputError("--fn-config-as-item and --fn-config-only contradict each other; choose one (--fn-config-as-item is the default)")
    return RunRequest(
        directory=directory,
        functions=Functions(
            image=values["image"], tag=values["tag"], exec_path=values["exec_path"], fn_config=values["fn_config"],
            arguments=tuple(arguments or ()), fn_config_as_item=not values["fn_config_only"], global_scope=values["global_scope"],
            match=_selection(values, "match"), exclude=_selection(values, "exclude"), save=values["save"], function_type=values["function_type"],
        ),
        **_shared(values, args, mounts=values["mount"]),
    )


def render_request(values: Values, directory: str, args: Sequence[str] | None) -> RenderRequest:
    """`fnrun render`'s request."""
    return RenderRequest(directory=directory, record_status=not values["no_status"], strict_results=values["strict_results"], **_shared(values, args))


def _shared(values: Values, args: Sequence[str] | None, mounts: Sequence[str] | None = None) -> dict[str, Any]:
    """The groups run and render both take."""
    output = values["output"]
    to_stdout = output in ("stdout", "-", "unwrap")  # -o as kpt spells it
    return {
        "images": Images(prefix=values["image_prefix"], lock=not values["no_lock"]),
        "sandbox": sandbox_settings(values, mounts),
        "output": Output(
            to_stdout=to_stdout, unwrap=output == "unwrap", output_dir=Path(output) if output is not None and not to_stdout else None,
            exclude_local_config=values["exclude_local_config"], origin_annotations=values.get("origin_annotations", False),
            transformer_annotations=values.get("transformer_annotations", False), file_names=values["file_names"], diff=values["diff"],
            results_dir=values["results_dir"], quiet=values["quiet"], verbose=values["verbose"],
        ),
        "ci": CI(check=values["check"], rerun=_rerun(args), results_format=values["results_format"], shard=values["shard"]),
        "speed": Speed(
            cache=not values["no_cache"], builtin=not values["no_builtin"], builtin_catalog=values["builtin_catalog"], warm=not values["no_warm"],
            jobs=values["jobs"], server=values["server"] or None,
        ),
    }


def sandbox_settings(values: Values, mounts: Sequence[str] | None = None) -> SandboxSettings:
    """The sandbox the options ask for (the launcher's early container is made from it too)."""
    return SandboxSettings(
        enable_exec=values["allow_exec"], network=values["network"], as_current_user=values["as_current_user"], mounts=tuple(mounts or ()),
        env=tuple(values["env"] or ()), timeout=values["timeout"], max_output=values["max_output"], memory=values["memory"],
        pids_limit=values["pids_limit"], cpus=values["cpus"], tmpfs_size=values["tmpfs_size"], read_only_root=not values["writable_root"],
        drop_capabilities=not values["keep_capabilities"], image_pull_policy=values["image_pull_policy"], oci_runtime=values["oci_runtime"],
        mount_mode=values["mount_mode"],
    )


def _rerun(args: Sequence[str] | None) -> str | None:
    """The user's command line without --check: what writes the changes a check found, with the
    same flags (another --shard, --image-prefix or --builtin-catalog could render otherwise)."""
    import shlex

    if not args:
        return None
    return shlex.join(["fnrun", *(arg for arg in args if arg != "--check")])


def _selection(values: Values, which: str) -> Selection:
    """The --match-*/--exclude-* flags as (selector field, value) pairs; all of them must hold."""
    single = (("apiVersion", "api_version"), ("kind", "kind"), ("name", "name"), ("namespace", "namespace"))
    pairs = tuple((field, values[f"{which}_{name}"]) for field, name in single if values[f"{which}_{name}"] is not None)
    return pairs + tuple((field, v) for field in ("labels", "annotations") for v in values[f"{which}_{field}"] or ())
