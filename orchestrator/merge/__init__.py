"""The one merge implementation fnrun uses (`fnrun merge`, `fnrun merge3`, `fnrun wrap`).

Works on plain YAML data (dicts, lists, scalars as PyYAML loads them) and returns new plain data;
the writer maps the result back onto the original text, so formatting is not a concern here.

2-way (`merge2`): src's non-null values win; `null` clears; scalars and plain lists are replaced;
maps merge key by key; associative lists merge element by element (dest's order, src's new
elements appended). 3-way (`merge3`): what upstream changed between original and updated is
applied to dest, what it left alone stays as dest has it. Which lists are associative, and by what
key, is decided in `_keys`.

Where the seeds leave room, fnrun decides:
- a null in `original` means absent (null only ever means "clear");
- a field or element the dest deleted comes back only with upstream's delta (for an element, plus
  its key), and not at all when upstream left it alone;
- a map or element upstream deleted keeps only what dest added to it (the seed's recursion);
  a whole resource upstream deleted but dest edited is kept (see `merge3_resources`);
- when upstream and dest both changed a field to different kinds of value, an upstream scalar wins
  (the scalar rule); an upstream map or list cannot be merged into dest's other kind, so that,
  like a key repeated within one list, raises MergeConflict naming the field path;
- fnrun's own annotations (path, index, layout) always come from dest, so a merged resource stays
  where dest has it and a resource new to dest keeps the path it had in its source.
"""

from orchestrator.merge._common import MergeConflict
from orchestrator.merge._resources import merge2, merge2_resources, merge3, merge3_resources

__all__ = ["MergeConflict", "merge2", "merge2_resources", "merge3", "merge3_resources"]
