#!/usr/bin/env python3
"""What a kiln binary makes of every corpus module, one line each, to diff.

A refactor that should change nothing (a file move, an error type, a split
of a folder) is checked by writing a snapshot with the binary before and
after it and diffing the two files: every line must match.

Per module the line holds the cache key, the simulated device time (exact,
as printed), a digest of the kernel list (names, kinds, tilings, bytes,
flops, times), and a digest of the outputs of a run on seeded random
inputs (the safetensors file, byte for byte). A module that cannot be
evaluated keeps its device time from a timing-only run and records the
error's first line instead of the outputs.

usage: scripts/corpus_snapshot.py KILN_BINARY OUT.tsv [--corpus DIR] [--jobs N]
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import tempfile

SEED = "7"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def first_error_line(done, tmp):
    lines = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
    line = lines[0] if lines else f"exit {done.returncode}"
    return line.replace(tmp + os.sep, "") if tmp else line


def run_json(cmd, tmp=None):
    done = subprocess.run(cmd, capture_output=True, timeout=600)
    if done.returncode != 0:
        return None, first_error_line(done, tmp)
    return json.loads(done.stdout), None


def printed_outputs(kiln, path):
    """Outputs safetensors cannot hold (complex types): the printed literals."""
    done = subprocess.run([kiln, "run", "--random-inputs", SEED, "--print-literals", path],
                          capture_output=True, timeout=600)
    if done.returncode != 0:
        return None
    # The device-time and compile lines vary in their wall-clock parts; keep
    # only the literals.
    kept = [line for line in done.stdout.splitlines() if not line.startswith((b"eval ", b"executable "))]
    return "printed " + digest(b"\n".join(kept))


def snapshot(kiln, path, rel):
    with tempfile.TemporaryDirectory(prefix="kiln-snapshot-") as tmp:
        out = os.path.join(tmp, "out.safetensors")
        result, error = run_json([kiln, "run", "--json", "--random-inputs", SEED, "--outputs", out, path], tmp)
        outputs = "-"
        if result is not None:
            with open(out, "rb") as f:
                outputs = digest(f.read())
        elif "has no safetensors dtype" in error and (printed := printed_outputs(kiln, path)):
            result, error = run_json([kiln, "run", "--json", "--timing-only", path])
            if result is None:
                return f"{rel}\t-\t-\t-\terror: {error}"
            outputs = printed
        else:
            result, timing_error = run_json([kiln, "run", "--json", "--timing-only", path])
            if result is None:
                return f"{rel}\t-\t-\t-\terror: {timing_error}"
            outputs = f"not evaluated: {error}"
    kernels = json.dumps(result.get("kernels", []), sort_keys=True).encode()
    return "\t".join([rel, result["key"], repr(result["device_us"]), digest(kernels), outputs])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kiln")
    parser.add_argument("out")
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--corpus", default=os.path.join(here, "..", "..", "shared", "corpus", "hlo"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    corpus = os.path.abspath(args.corpus)
    modules = sorted(
        os.path.join(d, f) for d, _, files in os.walk(corpus) for f in files if f.endswith(".hlo"))
    if not modules:
        sys.exit(f"corpus_snapshot: no .hlo files under {corpus}")
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        lines = list(pool.map(lambda p: snapshot(args.kiln, p, os.path.relpath(p, corpus)), modules))
    with open(args.out, "w") as f:
        f.write("module\tkey\tdevice_us\tkernels\toutputs\n")
        f.write("\n".join(lines) + "\n")
    evaluated = sum(1 for line in lines if not line.split("\t")[-1].startswith(("not evaluated", "error")))
    print(f"corpus_snapshot: {len(lines)} modules, {evaluated} evaluated -> {args.out}")


if __name__ == "__main__":
    main()
