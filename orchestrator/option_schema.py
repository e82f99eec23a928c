"""The options of `fnrun run`, `fnrun render` and `fnrun serve`, declared once: spellings, type,
default, environment variable and help. The CLI builds its typer declarations from here
(orchestrator.cli.options), the request groups and the runtimes' `Sandbox` take their defaults from
here, and the launcher (orchestrator.launch), which reads the command line before the CLI framework
is imported, reads values by it: it decides its early start, and runs `run`/`render --server`
without the CLI framework (orchestrator.requests.command_line builds the request for both).

An option the launcher does not find here turns the early start off (and the fast path), and a test
walks every option the CLI declares and checks that it is here, with its default: a new flag cannot
slip past the launcher. Standard library only: the launcher imports this before anything heavy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import settings
from .settings import switch

FUNCTIONS, SELECTION, OUTPUT, CI, SANDBOX, ENGINE = "Functions", "Selection", "Output", "CI", "Sandbox", "Engine and speed"
PULL_POLICIES = ("always", "ifNotPresent", "never")


@dataclass(frozen=True)
class Option:
    """One option (`name` is the CLI's parameter and the launcher's key)."""

    name: str
    spellings: tuple[str, ...]  # the first is the one messages use
    kind: type = bool  # bool: a switch, no value; else the value's type (str, int, float, Path)
    default: Any = None
    help: str = ""  # `{default}` in it is the default
    panel: str | None = None
    metavar: str | None = None
    many: bool = False  # repeatable: a list of values
    envvar: str | None = None  # the CLI reads a value option from it when the option is not given
    # A switch's environment variable, which orchestrator.settings reads (not the CLI, not typer):
    # the option counts as given when the variable reads `given_when` (FNRUN_CACHE=0 is --no-cache).
    switch_env: str | None = None
    given_when: bool = False
    minimum: float | None = None
    hidden: bool = False
    show_default: bool = False
    # Whether its value goes into the container fnrun creates for a function (the create
    # request of orchestrator.runtimes.container.settings): the launcher must read it, or leave
    # the start to the ordinary path.
    container: bool = False
    # Whether the launcher may start the container early when the option is given: it knows what
    # the option does to that container (nothing, or what it reads from it).
    early: bool = True

    @property
    def takes_value(self) -> bool:
        return self.kind is not bool

    @property
    def help_text(self) -> str:
        return self.help.format(default=self.default)

    def convert(self, text: str) -> Any:
        """One value as the CLI converts it; ValueError where it would refuse it."""
        value = self.kind(text)
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{self.spellings[0]}: below {self.minimum}")
        return value

    def given_by_environment(self, environ: Mapping[str, str]) -> bool:
        """Whether a switch's environment variable asks what the switch asks."""
        return self.switch_env is not None and switch(environ.get(self.switch_env), not self.given_when) == self.given_when


def _value(name: str, *spellings: str, kind: type = str, **given: Any) -> Option:
    return Option(name, spellings, kind, **given)


def _switch(name: str, *spellings: str, **given: Any) -> Option:
    return Option(name, spellings, bool, False, **given)


_SELECTS = (("api_version", "with this apiVersion"), ("kind", "of this kind"), ("name", "with this name"), ("namespace", "in this namespace"),
            ("labels", "with this label"), ("annotations", "with this annotation"))


def _selections() -> tuple[Option, ...]:
    found = []
    for which, verb in (("match", "Send only resources"), ("exclude", "Hold back resources")):
        for what, tail in _SELECTS:
            many = what in ("labels", "annotations")
            words = f"KEY=VALUE: {verb[0].lower()}{verb[1:]} {tail}." if many else f"{verb} {tail}."
            words = words.replace("send only resources", "only resources")
            found.append(_value(f"{which}_{what}", f"--{which}-{what.replace('_', '-')}", many=many, help=words, panel=SELECTION))
    return tuple(found)


