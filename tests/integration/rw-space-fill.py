#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Helper of rw-space.sh (not a test itself: not executable).

  rw-space-fill.py STATE MNT fill CYCLE     write files until ENOSPC
  rw-space-fill.py STATE MNT verify         every file in STATE has its content
  rw-space-fill.py STATE MNT delete-alternate   delete every other file
  rw-space-fill.py STATE MNT statfs         print statfs

STATE (JSON) records each file: name -> [seed, size]. The content of a file is
random.Random(seed).randbytes(size) in 1 MiB pieces (piece i from seed*1000+i).
fill writes with os.write in 256 KiB requests; the first ENOSPC ends the file
there (its size must be what was written), then small files are tried until
they fail too. Any other error, a short count that is not followed by ENOSPC,
or ENOSPC while statfs still shows more than 5% of the blocks available, is a
failure (exit 1) with the numbers. fill also fails when it could store less
than 90% (minus 4 MiB) of what statfs showed available before it started:
space that is free but cannot be written (no garbage collection).
"""
import errno
import hashlib
import json
import os
import random
import sys

PIECE = 1 << 20
REQ = 256 << 10
MIB = 1 << 20


def content(seed, size):
    out = bytearray()
    i = 0
    while len(out) < size:
        n = min(PIECE, size - len(out))
        out += random.Random(seed * 1000 + i).randbytes(n)
        i += 1
    return bytes(out)


def statfs(mnt):
    s = os.statvfs(mnt)
    return {"bsize": s.f_frsize, "blocks": s.f_blocks, "bfree": s.f_bfree, "bavail": s.f_bavail,
            "files": s.f_files, "ffree": s.f_ffree}


def fmt(st):
    return ("blocks %d, bfree %d (%.1f MiB), bavail %d (%.1f MiB, %.1f%%), inodes free %d"
            % (st["blocks"], st["bfree"], st["bfree"] * st["bsize"] / MIB, st["bavail"],
               st["bavail"] * st["bsize"] / MIB, 100.0 * st["bavail"] / max(1, st["blocks"]),
               st["ffree"]))


def die(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def write_file(mnt, state, name, seed, size):
    """Write a file; returns (bytes written, hit ENOSPC)."""
    path = os.path.join(mnt, name)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            return None, True
        die("create %s: %s" % (name, e))
    data = content(seed, size)
    done = 0
    enospc = False
    try:
        while done < size:
            try:
                n = os.write(fd, data[done:done + REQ])
            except OSError as e:
                if e.errno == errno.ENOSPC:
                    enospc = True
                    break
                die("write %s at %d: %s" % (name, done, e))
            if n <= 0:
                die("write %s at %d returned %d" % (name, done, n))
            done += n
        try:
            os.fsync(fd)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                die("fsync %s: %s" % (name, e))
            enospc = True
    finally:
        try:
            os.close(fd)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                die("close %s: %s" % (name, e))
            enospc = True
    st = os.stat(path)
    if st.st_size != done:
        die("%s: size %d after writing %d bytes%s" % (name, st.st_size, done,
                                                     " (ENOSPC)" if enospc else ""))
    state[name] = [seed, done]
    return done, enospc


def fill(state, mnt, cycle):
    before = statfs(mnt)
    avail = before["bavail"] * before["bsize"]
    print("cycle %d: before fill: %s" % (cycle, fmt(before)), flush=True)
    rng = random.Random(cycle)
    sizes = [17 << 10, 64 << 10, 256 << 10, 1 << 20, (3 << 20) + 123, 8 << 20]
    total = 0
    k = 0
    hit = False
    while not hit:
        size = rng.choice(sizes)
        name = "c%d-%05d" % (cycle, k)
        k += 1
        done, hit = write_file(mnt, state, name, cycle * 100000 + k, size)
        total += done or 0
        if k > 100000:
            die("no ENOSPC after %d files" % k)
    at = statfs(mnt)
    print("cycle %d: ENOSPC after %d files, %.1f MiB written; statfs: %s"
          % (cycle, k, total / MIB, fmt(at)), flush=True)
    # a few small files after the first ENOSPC: each fails cleanly or fits
    small = 0
    for j in range(50):
        done, hit2 = write_file(mnt, state, "c%d-small-%03d" % (cycle, j), cycle * 7 + j, 4096)
        total += done or 0
        small += 1
        if hit2:
            break
    at = statfs(mnt)
    pct = 100.0 * at["bavail"] / max(1, at["blocks"])
    if pct > 5.0:
        die("cycle %d: ENOSPC while statfs shows %.1f%% of the blocks available (%s): "
            "free space that cannot be written (garbage collection?)" % (cycle, pct, fmt(at)))
    if total < 0.9 * avail - 4 * MIB:
        die("cycle %d: only %.1f MiB could be written, but statfs showed %.1f MiB available "
            "before (%s before; %s at ENOSPC)" % (cycle, total / MIB, avail / MIB, fmt(before),
                                                  fmt(at)))
    print("cycle %d: stored %.1f MiB of %.1f MiB available (%.1f%%)"
          % (cycle, total / MIB, avail / MIB, 100.0 * total / max(1, avail)), flush=True)


def verify(state, mnt):
    names = set(os.listdir(mnt)) - {"lost+found"}
    if names != set(state):
        die("files: %d on the mount, %d expected; missing %s, extra %s"
            % (len(names), len(state), sorted(set(state) - names)[:5],
               sorted(names - set(state))[:5]))
    for name, (seed, size) in sorted(state.items()):
        with open(os.path.join(mnt, name), "rb") as f:
            got = f.read()
        if len(got) != size:
            die("%s: %d bytes, expected %d" % (name, len(got), size))
        if hashlib.sha256(got).digest() != hashlib.sha256(content(seed, size)).digest():
            want = content(seed, size)
            i = next(i for i in range(size) if got[i] != want[i])
            die("%s: content differs at byte %d (size %d)" % (name, i, size))
    print("verified %d files, %.1f MiB" % (len(state), sum(s for _, s in state.values()) / MIB))


def delete_alternate(state, mnt):
    before = statfs(mnt)
    gone = 0
    for i, name in enumerate(sorted(state)):
        if i % 2 == 0:
            os.unlink(os.path.join(mnt, name))
            gone += state.pop(name)[1]
    os.sync()
    print("deleted %.1f MiB (every other file); statfs before %s; after %s"
          % (gone / MIB, fmt(before), fmt(statfs(mnt))), flush=True)


def main():
    state_path, mnt, cmd = sys.argv[1:4]
    state = {}
    if os.path.exists(state_path):
        with open(state_path) as f:
            state = json.load(f)
    try:
        if cmd == "fill":
            fill(state, mnt, int(sys.argv[4]))
        elif cmd == "verify":
            verify(state, mnt)
        elif cmd == "delete-alternate":
            delete_alternate(state, mnt)
        elif cmd == "statfs":
            print(fmt(statfs(mnt)))
        else:
            die("unknown command " + cmd)
    finally:
        with open(state_path + ".tmp", "w") as f:
            json.dump(state, f)
        os.replace(state_path + ".tmp", state_path)


if __name__ == "__main__":
    main()
