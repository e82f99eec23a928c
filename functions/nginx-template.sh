#!/bin/sh
# nginx-template: a KRM function written as a shell template. An `Nginx` resource (metadata.name,
# spec.replicas) becomes a Service and a Deployment named after it.
#
# The script wraps itself: run directly (as the image's entrypoint), it re-runs itself under
# `fnrun wrap`, which exports the functionConfig as NAME and REPLICAS, merges what the heredoc
# prints onto the package's resources by identity, and prints the ResourceList fnrun run expects.
set -eu

if [ -z "${WRAPPED:-}" ]; then
  export WRAPPED=true
  exec fnrun wrap -- "$0" "$@"
fi

# Checked, not trusted: the values land inside YAML.
case "${NAME:-}" in
  "" | *[!a-z0-9.-]*) echo "nginx-template: metadata.name must be a lowercase DNS name, got '${NAME:-}'" >&2; exit 1 ;;
esac
REPLICAS="${REPLICAS:-1}"
case "$REPLICAS" in
  "" | *[!0-9]*) echo "nginx-template: spec.replicas must be a whole number, got '$REPLICAS'" >&2; exit 1 ;;
esac

cat <<End-of-template
apiVersion: v1
kind: Service
metadata:
  name: ${NAME}
  labels:
    app: nginx
    instance: ${NAME}
spec:
  ports:
  - port: 80
    targetPort: 80
    name: http
  selector:
    app: nginx
    instance: ${NAME}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${NAME}
  labels:
    app: nginx
    instance: ${NAME}
spec:
  replicas: ${REPLICAS}
  selector:
    matchLabels:
      app: nginx
      instance: ${NAME}
  template:
    metadata:
      labels:
        app: nginx
        instance: ${NAME}
    spec:
      containers:
      - name: nginx
        image: nginx:1.7.9
        ports:
        - containerPort: 80
End-of-template