RUN_OPTIONS: tuple[Option, ...] = (
    # what runs: only --image is foreseen; the others change the function or its input
    _value("image", "--image", "-i", metavar="IMAGE", container=True, panel=FUNCTIONS,
           help="Run this image over the whole package instead of the declared functions."),
    _value("tag", "--tag", metavar="TAG", container=True, early=False, panel=FUNCTIONS,
           help="The --image's tag, or a semver constraint (~0.4) met by the best local tag."),
    _value("exec_path", "--exec", metavar="COMMAND", early=False, panel=FUNCTIONS,
           help='Run this executable instead ("./fn arg1 arg2", a bare name from PATH; needs --allow-exec).'),
    _value("fn_config", "--fn-config", kind=Path, metavar="FILE", early=False, panel=FUNCTIONS,
           help="File holding the functionConfig for --image/--exec."),
    _value("image_prefix", "--image-prefix", envvar="KPT_IMAGE_PREFIX", metavar="PREFIX", container=True, early=False, panel=FUNCTIONS,
           help="Registry for short image names (default $KPT_IMAGE_PREFIX, else kpt's catalog)."),
    _switch("save", "--save", "-s", early=False, panel=FUNCTIONS, help="Also add the --image/--exec function to the Kptfile pipeline (kpt fn eval --save)."),
    _value("function_type", "--type", "-t", default="mutator", metavar="TYPE", early=False, panel=FUNCTIONS,
           help="With --save: {default} (default) or validator."),
    _switch("allow_exec", "--allow-exec", "--enable-exec", early=False, panel=SANDBOX, help="Allow exec functions (they run unsandboxed, on this machine)."),
    # what the function sees, and what becomes of its output: not the container's business
    _switch("global_scope", "--global-scope", panel=SELECTION, help="Declared functions see the whole package, not just their directory."),
    *_selections(),
    _value("output", "--output", "-o", metavar="stdout|unwrap|DIR", panel=OUTPUT,
           help="stdout (a ResourceList; also -), unwrap (plain YAML) or a new DIR; the package is left alone."),
    _switch("exclude_local_config", "--exclude-local-config", panel=OUTPUT,
            help="With -o stdout/unwrap: leave out Kptfiles and local-config resources (for a cluster)."),
    _switch("origin_annotations", "--origin-annotations", panel=OUTPUT, help="With -o stdout: annotate where each resource came from."),
    _switch("transformer_annotations", "--transformer-annotations", panel=OUTPUT, help="With -o stdout: list the functions that changed each resource."),
    _value("file_names", "--file-names", metavar="kind_name|name_kind", early=False, panel=OUTPUT,
           help="How a new resource without a path is named: kpt's deployment_web.yaml (render's default) or fnrun's web_deployment.yaml (run's)."),
    _switch("fn_config_as_item", "--fn-config-as-item", early=False, hidden=True,
            help="The default: a --fn-config file inside the package is one of the items too, as in kpt fn eval."),
    _switch("fn_config_only", "--fn-config-only", early=False, panel=FUNCTIONS, help="Keep a --fn-config file inside the package out of the items."),
    _switch("include_meta_resources", "--include-meta-resources", "-m", early=False, hidden=True,
            help="kpt's old flag: does nothing (with a note), the Kptfile is an item already."),
    _switch("diff", "--diff", panel=OUTPUT, help="Write, then print what changed as a diff."),
    _value("results_dir", "--results-dir", kind=Path, metavar="DIR", panel=OUTPUT, help="Write all results to DIR/results.yaml."),
    _switch("quiet", "--quiet", "-q", panel=OUTPUT, help="Only print failures."),
    _switch("verbose", "--verbose", "-v", panel=OUTPUT, help="Also print each function's stderr and every file written."),
    _switch("check", "--check", panel=CI, help="Write nothing; print the diff; exit 3 if anything would change."),
    _value("results_format", "--results-format", metavar="FORMAT", panel=CI, help="text | json | yaml: all results as one document on stdout."),
    _value("shard", "--shard", metavar="I/N", early=False, panel=CI, help="I/N: only CI job I's share of the packages in DIR."),
    # the sandbox: the launcher builds the container from these
    _switch("network", "--network", "--allow-network", container=True, panel=SANDBOX,
            help="Give the network to functions that declare `network: true` (render: to every function)."),
    _switch("as_current_user", "--as-current-user", container=True, panel=SANDBOX, help="Run containers as your uid/gid, not nobody (65534)."),
    _value("mount", "--mount", many=True, metavar="SPEC", container=True, early=False, panel=SANDBOX,
           help="type=bind,src=DIR,dst=/PATH[,rw=true] (DIR inside the package); repeatable."),
    _value("env", "--env", "-e", many=True, metavar="KEY[=VALUE]", container=True, panel=SANDBOX, help="KEY=VALUE, or KEY to pass yours; repeatable."),
    _value("timeout", "--timeout", kind=float, default=300.0, panel=SANDBOX,  # kept by fnrun's wait, not by the container
           help="Seconds before a function is killed ({default:g})."),
    _value("max_output", "--max-output", default="256M", panel=SANDBOX,  # counted by fnrun's reader
           help="Most a function may print before it is killed ({default})."),
    _value("memory", "--memory", default="512m", container=True, panel=SANDBOX, help="Memory limit per container ({default})."),
    _value("pids_limit", "--pids-limit", kind=int, default=256, container=True, panel=SANDBOX, help="Process limit per container ({default})."),
    _value("cpus", "--cpus", kind=float, default=1.0, container=True, panel=SANDBOX, help="CPU limit per container ({default})."),
    _value("tmpfs_size", "--tmpfs-size", default="64m", container=True, panel=SANDBOX, help="Size of the writable /tmp ({default})."),
    _switch("writable_root", "--writable-root", container=True, panel=SANDBOX, help="Do not make the root filesystem read-only."),
    _switch("keep_capabilities", "--keep-capabilities", container=True, panel=SANDBOX, help="Do not drop all Linux capabilities."),
    # the engine and speed
    _value("image_pull_policy", "--image-pull-policy", default=PULL_POLICIES[1], panel=ENGINE,  # `always` is read: no early start
           help=f"{' | '.join(PULL_POLICIES)}: whether an image is pulled ({{default}})."),
    _value("oci_runtime", "--runtime", envvar="FNRUN_RUNTIME", container=True, panel=ENGINE, help="OCI runtime for function containers (runsc, crun)."),
    _value("mount_mode", "--mounts", default="auto", envvar="FNRUN_MOUNTS", panel=ENGINE,  # an --image run without --mount has none
           help="bind | upload | auto: how /local and --mount reach the engine ({default})."),
    _value("jobs", "--jobs", "-j", kind=int, panel=ENGINE, help="Work at once (default min(4, CPUs); FNRUN_JOBS)."),
    _switch("no_cache", "--no-cache", switch_env=settings.CACHE, panel=ENGINE, help="Run functions even when a result is cached (FNRUN_CACHE=0)."),
    _switch("no_builtin", "--no-builtin", switch_env=settings.BUILTIN, panel=ENGINE,
            help="Always start fnrun's catalog images as containers (FNRUN_BUILTIN=0)."),
    _switch("no_warm", "--no-warm", switch_env=settings.WARM, panel=ENGINE,
            help="Start a container per call even for an image called more than once (FNRUN_WARM=0)."),
    _switch("builtin_catalog", "--builtin-catalog", switch_env=settings.BUILTIN_CATALOG, given_when=True, early=False, panel=ENGINE,
            help="Run kpt's catalog functions in-process (FNRUN_BUILTIN_CATALOG=1)."),
    _value("server", "--server", envvar="FNRUN_SERVER", metavar="ADDR", early=False, panel=ENGINE,  # the calls go to a function runner: nothing starts here
           help="Container calls go to fnrun serve (FNRUN_SERVER)."),
    _switch("no_lock", "--no-lock", panel=ENGINE, help="Run images by their tags even where a fnrun.lock pins them."),
)

