"""Cases of kpt's and the catalog's suites where fnrun differs on purpose or has not caught up,
each with the difference named (bench/conformance_render.py prints it next to the failure).

Keys are case names as the script prints them. Keep each reason to one line."""

from __future__ import annotations

_FILE_NAME = "a new resource without a path goes to <name>_<kind>.yaml in fnrun, <kind>_<name>.yaml in kpt"
_OWN_CONFIG = ("kpt beta.56 hands a step its own configPath resource as an item too (its set-labels labels its own ConfigMap); "
               "fnrun keeps it out, as issue 11 decides and kpt does since kptdev/kpt#4673")
_ABSOLUTE = "a function's absolute path annotation (/another/file/out.yaml) is refused by fnrun; kpt takes it as package-relative"

KNOWN: dict[str, str] = {
    # kpt e2e/testdata/fn-render (fnrun render's own differences, not the builtins')
    "basicpipeline-semver": "tag constraints (hyphen ranges too) resolve against local tags only, and no set-namespace 0.4.x is local here (kpt asks the registry)",
    "fnconfig": _OWN_CONFIG,
    "fnconfig-ancestorfn-not-mutate-subpkg-config": _OWN_CONFIG,
    "fnconfig-in-subdir": _OWN_CONFIG,
    "fnconfig-pkgfn-refers-subdir": _OWN_CONFIG,
    "generator": _FILE_NAME,
    "selectors/generator": _FILE_NAME,
    "validate-generated-resource": _FILE_NAME,
    "generator-absolute-path": _ABSOLUTE,
    "no-resources": _ABSOLUTE,
    "invalid-inline-fnconfig": "kpt ignores the unknown step key `config`; fnrun refuses it",
    "krm-check-exclude-kustomize": "fnrun refuses a YAML file that is not KRM (kustomization.yaml); kpt skips it",
    "validator-mutates-resources": "fnrun fails a validator that changes the package; kpt discards the change",
    # krm-functions-catalog tests/ and examples/ (the builtins' differences)
    "tests/set-namespace/no-fnconfig-resource": "kpt's function reports an error result yet exits 0 and kpt passes; an error result is exit 1 in fnrun (SPEC-NOTES, exit codes)",
    "examples/starlark-poddisruptionbudget": _FILE_NAME,
    "tests/starlark/eval-fn-config": "kpt fn eval --fn-config hands the config over as an item too; SPEC-NOTES keeps it out of fnrun run's items, as issue 11 does for render (kpt since kptdev/kpt#4673)",
    "tests/starlark/openapi": "fnrun's Starlark has no cluster OpenAPI schema: ctx.open_api is empty",
}
