"""In-process versions of kpt's everyday catalog functions (kptdev/krm-functions-catalog).

fnrun runs these in place of the images `ghcr.io/kptdev/krm-functions-catalog/<name>` (and
`gcr.io/kpt-fn/<name>`) only when asked (`--builtin-catalog`, FNRUN_BUILTIN_CATALOG=1); see
orchestrator/runtimes/host/kpt_catalog.py. Each module is written from the catalog's documentation and
expected test outputs, and works on plain data: fnrun's write-back diffs data, so comments and
formatting of what a function leaves alone survive.
"""

#: The catalog release whose behaviour each builtin follows (its tests at that release are the
#: spec): a Kptfile `tag:` constraint this version satisfies is answered by the builtin.
VERSIONS: dict[str, str] = {
    "set-namespace": "v0.4.1",
    "set-labels": "v0.2.1",
    "set-annotations": "v0.1.4",
    "set-image": "v0.1.1",
    "apply-setters": "v0.2.1",
    "search-replace": "v0.2.0",
    "starlark": "v0.5.1",
    "apply-replacements": "v0.1.2",
}
