"""drop-comments (kpt's test function): hands every resource back without its comments.

The data is unchanged, so what kpt's render suite checks with it (preserve-comments) is the
orchestrator's side: a function that loses comments does not change the files' data. The items
go back as JSON, which carries no comments."""

from __future__ import annotations

import os
import sys

if __package__ in (None, ""):
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from functions.kpt_catalog import krm
from functions.kpt_catalog.no_op import no_op as drop_comments

if __name__ == "__main__":
    krm.main(drop_comments, "drop-comments")
