# fnrun/fnrun-serve:v1 — `fnrun serve`, Porch's function runner, as a container image.
# Build it with scripts/serve_image.py, which stages the context this file expects (site/, the
# pinned Python packages; orchestrator/, functions/, fnrun-launcher, fnrun-warm). It lives outside
# Dockerfiles/ on purpose: everything there is a catalog function image to build_images.py.
ARG BASE_IMAGE=fnrun/python-base:bookworm
FROM ${BASE_IMAGE}
COPY site /opt/fnrun/site
COPY orchestrator /opt/fnrun/orchestrator
COPY functions /opt/fnrun/functions
COPY fnrun-launcher /usr/local/bin/fnrun
COPY fnrun-warm /opt/fnrun/warm/fnrun-warm
# Byte-compiled at build: the root filesystem may be read-only where it runs. The cache directory
# (result cache, generated code) belongs to the user the server runs as; mount a volume there.
RUN python3 -m compileall -q /opt/fnrun \
    && chmod 0755 /usr/local/bin/fnrun /opt/fnrun/warm /opt/fnrun/warm/fnrun-warm \
    && mkdir -p /var/cache/fnrun && chown 65534:65534 /var/cache/fnrun
# site/ after the sources: the Debian YAML libraries in the base stay below the pinned ones.
# FNRUN_WARM_HELPER: the helper is prebuilt (the base has no compiler). Its directory is bind-mounted
# into each warm container, so the engine must see it at the same path, or calls run cold
# (deploy/kubernetes shares it with the engine through a volume).
ENV PYTHONPATH=/opt/fnrun:/opt/fnrun/site \
    PYTHONDONTWRITEBYTECODE=1 \
    XDG_CACHE_HOME=/var/cache/fnrun \
    FNRUN_WARM_HELPER=/opt/fnrun/warm/fnrun-warm
# Not root. The engine's socket still has to let this user in (its group: `--group-add`, or
# Kubernetes' supplementalGroups), or the engine is reached over TCP (a dind sidecar).
USER 65534
EXPOSE 9445
ENTRYPOINT ["fnrun", "serve"]
# The defaults a container needs: its own loopback is unreachable from outside it, so it listens on
# every address; and plaintext, because porch-server dials its function runner without TLS
# (grpc insecure credentials, nephio-project/porch pkg/engine/grpcruntime.go). Keep it behind a
# network policy that admits porch-server only (deploy/kubernetes/networkpolicy.yaml), or replace
# these arguments with --tls-cert/--tls-key (and --client-ca) for clients that speak TLS.
CMD ["--address", "0.0.0.0:9445", "--insecure"]
