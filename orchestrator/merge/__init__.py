"""The one merge implementation fnrun uses (`fnrun merge`, `fnrun merge3`, `fnrun wrap`).

Works on plain YAML data (dicts, lists, scalars as PyYAML loads them) and returns new plain data;
the writer maps the result back onto the original text, so formatting is not a concern here.

2-way (`merge2`): src's non-null values win; `null` clears; scalars and plain lists are replaced;
maps merge key by key; associative lists merge element by element (dest's order, src's new
elements appended). 3-way (`merge3`): what upstream changed between original and updated is
applied to dest, what it left alone stays as dest has it. Which lists are associative, and by what
key, is decided in `_keys`. Inputs the rules cannot decide (a key repeated within one list, both
sides turning one field into different kinds of collection) raise MergeConflict naming the field.
"""

from orchestrator.merge._common import MergeConflict
from orchestrator.merge._resources import merge2, merge2_resources, merge3, merge3_resources

__all__ = ["MergeConflict", "merge2", "merge2_resources", "merge3", "merge3_resources"]
