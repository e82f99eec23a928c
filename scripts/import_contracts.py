"""An import-linter contract type the built-in ones lack: modules that must import a module
directly. pyproject.toml uses it to say that the CLI and the launcher both read fnrun's one
declaration of the `run` options, so neither can grow a parser of its own beside it.
lint-imports finds it from the repository root (it puts the working directory on sys.path)."""

from __future__ import annotations

import grimp
from importlinter import Contract, ContractCheck, fields, output


class RequiredImportsContract(Contract):
    """Every module (or package: any module inside it) in `importers` imports `required` directly."""

    type_name = "required"

    importers = fields.ListField(subfield=fields.ModuleField())
    required = fields.ModuleField()

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        required = self.required.name  # type: ignore[attr-defined]
        missing = []
        for importer in self.importers:  # type: ignore[attr-defined]
            inside = {importer.name} | graph.find_descendants(importer.name)
            if not any(graph.direct_import_exists(importer=module, imported=required) for module in inside):
                missing.append(importer.name)
        return ContractCheck(kept=not missing, metadata={"missing": missing, "required": required})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for importer in check.metadata["missing"]:
            output.print_error(f"{importer} does not import {check.metadata['required']}")
            output.new_line()
