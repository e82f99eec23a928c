"""The container runtime: a function image run through the Docker Engine API (or podman's
compatible service), and the engine plumbing only it needs: streams over the attach socket,
uploads for remote engines, pre-started containers, image inspection and identity."""
