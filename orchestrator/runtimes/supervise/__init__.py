"""What supervising any running function needs, whatever runs it: bounded stdin/stdout/stderr
pumps, signal handling that never leaves a container or process group behind, and the
children to end when a run is stopped (`children`)."""
