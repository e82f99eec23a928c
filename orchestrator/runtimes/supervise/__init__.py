"""What supervising any running function needs, whatever runs it: bounded stdin/stdout/stderr
pumps and signal handling that never leaves a container or process group behind."""
