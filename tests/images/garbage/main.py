"""garbage: succeeds (exit 0) but prints something that is not YAML, so the pipeline's handling
of unreadable function output can be tested."""
import sys

sys.stdin.buffer.read()
sys.stdout.write("{{{ not: yaml\n")
