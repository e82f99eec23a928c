"""KRM functions for fnrun: the Python SDK (`functions.sdk`) and the catalog built on it.

Each catalog module runs as an exec function (`python3 functions/set_namespace.py < list.yaml`) and is
the entry point of its image (`fnrun/set-namespace:v1`).
"""
