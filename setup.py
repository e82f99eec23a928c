"""The build step pyproject.toml cannot declare: what fnrun ships ready-made (the warm containers'
static helper for linux/amd64 and linux/arm64, the gRPC code of evaluator.proto) is made from its
sources while the wheel is built, by orchestrator/prebuilt.py, so nothing is compiled
where fnrun runs. Everything else is in pyproject.toml."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

GENERATOR = Path(__file__).resolve().parent / "orchestrator" / "prebuilt.py"


class BuildWithPrebuilt(build_py):
    """build_py, then the generator over the build directory. An editable install skips it: the
    checkout's own files are made by `python -m orchestrator.prebuilt` (.ci/setup)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        spec = importlib.util.spec_from_file_location("fnrun_prebuilt", GENERATOR)  # by path: fnrun's dependencies are not installed here
        assert spec is not None and spec.loader is not None
        generator = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(generator)
        generator.generate(Path(self.build_lib))


setup(cmdclass={"build_py": BuildWithPrebuilt})
