#!/usr/bin/env python3
"""pprof_collapsed.py - reads the text protoc prints for a pprof Profile
(`protoc --decode=perftools.profiles.Profile pprof_profile.proto`) on stdin
and prints what `jprof-top -b --format collapsed` prints for the same
profile: one `root;...;leaf VALUE` line per stack, sorted, with --value
samples (the first sample value) or total (the second), and with --threads
the "thread" label as the root frame. A first line `# KIND UNIT` names the
second sample type, for the test to check.

Exit 0, or 1 on input it cannot read.
"""

import argparse
import codecs
import sys


def parse(lines):
    """Nested dicts of lists from protoc's text format."""
    root = {}
    stack = [root]
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith("{"):
            node = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(node)
            stack.append(node)
            continue
        key, _, val = line.partition(":")
        val = val.strip()
        if val.startswith('"'):
            val = codecs.escape_decode(val[1:-1].encode())[0].decode("utf-8")
        else:
            val = int(val)
        stack[-1].setdefault(key.strip(), []).append(val)
    return root


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--value", choices=["samples", "total"], default="samples")
    ap.add_argument("--threads", action="store_true")
    args = ap.parse_args()
    prof = parse(sys.stdin)
    strings = prof.get("string_table", [])
    strings = [""] * (1 if not strings or strings[0] != "" else 0) + strings
    funcs = {f["id"][0]: strings[f.get("name", [0])[0]] for f in prof.get("function", [])}
    locs = {l["id"][0]: funcs[l["line"][0]["function_id"][0]] for l in prof.get("location", [])}
    types = prof.get("sample_type", [])
    if len(types) != 2:
        print("want 2 sample types, got %d" % len(types), file=sys.stderr)
        return 1
    print("# %s %s" % (strings[types[1].get("type", [0])[0]], strings[types[1].get("unit", [0])[0]]))
    out = {}
    idx = 0 if args.value == "samples" else 1
    for s in prof.get("sample", []):
        names = [locs[i] for i in reversed(s.get("location_id", []))]
        if args.threads:
            thread = "[unknown thread]"
            for lab in s.get("label", []):
                if strings[lab.get("key", [0])[0]] == "thread":
                    thread = strings[lab.get("str", [0])[0]]
            names.insert(0, thread)
        key = ";".join(names) if names else "[no stack]"
        out[key] = out.get(key, 0) + s.get("value", [0, 0])[idx]
    for k in sorted(out, key=lambda x: x.encode()):
        print("%s %d" % (k, out[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
