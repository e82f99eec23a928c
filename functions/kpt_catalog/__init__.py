"""In-process versions of kpt's everyday catalog functions (kptdev/krm-functions-catalog).

fnrun runs these in place of the images `ghcr.io/kptdev/krm-functions-catalog/<name>` (and
`gcr.io/kpt-fn/<name>`) only when asked (`--builtin-catalog`, FNRUN_BUILTIN_CATALOG=1); see
orchestrator/runtimes/kpt_catalog.py. Each module is written from the catalog's documentation and
expected test outputs, and works on plain data: fnrun's write-back diffs data, so comments and
formatting of what a function leaves alone survive.
"""
