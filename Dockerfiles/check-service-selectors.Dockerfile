# fnrun/check-service-selectors:v1 — the catalog function functions/check_service_selectors.py (see its docstring for the config).
# fnrun-base already holds functions/ under /opt/fnrun (on PYTHONPATH) and runs as USER 65534.
FROM fnrun/fnrun-base:v1
ENTRYPOINT ["python3", "-m", "functions.check_service_selectors"]
