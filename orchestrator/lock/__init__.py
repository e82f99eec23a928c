"""Image locks (fnrun.lock) and air-gapped bundles: pinning function images to their content."""
