"""hostile: a function written to take its caller down, chosen by functionConfig.data.mode:

- flood-stdout: writes `yes`-style lines on stdout forever;
- flood-stderr: writes lines on stderr forever (and never answers);
- long-stderr-line: one endless stderr line without a newline;
- bomb: answers with a "billion laughs" item (9 anchors, each a list of 9 aliases to the last);
- deep: answers with an item holding `depth` nested flow sequences (default 20000).

No third-party module: the same file runs as an exec function under any python3."""
import sys


def config() -> dict:
    """`data:` of the functionConfig, read by hand (mode: x, depth: "n" lines only)."""
    found, inside = {}, False
    for line in sys.stdin.read().splitlines():
        if line.startswith("functionConfig:"):
            inside = True
        elif inside and line.strip().startswith(("mode:", "depth:")):
            key, _, value = line.strip().partition(":")
            found[key] = value.strip().strip("'\"")
    return found


HEAD = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: hostile\n"

settings = config()
mode = settings.get("mode", "flood-stdout")
if mode == "flood-stdout":
    line = ("y" * 4095 + "\n").encode()
    block = line * 256
    while True:
        sys.stdout.buffer.write(block)
elif mode == "flood-stderr":
    block = ("e" * 99 + "\n").encode() * 1000
    while True:
        sys.stderr.buffer.write(block)
elif mode == "long-stderr-line":
    block = b"e" * 65536
    while True:
        sys.stderr.buffer.write(block)
elif mode == "bomb":
    lines = [HEAD + "  data:", '    a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"    a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    sys.stdout.write("\n".join(lines) + "\n")
elif mode == "deep":
    depth = int(settings.get("depth", "20000"))
    sys.stdout.write(HEAD + "  data:\n    x: " + "[" * depth + "]" * depth + "\n")
else:
    sys.exit(f"hostile: unknown mode {mode!r}")
