"""Generated kpt packages for the catalog chain tests: setter comments, head/line/foot comments,
every scalar style, flow and block collections; and what kpt's catalog makes of them, worked out
by calling the catalog functions' transforms directly on the documents (no fnrun in between).

Values never hold `#` or quotes that hold one, so a comment is what follows ` #` on a line, or a
line that starts with `#`: `comments` counts them without a YAML parser (but for fnrun's note of
a document's own text, which may hold its comments in a quoted string)."""

from __future__ import annotations

import copy
import io
import json
import random
from collections import Counter
from pathlib import Path

import yaml
from ruamel.yaml import YAML

from functions.kpt_catalog import krm

PREFIX = "ghcr.io/kptdev/krm-functions-catalog"
#: Each catalog function fnrun runs in-process, with the config a Kptfile step gives it.
STEPS: dict[str, dict] = {
    "set-namespace": {"namespace": "prod"},
    "set-labels": {"tier": "backend"},
    "set-annotations": {"owner": "team-a"},
    "set-image": {"name": "nginx", "newTag": "1.25"},
    "apply-setters": {"replicas": "4", "app": "web", "color": "blue"},
    "search-replace": {"by-value": "old-value", "put-value": "new-value"},
    "starlark": {"source": (
        "for r in ctx.resource_list['items']:\n"
        "  md = r['metadata']\n"
        "  if md.get('name', '').startswith('cm-'):\n"
        "    md['annotations'] = dict(md.get('annotations') or {}, starred='yes')\n")},
    "no-op": {},
    "drop-comments": {},
}
VERSIONS = {"set-namespace": "v0.4.1", "set-labels": "v0.2.0", "apply-setters": "v0.2.1", "starlark": "v0.5.1"}


def image(name: str) -> str:
    return f"{PREFIX}/{name}:{VERSIONS.get(name, 'latest')}"


