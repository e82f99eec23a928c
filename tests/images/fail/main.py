"""fail: reads its input, writes functionConfig.data.message (or a default) to stderr and exits
with functionConfig.data.exitCode (default 1), writing nothing on stdout."""
import sys

from krm import config, parse

try:
    data = config(parse(sys.stdin.buffer.read()))
except Exception:  # noqa: BLE001 - failing is the point; bad input fails the default way
    data = {}
print(str(data.get("message") or "fail: failing on purpose"), file=sys.stderr)
sys.exit(int(data.get("exitCode", 1)))