BY_NAME: dict[str, Option] = {option.name: option for option in RUN_OPTIONS}
BY_SPELLING: dict[str, Option] = {spelling: option for option in RUN_OPTIONS for spelling in option.spellings}

_RENDER_OWN = (
    # render's own: what becomes of the output, not the container's business
    _switch("no_status", "--no-status", panel=OUTPUT, help="Do not record status in the root Kptfile."),
    _switch("strict_results", "--strict-results", panel=CI, help="Fail a step whose function reports an error result though it exits 0 (kpt goes on)."),
)
# What render's early start reads otherwise than run's (render's first container comes from the
# root Kptfile): --image-prefix completes its short names, as the launcher does; exec steps run on
# this machine, never in the early container; a Kptfile step declares no network of its own, so
# --network does not reach its container (orchestrator.run.invocations). --mounts is read too
# (`upload` copies the package's directory in: no early start), and --no-warm (an image the
# pipeline calls twice may then start early too).
_RENDER_CHANGES: dict[str, dict[str, Any]] = {"image_prefix": {"early": True}, "allow_exec": {"early": True}, "network": {"container": False}}
_RENDER_ORDER = (
    "image_prefix", "allow_exec", "output", "exclude_local_config", "no_status", "file_names", "strict_results", "diff", "results_dir", "quiet",
    "verbose", "check", "results_format", "shard", "network", "as_current_user", "env", "timeout", "max_output", "memory", "pids_limit", "cpus",
    "tmpfs_size", "writable_root", "keep_capabilities", "image_pull_policy", "oci_runtime", "mount_mode", "jobs", "no_cache", "no_builtin",
    "no_warm", "builtin_catalog", "server", "no_lock",
)
_OWN = {option.name: option for option in _RENDER_OWN}
RENDER_OPTIONS: tuple[Option, ...] = tuple(replace(_OWN.get(name) or BY_NAME[name], **_RENDER_CHANGES.get(name, {})) for name in _RENDER_ORDER)
RENDER_BY_NAME: dict[str, Option] = {option.name: option for option in RENDER_OPTIONS}
RENDER_BY_SPELLING: dict[str, Option] = {spelling: option for option in RENDER_OPTIONS for spelling in option.spellings}

