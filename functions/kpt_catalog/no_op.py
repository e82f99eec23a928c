"""no-op (kpt's test function): hands every resource back as it came and reports nothing.

kpt's own render suite runs it to show that a step which changes nothing leaves the package's
files as they were."""

from __future__ import annotations

import os
import sys

if __package__ in (None, ""):
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from functions.kpt_catalog import krm


def no_op(items: list[krm.Item], config: krm.Item) -> list[dict]:
    return []


if __name__ == "__main__":
    krm.main(no_op, "no-op", with_comments=True, emit_comments=True)  # comments and all, as it came