def kptfile(name: str, steps: list[str]) -> str:
    lines = ["apiVersion: kpt.dev/v1", "kind: Kptfile", "metadata:", f"  name: {name}", "pipeline:", "  mutators:"]
    for step in steps:
        lines.append(f"    - image: {image(step)}")
        config = STEPS[step]
        if config:
            lines.append("      configMap:")
            for key, value in config.items():
                if "\n" in value:
                    lines += [f"        {key}: |", *(f"          {line}" for line in value.splitlines())]
                else:
                    lines.append(f"        {key}: {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def _scalar(rng: random.Random, value: str) -> str:
    """`value` in one of the flow scalar styles (all mean the same string)."""
    return rng.choice([value, f"'{value}'", f'"{value}"']) if not value[0].isdigit() and value not in ("true", "false") else rng.choice([f"'{value}'", f'"{value}"'])


def _line(rng: random.Random, words: list[str]) -> str:
    return f"  # {rng.choice(words)}" if rng.random() < 0.4 else ""


def deployment(rng: random.Random, name: str) -> str:
    words = ["keep me", "owned by ops", "see the runbook", "kpt-set-like text"]
    seq = "  " if rng.random() < 0.5 else ""  # kpt's wide or compact sequence indent
    marker_name = " # kpt-set: ${app}" if rng.random() < 0.6 else _line(rng, words)
    marker_replicas = " # kpt-set: ${replicas}" if rng.random() < 0.8 else _line(rng, words)
    labels = "{app: " + name + "}" if rng.random() < 0.3 else None
    lines = []
    if rng.random() < 0.5:
        lines += [f"# head of {name}", ""] if rng.random() < 0.5 else [f"# head of {name}"]
    lines += ["apiVersion: apps/v1", "kind: Deployment", "metadata:", f"  name: {name}{marker_name}"]
    lines += ["  labels:", f"    enabled: {_scalar(rng, 'true')}{_line(rng, words)}", f"    app: {_scalar(rng, name)}"]
    if rng.random() < 0.5:
        lines += ["  annotations:", f"    note: {_scalar(rng, 'old-value')}{_line(rng, words)}"]
    lines += ["spec:", f"  replicas: 1{marker_replicas}"]
    if rng.random() < 0.3:
        lines.append("  # a comment on its own line")
    lines += ["  selector:", f"    matchLabels: {labels}" if labels else "    matchLabels:"]
    if not labels:
        lines.append(f"      app: {name}")
    lines += ["  template:", "    metadata:", "      labels:", f"        app: {name}", "    spec:", "      containers:"]
    lines += [f"{seq}      - name: main{_line(rng, words)}", f"{seq}        image: {_scalar(rng, 'nginx:1.0')}"]
    lines.append(f"{seq}        args: [\"--port\", '80', plain]" if rng.random() < 0.5 else f"{seq}        args:\n{seq}          - --port\n{seq}          - '80'")
    if rng.random() < 0.4:
        lines += [f"{seq}        env:", f"{seq}          - name: MODE", f"{seq}            value: {_scalar(rng, 'fast')}{_line(rng, words)}"]
    if rng.random() < 0.4:
        lines.append("# foot of " + name)
    return "\n".join(lines) + "\n"


def config_map(rng: random.Random, name: str, local: bool = False) -> str:
    words = ["keep me", "a note", "setter below"]
    lines = []
    if rng.random() < 0.4:
        lines.append(f"# head of {name}")
    lines += ["apiVersion: v1", "kind: ConfigMap", "metadata:", f"  name: {name}"]
    if local:
        lines += ["  annotations:", f"    config.kubernetes.io/local-config: {_scalar(rng, 'true')}"]
    lines += ["data:", f"  flag: {_scalar(rng, 'true')}{_line(rng, words)}", f"  plain: {_scalar(rng, 'some words')}"]
    if not local:
        lines.append(f"  color: red{' # kpt-set: ${color}' if rng.random() < 0.7 else _line(rng, words)}")
        lines.append(f"  search: {_scalar(rng, 'old-value')}{_line(rng, words)}")
    style = rng.choice(["|", "|-", ">", ">-"])
    lines += [f"  block: {style}", "    first line", "    second line"]
    if rng.random() < 0.3:
        lines.append(f"  flow: {{a: 1, b: {_scalar(rng, 'two')}}}")
    if rng.random() < 0.4:
        lines.append("  # foot of the data")
    return "\n".join(lines) + "\n"


def cluster_role(rng: random.Random, name: str) -> str:
    lines = ["apiVersion: rbac.authorization.k8s.io/v1", "kind: ClusterRole", "metadata:", f"  name: {name}{_line(rng, ['cluster-wide'])}", "rules:"]
    lines += ["  - apiGroups: [\"\"]", "    resources: ['pods', services]", "    verbs:", "      - get", f"      - {_scalar(rng, 'list')}"]
    return "\n".join(lines) + "\n"


def package(rng: random.Random, root: Path, steps: list[str], name: str = "pkg") -> Path:
    """A kpt package at `root` running `steps` (in that order), its resources drawn by `rng`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "Kptfile").write_text(kptfile(name, steps))
    (root / "deploy.yaml").write_text(deployment(rng, "app-0") + ("---\n" + config_map(rng, "cm-0") if rng.random() < 0.5 else ""))
    (root / "more.yaml").write_text(config_map(rng, "cm-1") + "---\n" + cluster_role(rng, "reader"))
    (root / "local.yaml").write_text(config_map(rng, "settings", local=True))
    return root


def comments(text: str) -> Counter[str]:
    """Every comment in `text`, as often as it occurs (see the module's note)."""
    found: Counter[str] = Counter()
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("internal.config.kubernetes.io/fnrun-original:"):
            continue  # fnrun's note of a document's text, in one quoted line (run/resourcelist.py)
        if stripped.startswith("#"):
            found[stripped] += 1
        elif " #" in line:
            found[line[line.index(" #") + 1:].strip()] += 1
    return found


def documents(root: Path) -> dict[str, list]:
    """Each resource file's documents (the Kptfile aside), read as kpt's functions read them."""
    return {path.name: [d for d in yaml.load_all(path.read_text(), Loader=krm.Loader) if d is not None]
            for path in sorted(root.glob("*.yaml"))}


def expected(root: Path, steps: list[str]) -> dict[str, list]:
    """What kpt makes of the package at `root`: apply-setters reads the markers wherever it runs
    (kpt hands comments on), and no other step touches a marked field, so it may as well run first
    over the files' own text; then every other step over the data, in order."""
    files = documents(root)
    if "apply-setters" in steps:
        from functions.kpt_catalog.apply_setters import apply_setters

        loader = YAML(typ="rt")
        for name in files:
            nodes = [d for d in loader.load_all(io.StringIO((root / name).read_text())) if d is not None]
            apply_setters(nodes, _config("apply-setters"))
            files[name] = [krm.plain(node) for node in nodes]
    flat = [(name, i) for name in files for i in range(len(files[name]))]
    items = [copy.deepcopy(files[name][i]) for name, i in flat]
    for step in steps:
        if step == "apply-setters":
            continue
        items = _transform(step, items)
    out: dict[str, list] = {name: [] for name in files}
    for (name, _), item in zip(flat, items):
        out[name].append(item)
    return out


def _config(step: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "function-input"}, "data": dict(STEPS[step])}


def _transform(step: str, items: list[dict]) -> list[dict]:
    if step == "starlark":  # its import starts the Go runtime, whose threads would stay in this process
        from testing.in_process import in_a_fork

        return in_a_fork(_transform_here, step, items)
    return _transform_here(step, items)


def _transform_here(step: str, items: list[dict]) -> list[dict]:
    import importlib

    module = importlib.import_module(f"functions.kpt_catalog.{step.replace('-', '_')}")
    function = {"starlark": "run_script", "drop-comments": "drop_comments"}.get(step, step.replace("-", "_"))
    results = getattr(module, function)(items, _config(step))
    assert not any(r.get("severity") == "error" for r in results or []), results
    return items
