"""fnrun: run KRM configuration functions over a package and write back only what changed.

The library API lives in `orchestrator.api`; the CLI in `orchestrator.cli` is a thin shell over it.
"""
