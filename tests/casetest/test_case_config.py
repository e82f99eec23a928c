"""The pieces of `fnrun test` that need no container: any config.yaml mapping is read or refused
with a CaseError naming the file (never another exception), the kpt stand-in maps kpt's commands
to fnrun's, diffStripRegEx normalises as kpt's runner does."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from orchestrator.casetest.config import KNOWN_FIELDS, CaseError, parse_config
from orchestrator.casetest.expect import normalise_diff
from orchestrator.casetest.kptshim import command_for

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)), max_leaves=6)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a loaded machine draws slowly; nothing here is timed
@given(st.dictionaries(st.sampled_from(sorted(KNOWN_FIELDS) + ["other"]), _VALUES, max_size=6))
def test_any_config_is_read_or_refused_by_name(data: dict) -> None:
    try:
        config = parse_config(data, "case/.expected/config.yaml")
    except CaseError as err:
        assert str(err).startswith("case/.expected/config.yaml: ") and "\n" not in str(err)
        return
    assert config.test_type in ("render", "eval")
    assert isinstance(config.exit_code, int) and all(isinstance(v, str) for _, v in config.args)


def test_the_kpt_stand_in_maps_kpt_commands() -> None:
    assert command_for(["fn", "eval", "-i", "img", "--", "a=b"], "--builtin-catalog", "--allow-exec") == [
        "run", "-i", "img", "--builtin-catalog", "--file-names", "kind_name", "--allow-exec", "--", "a=b"]
    assert command_for(["fn", "render", "pkg"], "--builtin-catalog") == ["render", "pkg", "--builtin-catalog"]
    assert command_for(["fn", "source", "."], "--builtin-catalog") == ["source", "."]
    assert command_for(["pkg", "get", "x"]) is None and command_for(["fn", "doc"]) is None


def test_diff_strip_regex_normalises_as_kpt() -> None:
    diff = "diff --git a/f b/f\nindex 1a2b..3c4d 100644\n@@ -1,2 +1,3 @@ kind: X\n+  stderr: boom\n+x"
    assert normalise_diff(diff, r"\+\s+stderr:", Path("case")) == "diff --git a/f b/f\nindex NORMALIZED 100644\n@@ NORMALIZED @@ kind: X\n+x"
