"""`fnrun images build` builds on the engine runs use: the one KRM_FN_RUNTIME names, as kpt's
users set it, not whatever socket the SDK would find by default."""

from __future__ import annotations

import os
import subprocess
import sys


def test_images_build_obeys_krm_fn_runtime() -> None:
    env = {key: value for key, value in os.environ.items() if key != "DOCKER_HOST"}
    done = subprocess.run([sys.executable, "-m", "orchestrator", "images", "build", "--only", "set-labels"],
                          env={**env, "KRM_FN_RUNTIME": "nerdctl"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 4, done.stderr
    assert done.stderr.splitlines() == [
        "fnrun: error: KRM_FN_RUNTIME=nerdctl: fnrun drives engines through the Docker Engine API, which nerdctl does not serve; use docker or podman (or set DOCKER_HOST)"
    ]
