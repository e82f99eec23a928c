"""A label function written with kpt's TypeScript SDK (tests/functions_ts/: npm `kpt-functions`,
js-yaml inside, a YAML 1.2 library) run as an exec function through the CLI. Its library reads
what Kubernetes reads in YAML 1.1 terms differently (`0400` comes back as `256`, key `404:` as
`'404'`, a block scalar holding a tab as a double-quoted line); none of that is a change, so only
the label's lines may differ."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from testing.io_helpers import fnrun

FUNCTION = Path(__file__).resolve().parents[1] / "functions_ts"
LABEL = ("  labels:\n", "    tier: web\n")


def _function() -> str:
    """The exec command; a developer machine without node skips, CI (set up by .ci/setup) fails."""
    node = shutil.which("node")
    installed = (FUNCTION / "node_modules" / "kpt-functions").is_dir()
    if node and installed:
        return f"node {FUNCTION / 'label.js'}"
    why = "node is not installed" if not node else "tests/functions_ts has no node_modules (run `npm ci` there)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why}; .ci/setup provides it")
    pytest.skip(why)


def _label(package: Path) -> None:
    result = fnrun("run", str(package), "--exec", _function(), "--enable-exec", "--", "tier=web")
    assert result.returncode == 0, result.stderr.decode()


def _labelled(text: str) -> str:
    """`text` with the label's two lines at the end of every resource's `metadata:` block, where
    fnrun writes the key the function appended."""
    out, in_metadata = [], False
    for line in text.splitlines(keepends=True):
        if in_metadata and not line.startswith((" ", "#")):
            out.extend(LABEL)
            in_metadata = False
        in_metadata = in_metadata or line == "metadata:\n"
        out.append(line)
    return "".join(out + (list(LABEL) if in_metadata else []))


def _as_the_function_writes_it(package: Path) -> str:
    """What the SDK itself returns for the package (fnrun's own ResourceList, through node)."""
    source = fnrun("source", str(package))
    assert source.returncode == 0, source.stderr.decode()
    command = _function().split()
    result = subprocess.run([*command, "-d", "tier=web"], input=source.stdout, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


def test_an_octal_mode_the_function_reads_as_256_keeps_its_text(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nginx\n"
        "  volumes:\n  - name: s\n    secret:\n      secretName: s\n      defaultMode: 0400\n"
    )
    (tmp_path / "pod.yaml").write_text(text)
    assert "defaultMode: 256\n" in _as_the_function_writes_it(tmp_path)
    _label(tmp_path)
    assert (tmp_path / "pod.yaml").read_text() == _labelled(text)


def test_int_keys_and_literal_blocks_the_function_rewrites_keep_their_bytes(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pages\ndata:\n"
        "  404: |\n    <h1>not found</h1>\n    \t<p>gone</p>\n"
        "  500: |-\n    server\terror\n"
        "  index.html: |\n    <html>\n    </html>\n"
    )
    (tmp_path / "cm.yaml").write_text(text)
    returned = _as_the_function_writes_it(tmp_path)
    assert "'404': \"<h1>not found</h1>\\n\\t<p>gone</p>\\n\"" in returned, returned
    _label(tmp_path)
    assert (tmp_path / "cm.yaml").read_text() == _labelled(text)


REALISTIC = {
    "deploy/app.yaml": (
        "# The web tier.\n"
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata:\n"
        "  name: web  # the front end\n"
        "  annotations:\n"
        "    note: 'single'   # quoted\n"
        "spec:\n"
        "  replicas: 0x3\n"
        "  template:\n"
        "    spec:\n"
        "      containers:\n"
        "        - name: nginx\n"
        "          image: \"nginx:1.25\"\n"
        "          args: [\"-g\", 'daemon off;']\n"
        "          ports:\n"
        "            - containerPort: 080\n"
        "      volumes:\n"
        "        - name: conf\n"
        "          configMap:\n"
        "            name: web-conf\n"
        "            defaultMode: 0644  # rw-r--r--\n"
        "---\n"
        "apiVersion: v1\n"
        "kind: Service\n"
        "metadata:\n"
        "  name: web\n"
        "spec:\n"
        "  ports:\n"
        "  - port: 80\n"
        "    targetPort: 8_0\n"
    ),
    "deploy/conf.yaml": (
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        "  name: web-conf\n"
        "data:\n"
        "  # error pages, by status\n"
        "  404: |\n"
        "    <h1>gone</h1>\n"
        "  502: >\n"
        "    bad\n"
        "    gateway\n"
        "  nginx.conf: |\n"
        "    server {\n"
        "    \tlisten 80;\n"
        "    }\n"
        "  ratio: 1e3\n"
        "  time: 1:30\n"
    ),
}


def test_a_realistic_package_changes_only_the_label_lines(tmp_path: Path) -> None:
    for name, text in REALISTIC.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    _label(tmp_path)
    assert (tmp_path / "deploy/app.yaml").read_text() == _labelled(REALISTIC["deploy/app.yaml"])
    assert (tmp_path / "deploy/conf.yaml").read_text() == _labelled(REALISTIC["deploy/conf.yaml"])
