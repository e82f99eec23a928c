"""Cases of kpt's and the catalog's suites where fnrun differs on purpose, each with the
difference named (bench/conformance_render.py prints it next to the failure).

Keys are case names as the script prints them. Keep each reason to one line."""

from __future__ import annotations

_OWN_CONFIG = ("the suite at kpt 23c57d7 hands a step its own configPath resource as an item too (its set-labels labels its own "
               "ConfigMap); kpt 1.0 no longer does (kptdev/kpt#4673) and fnrun keeps kpt 1.0's behaviour")

KNOWN: dict[str, str] = {
    # kpt e2e/testdata/fn-render
    "fnconfig": _OWN_CONFIG,
    "fnconfig-ancestorfn-not-mutate-subpkg-config": _OWN_CONFIG,
    "fnconfig-in-subdir": _OWN_CONFIG,
    "fnconfig-pkgfn-refers-subdir": _OWN_CONFIG,
}