#: `fnrun serve`: its own, then run's that a server takes (every call runs as run runs a function).
SERVE_OPTIONS: tuple[Option, ...] = (
    _value("address", "--address", default="127.0.0.1:9445", show_default=True, help="HOST:PORT or unix:PATH to listen on."),
    _switch("insecure", "--insecure", help="Plaintext on an address other machines can reach."),
    _value("tls_cert", "--tls-cert", kind=Path, help="The server's certificate (PEM)."),
    _value("tls_key", "--tls-key", kind=Path, help="The server's private key (PEM)."),
    _value("client_ca", "--client-ca", kind=Path, help="Mutual TLS: accept only clients whose certificate this CA signed."),
    _value("max_request", "--max-request", default="6M", show_default=True, help="Largest request accepted (Porch's default, 6M)."),
    _value("parallel", "--parallel", kind=int, default=4, minimum=1, show_default=True, help="Containers of one image running at once."),
    _value("queue", "--queue", kind=int, default=64, minimum=0, show_default=True,
           help="Calls of one image that may wait; more are RESOURCE_EXHAUSTED."),
    _value("grace", "--grace", kind=float, default=10.0, minimum=0, show_default=True, help="Seconds a stop lets calls under way finish."),
    _value("metrics", "--metrics", metavar="HOST:PORT", help="Serve Prometheus counters at http://HOST:PORT/metrics."),
    _value("idle_ttl", "--idle-ttl", kind=float, default=1800.0, minimum=1, show_default=True,
           help="Seconds a warm container waits for its next call (Porch's 30 minutes)."),
    *(BY_NAME[name] for name in ("builtin_catalog", "image_pull_policy", "timeout", "memory", "oci_runtime", "mount_mode", "no_cache", "no_warm")),
)
#: `fnrun explain`: run's options that shape how it renders in memory.
EXPLAIN_OPTIONS: tuple[Option, ...] = tuple(BY_NAME[name] for name in (
    "allow_exec", "global_scope", "network", "env", "image_pull_policy", "timeout", "quiet"))

_EVERY = {option.name: option for options in (RUN_OPTIONS, RENDER_OPTIONS, SERVE_OPTIONS) for option in options}


def option(name: str) -> Option:
    """The option `name` as run, render or serve declares it."""
    return _EVERY[name]


def spellings(name: str) -> tuple[str, ...]:
    """How the CLI spells the option `name`."""
    return _EVERY[name].spellings


def default(name: str) -> Any:
    """The option's default: the one definition the CLI, the request groups and the runtimes use."""
    return _EVERY[name].default


@dataclass(frozen=True)
class CommandLine:
    """A command's arguments read by the schema."""

    given: dict[str, list[str]]  # option name -> its values in order (a switch: "" each time)
    positionals: list[str]  # before `--`
    rest: list[str] | None  # after `--`; None without `--`


def read(args: Sequence[str], by_spelling: Mapping[str, Option]) -> CommandLine | None:
    """`args` (after the command word) as the CLI's parser reads them, or None for anything the
    schema does not know for sure: an unknown flag, a value missing or given to a switch, short
    options run together (`-qv`, `-ifoo`)."""
    given: dict[str, list[str]] = {}
    positionals: list[str] = []
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if arg == "--":
            return CommandLine(given, positionals, list(args[position:]))
        if not arg.startswith("-") or arg == "-":
            positionals.append(arg)
            continue
        flag, equals, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        option = by_spelling.get(flag)
        if option is None or (equals and not option.takes_value):
            return None
        if option.takes_value and not equals:
            if position >= len(args) or args[position] == "--":  # the CLI would take `--` for the end of options first
                return None
            value, position = args[position], position + 1
        given.setdefault(option.name, []).append(value if option.takes_value else "")
    return CommandLine(given, positionals, None)


def values(line: CommandLine, options: Sequence[Option], environ: Mapping[str, str]) -> dict[str, Any]:
    """Every option's value as the CLI hands it to the command: converted, the last of a repeated
    single value, the CLI's environment variable where not given, else the default; ValueError
    where the CLI would refuse a value. A switch's library variable is not read (the library does)."""
    found: dict[str, Any] = {}
    for option in options:
        given = line.given.get(option.name)
        if not option.takes_value:
            found[option.name] = True if given else option.default
        elif option.many:
            found[option.name] = [option.convert(text) for text in given] if given else option.default
        elif given:
            found[option.name] = option.convert(given[-1])
        elif option.envvar and environ.get(option.envvar):
            found[option.name] = option.convert(environ[option.envvar])
        else:
            found[option.name] = option.default
    return found
