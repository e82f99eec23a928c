"""sleep: waits functionConfig.data.seconds (default 60), then echoes its input byte for byte:
a function that is still running when a timeout or an interrupt arrives."""
import sys
import time

from krm import config, parse

raw = sys.stdin.buffer.read()
seconds = float(config(parse(raw)).get("seconds", 60))
print(f"sleep: sleeping {seconds:g}s", file=sys.stderr, flush=True)
time.sleep(seconds)
sys.stdout.buffer.write(raw)
