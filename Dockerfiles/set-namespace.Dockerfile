# fnrun/set-namespace:v1 — the catalog function functions/set_namespace.py (see its docstring for the config).
# fnrun-base already holds functions/ under /opt/fnrun (on PYTHONPATH) and runs as USER 65534.
FROM fnrun/fnrun-base:v1
ENTRYPOINT ["python3", "-m", "functions.set_namespace"]
