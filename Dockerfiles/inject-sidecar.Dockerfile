# fnrun/inject-sidecar:v1 — the catalog function functions/inject_sidecar.py (see its docstring for the config).
# fnrun-base already holds functions/ under /opt/fnrun (on PYTHONPATH) and runs as USER 65534.
FROM fnrun/fnrun-base:v1
ENTRYPOINT ["python3", "-m", "functions.inject_sidecar"]
