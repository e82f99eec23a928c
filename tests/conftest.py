"""Suite-wide settings. testcontainers' reaper (Ryuk) image cannot be pulled where no registry is
reachable, so the suite runs without it (every container it starts is removed by its test)."""

import os
import signal

# The fixtures tests share, found by name as if defined here (a test never imports a fixture).
pytest_plugins = ["testing.pipeline_helpers", "testing.catalog", "testing.registry"]

# A suite started in the background of a non-interactive shell (`bash .ci/run &`) inherits SIGINT
# ignored, and an ignored signal stays ignored across exec: every fnrun the Ctrl-C tests start
# would then shrug off their SIGINT. Those tests stand for a user at a terminal, so give the suite
# (and through it its children) SIGINT's default handling back.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
# Every test sees its functions really run; the result cache has tests of its own (test_cache.py).
os.environ["FNRUN_CACHE"] = "0"
# Every test of a catalog image sees the image itself run; in-process builtins have their own tests
# (test_builtin.py), which turn them back on.
os.environ["FNRUN_BUILTIN"] = "0"

# Property tests explore new random examples on every developer run; in CI (CI=true) they run a
# fixed, derandomized set, so a submission's result does not depend on the draw.
if os.environ.get("CI") == "true":
    from hypothesis import settings

    settings.register_profile("ci", derandomize=True)
    settings.load_profile("ci")
