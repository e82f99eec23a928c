"""Building fnrun's function images through the Engine API, with no registry: `fnrun images build`
from an installed fnrun (the Dockerfiles ship with it) and scripts/build_images.py in a checkout
(which adds the test images) share this code.

- `dockerfile`: what a Dockerfile builds FROM and copies, read without a Docker CLI.
- `engine`: targets, their order, input hashes, builds and the labels that skip a rebuild.
- `base`: the Python base image, made with debootstrap when none is given.
- `sources`: where the Dockerfiles and sources are, in a checkout or an installed package."""
