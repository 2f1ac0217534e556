#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read files at odd offsets and sizes and compare with a reference.

  readcheck.py SRC DST [--seed N] [--ops K] [--bs B] [--threads T]
               [--min-size BYTES] [--zero PATH:SIZE ...] [--sums FILE]

For every regular file under SRC (at least --min-size bytes), the same
relative path under DST is read
  1. sequentially with an odd block size (default 7777 bytes), and
  2. with K positioned reads (pread) of random offsets and lengths, some
     crossing EOF, some starting past it, from T threads at once,
and every byte is compared with SRC. --zero PATH:SIZE checks a file of DST
only (a hole-only file that the image has but SRC does not): its size and
that reads anywhere, including far offsets, return zeros.
--sums FILE writes "sha256  path" for every DST file read (to compare runs).
Prints each mismatch; exits 1 on any. Python stdlib only.
"""
import argparse
import hashlib
import os
import random
import sys
import threading

MIB = 1 << 20


def files_under(root, min_size):
    out = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            if os.path.getsize(p) >= min_size:
                out.append(os.path.relpath(p, root))
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ops", type=int, default=64)
    ap.add_argument("--bs", type=int, default=7777)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--min-size", type=int, default=0)
    ap.add_argument("--zero", action="append", default=[])
    ap.add_argument("--sums")
    args = ap.parse_args()
    errors = []
    lock = threading.Lock()
    sums = {}
    nread = [0]

    def err(msg):
        with lock:
            errors.append(msg)
            if len(errors) <= 100:
                print(msg, flush=True)

    def seq(rel):
        sp, dp = os.path.join(args.src, rel), os.path.join(args.dst, rel)
        h = hashlib.sha256()
        off = 0
        try:
            with open(sp, "rb") as fs, open(dp, "rb", buffering=0) as fd:
                while True:
                    a = fs.read(args.bs)
                    b = fd.read(args.bs)
                    if b:
                        h.update(b)
                    if a != b:
                        i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]),
                                 min(len(a), len(b)))
                        err("%s: sequential bs=%d: first difference at byte %d (src %d bytes,"
                            " dst %d bytes in this read)" % (rel, args.bs, off + i, len(a), len(b)))
                        return
                    if not a:
                        break
                    off += len(a)
                    with lock:
                        nread[0] += len(b)
        except OSError as e:
            err("%s: sequential read: %s" % (rel, e))
            return
        sums[rel] = h.hexdigest()

    def rand_ops(rel, ops, seed):
        sp, dp = os.path.join(args.src, rel), os.path.join(args.dst, rel)
        size = os.path.getsize(sp)
        rng = random.Random("%d:%s:%d" % (args.seed, rel, seed))
        try:
            fs = os.open(sp, os.O_RDONLY)
            fd = os.open(dp, os.O_RDONLY)
        except OSError as e:
            err("%s: open: %s" % (rel, e))
            return
        try:
            for _ in range(ops):
                k = rng.random()
                if k < 0.1:
                    off = size + rng.randint(0, 10000)          # past EOF
                elif k < 0.3:
                    off = max(0, size - rng.randint(1, 70000))  # crossing EOF
                else:
                    off = rng.randint(0, max(0, size - 1))
                n = rng.choice([1, 511, 4095, 4097, 7777, 65535, 131073, MIB + 3,
                                rng.randint(1, 3 * MIB)])
                a = os.pread(fs, n, off)
                try:
                    b = os.pread(fd, n, off)
                except OSError as e:
                    err("%s: pread(%d, %d): %s" % (rel, n, off, e))
                    return
                with lock:
                    nread[0] += len(b)
                if a != b:
                    err("%s: pread(len %d, off %d): src %d bytes, dst %d bytes, differ" %
                        (rel, n, off, len(a), len(b)))
        finally:
            os.close(fs)
            os.close(fd)

    files = files_under(args.src, args.min_size)
    for rel in files:
        if not os.path.exists(os.path.join(args.dst, rel)):
            err("%s: missing in %s" % (rel, args.dst))
            continue
        seq(rel)
        threads = [threading.Thread(target=rand_ops, args=(rel, max(1, args.ops // args.threads), t))
                   for t in range(args.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    for z in args.zero:
        rel, size = z.rsplit(":", 1)
        size = int(size)
        dp = os.path.join(args.dst, rel)
        try:
            st = os.stat(dp)
            if st.st_size != size:
                err("%s: size %d, expected %d" % (rel, st.st_size, size))
            rng = random.Random("%d:zero:%s" % (args.seed, rel))
            with open(dp, "rb", buffering=0) as f:
                offs = [0, 4096 * 923 - 1, 4096 * (923 + 2036) + 5, size // 2, size - 1, size,
                        size + 100]
                offs += [rng.randint(0, size) for _ in range(args.ops)]
                for off in offs:
                    n = rng.choice([1, 4096, 7777, MIB + 1])
                    f.seek(off)
                    b = f.read(n)
                    exp = max(0, min(n, size - off))
                    if len(b) != exp or b.count(0) != len(b):
                        err("%s: read(len %d, off %d) of a hole: %d bytes, %d non-zero" %
                            (rel, n, off, len(b), len(b) - b.count(0)))
                    nread[0] += len(b)
        except OSError as e:
            err("%s: %s" % (rel, e))

    if args.sums:
        with open(args.sums, "w") as f:
            for rel in sorted(sums):
                f.write("%s  %s\n" % (sums[rel], rel))
    print("readcheck: %d files, %.1f MiB read from %s: %s" %
          (len(files) + len(args.zero), nread[0] / MIB, args.dst,
           "%d errors" % len(errors) if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
