# fnrun/fnrun-base:v1 — what every catalog function image is built FROM: the Python base plus
# fnrun's own sources (no pip in the image), so `fnrun wrap` / `fnrun xargs` and the Python
# functions in functions/ run inside it. Built first by scripts/build_images.py.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
COPY orchestrator /opt/fnrun/orchestrator
COPY functions /opt/fnrun/functions
COPY Dockerfiles/fnrun-launcher /usr/local/bin/fnrun
# Where the base lacks the YAML libraries (python:3.11-slim with a registry), pip brings them;
# the debootstrap base has them from Debian. Byte-compile: the root filesystem is read-only at
# run time, so Python could not cache bytecode itself.
RUN { python3 -c "import yaml, ruamel.yaml" 2>/dev/null \
      || python3 -m pip install --no-cache-dir PyYAML ruamel.yaml; } \
    && python3 -m compileall -q /opt/fnrun && chmod 0755 /usr/local/bin/fnrun
ENV PYTHONPATH=/opt/fnrun
# In a warm container, `python3 -m MODULE` calls of an image built FROM this one are forked by
# this module, with the interpreter and the SDK already imported (functions/sdk/zygote.py).
LABEL dev.fnrun.python-zygote=functions.sdk.zygote
USER 65534
