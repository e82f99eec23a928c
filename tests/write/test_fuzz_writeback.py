"""Differential fuzzing of the write-back (tests/testing/yaml_fuzz.py): random packages, random
edits by exec functions in ruamel round trip, ruamel safe and PyYAML, and the oracle's checks
(every file parses and holds what the function returned, untouched files keep their bytes, each
comment stays in its file, as often as the edits leave it and never more often). File tails and
`source | sink` are generated and checked when `yaml_fuzz.TAILS` is on. This is the small
fixed-seed profile (a tenth of it in the fast subset, testing.sizing); bench/fuzz_writeback.py runs thousands of cases."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, seed, settings, strategies as st

from testing import yaml_fuzz
from testing.sizing import examples


@pytest.mark.parametrize("style", yaml_fuzz.STYLES)
def test_generated_packages_and_edits_are_written_faithfully(style: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    work = tmp_path_factory.mktemp("fuzz")

    @seed(20261126)
    @settings(max_examples=examples(12), deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def case(data: st.DataObject) -> None:
        package = data.draw(yaml_fuzz.packages(), label="package")
        ops = data.draw(yaml_fuzz.edits(package), label="edits")
        wide = data.draw(st.booleans(), label="wide ruamel layout")
        finding = yaml_fuzz.check(package, ops, style, wide, work)
        assert finding is None, finding

    case()
