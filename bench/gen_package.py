"""Generate a big, realistic package: many files of commented multi-document YAML.

Used by the benchmarks; deterministic so fnrun and kpt see the same bytes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEPLOYMENT = """\
# Deployment for service {n} (team {team})
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-{n}
  namespace: team-{team}
  labels:
    app: svc-{n}  # the selector label
    tier: "backend"
  annotations:
    owner: 'team-{team}@example.com'
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app: svc-{n}
  template:
    metadata:
      labels:
        app: svc-{n}
    spec:
      containers:
      - name: app
        image: registry.example.com/svc-{n}:1.{n}.0
        args: ["--port", "8080", "--verbose"]
        ports:
        - containerPort: 8080  # http
        resources:
          limits: {{cpu: 500m, memory: 256Mi}}
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: svc-{n}
  namespace: team-{team}
spec:
  # route traffic to the pods
  selector:
    app: svc-{n}
  ports:
  - port: 80
    targetPort: 8080
"""

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: svc-{n}-config
  namespace: team-{team}
data:
  LOG_LEVEL: info
  settings.yaml: |
    # embedded config
    retries: 3
    timeout: 30s
"""


def generate(root: Path, files: int, per_file: int) -> int:
    """Write `files` files of `per_file` resources each under root; return the resource count."""
    templates = [DEPLOYMENT, SERVICE, CONFIGMAP]
    count = 0
    for f in range(files):
        team = f % 20
        directory = root / f"team-{team:02d}" / f"app-{f:04d}"
        directory.mkdir(parents=True, exist_ok=True)
        docs = []
        for i in range(per_file):
            n = f * per_file + i
            docs.append(templates[i % 3].format(n=n, team=team, replicas=1 + n % 5))
            count += 1
        (directory / "resources.yaml").write_text("---\n".join(docs))
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--per-file", type=int, default=5)
    args = parser.parse_args()
    print(generate(args.root, args.files, args.per_file), "resources written to", args.root)


if __name__ == "__main__":
    main()
