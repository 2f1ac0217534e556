#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The benchmark driver behind bench/run.sh (`make bench`). Python stdlib only.

Targets are mounted (or not) by this script; each measurement is one fio job,
one dd or one ioctl.

Reads (read-only targets):
  fio --ioengine=psync --direct=0 --iodepth=1 --rw=read --bs=BS --size=SIZE
      --invalidate=0 --readonly --output-format=json
  Cold: unmount the FUSE fs, sync, drop the kernel caches (root only), mount
  again, read. Warm: read again on the same mount, WARM_READS times (median).

Writes (read-write targets, each on a fresh image; the seeds' O,S matrix
without W):
  WRITE_NEW   fio --rw=write --fallocate=none on a new file, with end_fsync
              ("S=0") or with --fsync=1 (fsync after every write; bounded by
              BENCH_FSYNC_RUNTIME seconds, never wrapping around the file)
  WRITE_OVER  the same on an existing, fully written file (laid out once,
              then cold before every run)
  DD          dd if=/dev/zero bs=2M count=500 conv=fsync (the seeds'
              "theoretical maximum")
  WB_OSYNC    seed 004's job: 8 threads, 1M O_SYNC writes, time based;
              `uf2fs stats` after it gives the device request-size histogram
Every write run starts cold (the previous file removed, unmount, drop caches,
mount). Each (target, row) is measured BENCH_REPS times; the median is
reported.

Precache (seed 002): a file with a large first extent and many small ones
made by dd overwrites through a read-write uf2fs mount; cold mount; time
F2FS_IOC_PRECACHE_EXTENTS. Skipped (and said so) when the mount refuses it.

Workloads are data (WORKLOADS, WRITE_WORKLOADS below).
"""
import argparse
import datetime
import errno
import fcntl
import glob
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import nbd_bench  # noqa: E402
import plot
import tree

MIB = 1 << 20

# name, file, rw[, fio: extra options]; read-only targets.
WARM_READS = 5   # warm reads per (target, row, repetition); the median is the sample
WORKLOADS = [
    {"name": "DATA_READ", "file": "data", "rw": "read"},
    {"name": "HOLE_READ", "file": "hole", "rw": "read"},
]

# Write rows, measured on the read-write targets. "bounded": the run stops
# after BENCH_FSYNC_RUNTIME seconds (fsync per write is slow); it never wraps.
WRITE_WORKLOADS = [
    {"name": "WRITE_NEW", "file": "new", "sync": "end_fsync", "fio": ["--end_fsync=1"]},
    {"name": "WRITE_NEW", "file": "new", "sync": "fsync=1", "fio": ["--fsync=1"],
     "bounded": True},
    {"name": "WRITE_OVER", "file": "over", "sync": "end_fsync", "fio": ["--end_fsync=1"]},
    {"name": "WRITE_OVER", "file": "over", "sync": "fsync=1", "fio": ["--fsync=1"],
     "bounded": True},
]

SEED_TARGET = 1.5          # uf2fs >= 1.5x fuse2fs on every read and write row
SEED_TARGET_4K_WRITE = 3.0  # ... >= 3x on the 4k write rows
CEILING_SHARE = 0.95       # ... or >= 95 % of the FUSE ceiling when that is above it
F2FS_IOC_PRECACHE_EXTENTS = (0xf5 << 8) | 15   # _IO(0xf5, 15)
# The uf2fs configurations that compete for "best" on the write rows.
WRITE_CANDIDATES = ("uf2fs", "uf2fs-wbc")


def log(msg):
    print("bench: %s" % msg, file=sys.stderr, flush=True)


def run(cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)


def is_mounted(path):
    path = os.path.realpath(path)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            if line.split()[4].replace("\\040", " ") == path:
                return True
    return False


def parse_size(s):
    s = s.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def mk_two_devices(a, b, total):
    """A fresh 2-device volume (mkfs.f2fs -c b a), half of total bytes on each.
    The super block keeps at most 63 bytes of each path, so mkfs records the
    names relative to their directory; mounts name b with -o device=."""
    half = total // 2 // MIB * MIB
    for p, sz in ((a, half), (b, total - half)):
        remove(p)
        with open(p, "wb") as fh:
            fh.truncate(sz)
    run(["mkfs.f2fs", "-q", "-f", "-c", os.path.basename(b), os.path.basename(a)],
        cwd=os.path.dirname(a))


def mk_16k(path, total):
    """A fresh 16 KiB-block image, made by BENCH_MKFS_16K (a mkfs.f2fs that takes
    -b 16384: f2fs-tools' development branch; Debian's 1.15 cannot)."""
    remove(path)
    with open(path, "wb") as fh:
        fh.truncate(total)
    run([os.environ["BENCH_MKFS_16K"], "-q", "-f", "-b", "16384", path])


class Target:
    """A place to read or write files; FUSE targets are (re)mounted for cold runs.
    prepare() makes a fresh image (write targets), cleanup() frees it."""

    def __init__(self, name, label, cmd=None, mnt=None, path=None, rw=False,
                 prepare=None, cleanup=None, stats=False, rows=None, post_mount=None,
                 make_dir=None):
        self.name, self.label, self.cmd, self.mnt, self.rw = name, label, cmd, mnt, rw
        self.post_mount = post_mount    # after every mount (an fscrypt key is per mount)
        self.make_dir = make_dir        # mkdir of the tree's top (a policy, chattr +F)
        self.path = path or mnt
        self.proc = None
        self.error = None
        self.log = None
        self._prepare, self._cleanup = prepare, cleanup
        self.stats = stats          # a uf2fs mount: `uf2fs stats` works on it
        self.check = None           # what cleanup() found (fsck), for the report
        self.rows = rows            # write rows: a predicate on (workload, bs), or all

    def wants(self, workload, bs):
        return self.rows is None or self.rows(workload, bs)

    @property
    def fuse(self):
        return self.cmd is not None

    def prepare(self):
        if self._prepare:
            self._prepare()

    def cleanup(self):
        if self._cleanup:
            self.check = self._cleanup()

    def mount(self, timeout=30):
        if not self.fuse or is_mounted(self.mnt):
            return
        os.makedirs(self.mnt, exist_ok=True)
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        t0 = time.time()
        while time.time() - t0 < timeout:
            if is_mounted(self.mnt):
                os.stat(self.mnt)
                if self.post_mount:
                    self.post_mount()
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.log.seek(0)
        out = self.log.read()[-2000:]
        self.umount()
        raise RuntimeError("%s: mount failed: %s" % (self.name, out.strip()))

    def umount(self):
        if not self.fuse:
            return
        for _ in range(40):
            if not is_mounted(self.mnt):
                break
            r = subprocess.run(["fusermount3", "-u", self.mnt], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            if r.returncode != 0 and os.geteuid() == 0:
                subprocess.run(["umount", self.mnt], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            if is_mounted(self.mnt):
                time.sleep(0.25)
        if is_mounted(self.mnt):
            subprocess.run(["fusermount3", "-uz", self.mnt])
        if self.proc:
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            rc = self.proc.returncode
            self.proc = None
            if rc not in (0, None) and self.rw:
                self.log.seek(0)
                raise RuntimeError("%s: daemon exited %s at unmount: %s" %
                                   (self.name, rc, self.log.read()[-1000:].strip()))


def drop_caches(can_drop):
    os.sync()
    if can_drop:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")


def fio(path, bs, size, runtime, rw="read", extra=()):
    """One fio job; returns MiB/s of its `rw` direction."""
    cmd = ["fio", "--name=r", "--filename=" + path, "--rw=" + rw, "--bs=" + bs,
           "--size=%d" % size, "--ioengine=psync", "--direct=0", "--iodepth=1",
           "--invalidate=0", "--output-format=json", "--runtime=%d" % runtime]
    cmd += ["--readonly"] if rw == "read" else ["--fallocate=none"]
    cmd += list(extra)
    return fio_run(cmd, "write" if "write" in rw else "read")


def fio_run(cmd, ddir):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("fio failed: %s" % (r.stderr.strip() or r.stdout[-500:]))
    j = json.loads(r.stdout[r.stdout.index("{"):])
    job = j["jobs"][0]
    if job.get("error"):
        raise RuntimeError("fio job error %s" % job["error"])
    return job[ddir]["bw_bytes"] / MIB


def remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def parse_hist(text, direction="write"):
    """The device request-size histogram of one direction in `uf2fs stats`."""
    out = {"requests": None, "mib": None, "buckets": {}}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s+%s\s+requests\s+(\d+),\s+([\d.]+) MiB" % direction, line)
        if not m:
            continue
        out["requests"], out["mib"] = int(m.group(1)), float(m.group(2))
        for b in lines[i + 1:]:
            mb = re.match(r"\s+<=(\S+)\s+(\d+)", b)
            if not mb:
                break
            out["buckets"][mb.group(1)] = int(mb.group(2))
    n = out["requests"] or 0
    big = ("512K", "1M", "2M", "2M+")
    out["share_4k"] = out["buckets"].get("4K", 0) / n if n else None
    out["share_gt256k"] = sum(out["buckets"].get(k, 0) for k in big) / n if n else None
    return out


def stat_counter(text, name):
    m = re.search(r"^\s*%s\s+(\d+)" % re.escape(name), text or "", re.M)
    return int(m.group(1)) if m else None


def fmt(v):
    if v is None:
        return "n/a"
    return "%.0f" % v if v >= 100 else "%.1f" % v


def fmt_ratio(x):
    return "%.2f" % x if x is not None else "n/a"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def seed_met(u, e2, ce, factor):
    """True: u >= factor x fuse2fs; "ceiling": factor x fuse2fs is above the
    ceiling and u reaches 95 % of it; False: neither; None: not measured.
    fuse2fs itself above passthrough_ll shows that the FUSE path can go at
    least that fast: the ceiling for the rule is the higher of the two."""
    if u is None or e2 is None:
        return None
    ceil = max(ce, e2) if ce is not None else None
    if u >= factor * e2:
        return True
    if ceil is not None and factor * e2 > ceil and u >= CEILING_SHARE * ceil:
        return "ceiling"
    return False


MARK = {True: "✓", "ceiling": "✓ (ceiling)", False: "✗", None: "–"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--passthrough", required=True)
    ap.add_argument("--uf2fs", required=True)
    ap.add_argument("--passthrough-hl", default="",
                    help="libfuse's path-based passthrough example built (optional)")
    ap.add_argument("--precache", default="", help="bench/precache.c built (optional)")
    ap.add_argument("--nbd-wire", default="", help="bench/nbd_wire.c built (optional)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    env = os.environ.get
    quick = env("BENCH_QUICK", "0") == "1"
    reps = int(env("BENCH_REPS", "1" if quick else "5"))
    size = parse_size(env("BENCH_SIZE", "64M" if quick else "256M"))
    bss = env("BENCH_BS", "4k 1M" if quick else "4k 64k 1M").split()
    runtime = int(env("BENCH_RUNTIME", "10" if quick else "20"))
    # BENCH_TREE=1: only the everyday-use rows (bench/tree.py)
    parts = env("BENCH_PARTS", "tree git dirops" if env("BENCH_TREE", "0") == "1" else
                "read write osync precache sparse nbd tree git dirops").split()
    tree_reps = int(env("BENCH_TREE_REPS", str(min(reps, 3))))
    fsync_rt = int(env("BENCH_FSYNC_RUNTIME", "1" if quick else "2"))
    wsize = parse_size(env("BENCH_WSIZE", str(size // 2 if quick else size)))
    dd_count = int(env("BENCH_DD_COUNT", str(max(4, wsize // (2 * MIB))) if quick else "500"))
    osync_rt = int(env("BENCH_OSYNC_RUNTIME", "1" if quick else "5"))
    osync_size = parse_size(env("BENCH_OSYNC_SIZE", str(max(MIB, size // (8 if quick else 4)))))
    pc_size = parse_size(env("BENCH_PRECACHE_SIZE", str(size) if quick else "512M"))
    can_drop = os.geteuid() == 0 and os.access("/proc/sys/vm/drop_caches", os.W_OK)
    uf2fs = os.path.abspath(args.uf2fs)
    lib = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib")
    t_start = time.time()
    load_start = os.getloadavg()

    parent = env("BENCH_DIR")
    if parent:
        os.makedirs(parent, exist_ok=True)
    else:
        parent = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    base = tempfile.mkdtemp(prefix="uf2fs-bench.", dir=parent)
    log("working in %s (size %d MiB, bs %s, %d repetition(s), parts %s%s)" %
        (base, size // MIB, " ".join(bss), reps, " ".join(parts), "" if can_drop else
         ", NOT root: cold = remount only, kernel caches not dropped"))

    targets, wtargets = [], []
    only = env("BENCH_TARGETS")
    m = lambda n: os.path.join(base, "mnt-" + n)  # noqa: E731
    samples = {}     # (workload, bs, cache, target) -> [MiB/s]
    wsamples = {}    # (workload, bs, sync, target) -> [MiB/s]
    loads = {}       # the same keys (both) -> [1-minute load average after each sample]
    stats_after_cold_1m = None
    tsamples, dsamples, tree_info = {}, {}, {}
    osync_stats = {}  # target -> [`uf2fs stats` text after each WB_OSYNC run]
    precache = None
    sparse_get = None
    nbd_res = None
    try:
        # ================= reads =================
        if "read" in parts:
            src = os.path.join(base, "src")
            os.makedirs(src)
            with open(os.path.join(src, "data"), "wb") as f:
                left = size
                while left:
                    n = min(left, 16 * MIB)
                    f.write(os.urandom(n))
                    left -= n
            with open(os.path.join(src, "hole"), "wb") as f:
                f.truncate(size)
            img_size = "%dM" % (size * 2 // MIB + 256)

            # -- ext4 image for fuse2fs (mke2fs -d keeps holes) --
            ext4 = os.path.join(base, "ext4.img")
            run(["mkfs.ext4", "-q", "-F", "-d", src, ext4, img_size])

            # -- f2fs image: sload writes every block, so the hole-only file is
            #    made afterwards by tests/lib/f2fsimg.py (an empty file grown to a
            #    hole). --
            f2src = os.path.join(base, "f2src")
            os.makedirs(f2src)
            shutil.copy(os.path.join(src, "data"), f2src)
            open(os.path.join(f2src, "hole"), "wb").close()
            f2fs = os.path.join(base, "f2fs.img")
            with open(f2fs, "wb") as f:
                f.truncate(parse_size(img_size))
            run(["mkfs.f2fs", "-q", "-f", f2fs])
            r = run(["sload.f2fs", "-f", f2src, f2fs], check=False)
            if r.returncode not in (0, 1):
                raise RuntimeError("sload.f2fs failed: %s" % r.stdout[-500:])
            run([sys.executable, os.path.join(lib, "f2fsimg.py"), "make-hole", f2fs, "/hole",
                 str(size)])
            shutil.rmtree(f2src)
            # -- the same files on a 2-device volume (mkfs.f2fs -c), half the
            #    space on each, written by `uf2fs put` (which keeps the hole) --
            f2a, f2b = os.path.join(base, "f2fs2-a.img"), os.path.join(base, "f2fs2-b.img")
            mk_two_devices(f2a, f2b, parse_size(img_size))
            run([uf2fs, "put", "-o", "device=" + f2b, f2a, os.path.join(src, "data"),
                 os.path.join(src, "hole"), "/"])
            # -- and on a 16 KiB-block image (BENCH_MKFS_16K), also by `uf2fs put` --
            f16 = os.path.join(base, "f2fs16k.img")
            if env("BENCH_MKFS_16K"):
                mk_16k(f16, parse_size(img_size))
                run([uf2fs, "put", f16, os.path.join(src, "data"), os.path.join(src, "hole"),
                     "/"])

            targets = [
                Target("tmpfs", "tmpfs", path=src),
                Target("ceiling", "FUSE ceiling",
                       [args.passthrough, "-f", "-o", "source=%s,writeback,cache=always" % src,
                        m("pt")], m("pt")),
                Target("fuse2fs", "fuse2fs", ["fuse2fs", ext4, m("e2"), "-o", "ro", "-f"],
                       m("e2")),
                Target("uf2fs", "uf2fs", [uf2fs, "mount", f2fs, m("uf"), "-o", "ro", "-f"],
                       m("uf"), stats=True),
                Target("uf2fs-o0", "uf2fs order 0",
                       [uf2fs, "mount", f2fs, m("uf0"), "-o", "ro,max_folio_order=0", "-f"],
                       m("uf0"), stats=True),
                Target("uf2fs-dio", "uf2fs direct_io",
                       [uf2fs, "mount", f2fs, m("ufd"), "-o", "ro,direct_io", "-f"], m("ufd"),
                       stats=True),
                Target("uf2fs-uring", "uf2fs uring",
                       [uf2fs, "mount", f2fs, m("ufu"), "-o", "ro,backend=uring", "-f"],
                       m("ufu"), stats=True),
                Target("uf2fs-2dev", "uf2fs 2 devices",
                       [uf2fs, "mount", f2a, m("uf2d"), "-o", "ro,device=" + f2b, "-f"],
                       m("uf2d"), stats=True),
            ]
            if env("BENCH_MKFS_16K"):
                targets.append(Target("uf2fs-16k", "uf2fs 16 KiB blocks",
                                      [uf2fs, "mount", f16, m("uf16"), "-o", "ro", "-f"],
                                      m("uf16"), stats=True))
            if only:
                targets = [t for t in targets if t.name in only.split()]

            # Repetitions are the outer loop, targets the inner one: a burst of
            # other work on the machine then costs one sample of every target
            # rather than every sample of one target, and the median drops it.
            for rep in range(reps):
                for t in targets:
                    if t.error:
                        continue
                    try:
                        for w in WORKLOADS:
                            path = os.path.join(t.path, w["file"])
                            for bs in bss:
                                t.umount()
                                drop_caches(can_drop)
                                t.mount()
                                cold = fio(path, bs, size, runtime, w["rw"], w.get("fio", ()))
                                if (t.name == "uf2fs" and w["file"] == "data" and
                                        bs.upper() == "1M" and stats_after_cold_1m is None):
                                    r = run([uf2fs, "stats", t.mnt], check=False)
                                    stats_after_cold_1m = r.stdout
                                # A warm read is the kernel's page cache alone (a few
                                # tens of ms, and noisy): the median of WARM_READS.
                                warm = statistics.median(
                                    fio(path, bs, size, runtime, w["rw"], w.get("fio", ()))
                                    for _ in range(WARM_READS))
                                samples.setdefault((w["name"], bs, "cold", t.name), []).append(cold)
                                samples.setdefault((w["name"], bs, "warm", t.name), []).append(warm)
                                loads.setdefault((w["name"], bs, "cold", t.name), []).append(
                                    os.getloadavg()[0])
                                log("%d/%d %-12s %-9s %-4s cold %s warm %s MiB/s" % (
                                    rep + 1, reps, t.name, w["name"], bs, fmt(cold), fmt(warm)))
                    except Exception as e:      # a target that fails is reported, not fatal
                        t.error = str(e)
                        log("%s: %s" % (t.name, e))
                    finally:
                        try:
                            t.umount()
                        except Exception as e:
                            t.error = t.error or str(e)
            # the read images are not needed any more: give tmpfs its memory back
            for p in (ext4, f2fs, f2a, f2b):
                remove(p)

        # ================= writes =================
        # Every write target gets a fresh image (or directory) of its own.
        need = max(dd_count * 2 * MIB, 8 * osync_size, wsize)
        wimg_size = (2 * need + 512 * MIB) // MIB * MIB
        if {"tree", "git"} & set(parts):     # room for the unpacked trees
            wimg_size = max(wimg_size, 3 * tree.source_bytes(quick) + 512 * MIB)
        wf2fs = os.path.join(base, "f2fs-w.img")
        wext4 = os.path.join(base, "ext4-w.img")
        wtmp = os.path.join(base, "w-tmpfs")
        wpt = os.path.join(base, "w-pt")
        wpthl = os.path.join(base, "w-pthl")

        def mk_f2fs(img, sz, mkfs=()):
            def f():
                remove(img)
                with open(img, "wb") as fh:
                    fh.truncate(sz)
                run(["mkfs.f2fs", "-q", "-f"] + list(mkfs) + [img])
            return f

        def fsck_f2fs(img, fsck="fsck.f2fs"):
            def f():
                r = run([fsck, "-f", img], check=False)
                bad = r.returncode != 0 or "[Fail]" in r.stdout
                remove(img)
                return ("fsck.f2fs: clean" if not bad else
                        "fsck.f2fs: NOT clean (rc %d): %s" % (
                            r.returncode, " / ".join(
                                ln.strip() for ln in r.stdout.splitlines() if "Fail" in ln)[:400]))
            return f

        wf2a, wf2b = os.path.join(base, "f2fs2-w-a.img"), os.path.join(base, "f2fs2-w-b.img")
        wf16 = os.path.join(base, "f2fs16k-w.img")

        def fsck_16k(img):
            # Debian's fsck.f2fs refuses 16 KiB blocks: BENCH_FSCK_16K names one that reads them
            if env("BENCH_FSCK_16K"):
                return fsck_f2fs(img, env("BENCH_FSCK_16K"))
            return lambda: (remove(img), "fsck.f2fs: not run (no BENCH_FSCK_16K)")[1]

        def fsck_two(a, b):
            # fsck.f2fs opens the devices by the paths mkfs recorded (relative)
            def f():
                r = run(["fsck.f2fs", "-f", os.path.basename(a)], check=False,
                        cwd=os.path.dirname(a))
                bad = r.returncode != 0 or "[Fail]" in r.stdout
                remove(a)
                remove(b)
                return "fsck.f2fs: clean" if not bad else "fsck.f2fs: NOT clean (rc %d)" % (
                    r.returncode)
            return f

        def mk_ext4():
            remove(wext4)
            run(["mkfs.ext4", "-q", "-F", wext4, "%dM" % (wimg_size // MIB)])

        def mk_dir(d):
            def f():
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
            return f

        def rm_dir(d):
            return lambda: shutil.rmtree(d, ignore_errors=True)

        def uf_w(name, label, opts, mkfs=(), binary=uf2fs, **kw):
            return Target(name, label,
                          [binary, "mount", wf2fs, m("w" + name), "-o", opts, "-f"],
                          m("w" + name), rw=True, prepare=mk_f2fs(wf2fs, wimg_size, mkfs),
                          cleanup=fsck_f2fs(wf2fs), stats=True, **kw)

        # The tree rows on an encrypted and on a casefolded tree (issue 21):
        # the same steps under a directory with a policy whose key the mount
        # has (added again after every mount, as a key lives as long as the
        # mount), and under a chattr +F directory on a -O casefold image.
        key = bytes(range(64))

        def add_key(mnt):
            def f():
                subprocess.run([uf2fs, "fscrypt", "add_key", mnt], input=key, check=True,
                               stdout=subprocess.DEVNULL)
            return f

        def mkdir_enc(path):
            os.makedirs(path)
            ident = subprocess.run([uf2fs, "fscrypt", "add_key", os.path.dirname(path)],
                                   input=key, check=True, stdout=subprocess.PIPE).stdout
            run([uf2fs, "fscrypt", "set_policy", ident.decode().strip(), path])

        def mkdir_cf(path):
            os.makedirs(path)
            run(["chattr", "+F", path])

        if {"write", "osync", "tree", "git", "dirops"} & set(parts):
            wtargets = [
                Target("tmpfs", "tmpfs", path=wtmp, rw=True, prepare=mk_dir(wtmp),
                       cleanup=rm_dir(wtmp)),
                Target("ceiling", "FUSE ceiling",
                       [args.passthrough, "-f", "-o", "source=%s,writeback,cache=always" % wpt,
                        m("wpt")], m("wpt"), rw=True, prepare=mk_dir(wpt), cleanup=rm_dir(wpt)),
                # The same with xattrs on: every write(2) then costs a GETXATTR
                # of security.capability, as on uf2fs and fuse2fs (without
                # xattrs the kernel stops asking after the first ENOSYS). 4k
                # rows only, where it matters; only when BENCH_TARGETS names it
                # (passthrough_ll answers getxattr through /proc/self/fd, which
                # costs more than the round trip itself).
                Target("ceiling-x", "FUSE ceiling +xattr",
                       [args.passthrough, "-f", "-o",
                        "source=%s,writeback,cache=always,xattr" % wpt, m("wptx")], m("wptx"),
                       rw=True, prepare=mk_dir(wpt), cleanup=rm_dir(wpt),
                       rows=lambda w, bs: bs.lower() == "4k"),
                # libfuse's path-based passthrough (high-level API): it keeps no
                # fd per inode, so it can serve the 100k-file git checkout and the
                # 100k-entry directory that passthrough_ll cannot under this
                # RLIMIT_NOFILE. Another ceiling, not a lower one: libfuse walks
                # paths, but a LOOKUP costs one lstat, no O_PATH open. Built with
                # passthrough_ll's cache=always timeouts (bench/run.sh); it
                # serves /, so its tree sits under MNT/<wpthl>. Tree rows only.
                Target("ceiling-hl", "FUSE ceiling, path-based",
                       [args.passthrough_hl, "-f", "--plus", "-o", "kernel_cache", m("wpthl")],
                       m("wpthl"), path=m("wpthl") + wpthl, rw=True, prepare=mk_dir(wpthl),
                       cleanup=rm_dir(wpthl), rows=lambda w, bs: False),
                Target("fuse2fs", "fuse2fs",
                       ["fuse2fs", wext4, m("we2"), "-o", "rw,fakeroot", "-f"], m("we2"),
                       rw=True, prepare=mk_ext4, cleanup=lambda: remove(wext4)),
                uf_w("uf2fs", "uf2fs", "rw"),
                # BENCH_WBC_OPTS: this column with other options, to try one against the default
                uf_w("uf2fs-wbc", "uf2fs " + os.environ.get("BENCH_WBC_OPTS", "writeback_cache"),
                     "rw," + os.environ.get("BENCH_WBC_OPTS", "writeback_cache")),
                uf_w("uf2fs-o0", "uf2fs order 0", "rw,max_folio_order=0"),
                Target("uf2fs-2dev", "uf2fs 2 devices",
                       [uf2fs, "mount", wf2a, m("wuf2d"), "-o", "rw,device=" + wf2b, "-f"],
                       m("wuf2d"),
                       rw=True, prepare=lambda: mk_two_devices(wf2a, wf2b, wimg_size),
                       cleanup=fsck_two(wf2a, wf2b), stats=True),
                # a 16 KiB-block image (BENCH_MKFS_16K); BENCH_FSCK_16K checks it
                Target("uf2fs-16k", "uf2fs 16 KiB blocks",
                       [uf2fs, "mount", wf16, m("wuf16"), "-o", "rw", "-f"], m("wuf16"),
                       rw=True, prepare=lambda: mk_16k(wf16, wimg_size),
                       cleanup=fsck_16k(wf16), stats=True),
                # the read-write default before writeback_cache (diagnostic column)
                uf_w("uf2fs-nowbc", "uf2fs no_writeback_cache", "rw,no_writeback_cache"),
                uf_w("uf2fs-enc", "uf2fs encrypted", "rw", ["-O", "encrypt"],
                     post_mount=add_key(m("wuf2fs-enc")), make_dir=mkdir_enc),
                uf_w("uf2fs-cf", "uf2fs casefolded", "rw", ["-O", "casefold", "-C", "utf8"],
                     make_dir=mkdir_cf),
            ]
            # BENCH_BEFORE=PATH: the casefolded column again with another uf2fs
            # binary (a build before a change), for a before/after in one run
            before = env("BENCH_BEFORE")
            if before:
                wtargets.append(uf_w("uf2fs-cf-before", "uf2fs casefolded, before", "rw",
                                     ["-O", "casefold", "-C", "utf8"], make_dir=mkdir_cf,
                                     binary=os.path.abspath(before)))
            if not args.passthrough_hl:
                wtargets = [t for t in wtargets if t.name != "ceiling-hl"]
            if not env("BENCH_MKFS_16K"):
                wtargets = [t for t in wtargets if t.name != "uf2fs-16k"]
            if only:
                wtargets = [t for t in wtargets if t.name in only.split()]
            else:           # diagnostic columns: order 0 not in the smoke run
                diag = ("ceiling-x", "uf2fs-nowbc", "uf2fs-enc", "uf2fs-cf")
                if env("BENCH_TREE", "0") == "1":   # the tree rows' own columns
                    diag = ("uf2fs-nowbc",)
                wtargets = [t for t in wtargets if t.name not in diag and
                            not (quick and t.name == "uf2fs-o0")]

        def cold(t):
            # The FUSE page cache goes with the unmount and the images are on
            # tmpfs, which drop_caches cannot drop: unmount + sync + mount.
            t.umount()
            os.sync()
            t.mount()

        def add(key, v):
            wsamples.setdefault(key, []).append(v)
            loads.setdefault(key, []).append(os.getloadavg()[0])
            log("%d/%d %-12s %-10s %-4s %-14s %s MiB/s" % (
                rep + 1, reps, key[3], key[0], key[1], key[2], fmt(v)))

        def write_pass(t):
            """Every write row once on t, mounted on a fresh image."""
            if "write" in parts:
                # -- new files --
                p = os.path.join(t.path, "new")
                for w in [w for w in WRITE_WORKLOADS if w["file"] == "new"]:
                    for bs in [b for b in bss if t.wants(w["name"], b)]:
                        remove(p)
                        cold(t)
                        add((w["name"], bs, w["sync"], t.name),
                            fio(p, bs, wsize, fsync_rt if w.get("bounded") else runtime,
                                "write", w["fio"]))
                remove(p)
                # -- overwrites of a file laid out once --
                p = os.path.join(t.path, "over")
                cold(t)
                fio(p, "1M", wsize, 600, "write", ["--end_fsync=1"])
                for w in [w for w in WRITE_WORKLOADS if w["file"] == "over"]:
                    for bs in [b for b in bss if t.wants(w["name"], b)]:
                        cold(t)
                        add((w["name"], bs, w["sync"], t.name),
                            fio(p, bs, wsize, fsync_rt if w.get("bounded") else runtime,
                                "write", w["fio"]))
                remove(p)
                # -- dd, the seeds' "theoretical maximum" --
                p = os.path.join(t.path, "dd")
                if t.wants("DD", "2M"):
                    remove(p)
                    cold(t)
                    t0 = time.perf_counter()
                    r = run(["dd", "if=/dev/zero", "of=" + p, "bs=2M", "count=%d" % dd_count,
                             "conv=fsync", "status=none"], check=False)
                    dt = time.perf_counter() - t0
                    if r.returncode != 0:
                        raise RuntimeError("dd failed: %s" % r.stdout.strip()[-300:])
                    add(("DD", "2M", "conv=fsync", t.name), dd_count * 2 / dt)
                    remove(p)
            if "osync" in parts and t.wants("WB_OSYNC", "1M"):
                # -- seed 004: 8 threads of 1M O_SYNC writes --
                cold(t)
                add(("WB_OSYNC", "1M", "O_SYNC ×8", t.name), fio_run([
                    "fio", "--name=wb_osync", "--directory=" + t.path, "--rw=write",
                    "--bs=1M", "--size=%d" % osync_size, "--time_based=1",
                    "--runtime=%d" % osync_rt, "--ioengine=psync", "--direct=0",
                    "--sync=1", "--numjobs=8", "--thread=1", "--nrfiles=1",
                    "--group_reporting", "--output-format=json"], "write"))
                if t.stats:
                    r = run([uf2fs, "stats", t.mnt], check=False)
                    osync_stats.setdefault(t.name, []).append(r.stdout)
                for f in glob.glob(os.path.join(t.path, "wb_osync.*")):
                    remove(f)

        # As for reads, repetitions outside and targets inside; each pass
        # starts from a fresh image, checked (fsck.f2fs) after it.
        checks = {}
        for rep in range(reps if {"write", "osync"} & set(parts) else 0):
            for t in wtargets:
                if t.error or t.name in tree.TREE_ONLY:
                    continue
                t0_target = time.time()
                t.check = None
                try:
                    t.prepare()
                    t.mount()
                    write_pass(t)
                except Exception as e:      # a target that fails is reported, not fatal
                    t.error = str(e)
                    log("%s (write): %s" % (t.name, e))
                finally:
                    try:
                        t.umount()
                    except Exception as e:
                        t.error = t.error or str(e)
                    try:
                        t.cleanup()
                    except Exception as e:
                        t.check = "cleanup failed: %s" % e
                    if t.check:
                        checks.setdefault(t.name, []).append(t.check)
                    log("%d/%d %s: writes took %.0f s%s" % (
                        rep + 1, reps, t.name, time.time() - t0_target,
                        "; " + t.check if t.check else ""))
        for t in wtargets:      # every pass clean, or the first that was not
            c = checks.get(t.name)
            if c:
                bad = [x for x in c if not x.endswith(": clean")]
                t.check = bad[0] if bad else "%s (%d pass%s)" % (
                    c[0], len(c), "" if len(c) == 1 else "es")

        # ================= tree and one directory (bench/tree.py) =================
        def cold_drop(t):
            t.umount()
            drop_caches(can_drop)
            t.mount()

        if {"tree", "git", "dirops"} & set(parts):
            tsamples, dsamples, tree_info = tree.run_tree(base, wtargets, parts, tree_reps,
                                                          quick, cold_drop, log)

        # ================= precache (seed 002) =================
        if "precache" in parts and (not only or "uf2fs" in only.split()):
            pc_tool = args.precache if args.precache and os.access(args.precache, os.X_OK) \
                else None
            precache = measure_precache(base, uf2fs, lib, pc_size, reps, can_drop, pc_tool)

        # ================= uf2fs get from an Android sparse image =================
        if "sparse" in parts and (not only or "uf2fs" in only.split()):
            sparse_get = measure_sparse_get(base, uf2fs, parse_size(
                env("BENCH_SPARSE_TREE", "16M" if quick else "200M")), reps)

        # ================= NBD and qcow2 sources (nbd_bench.py) =================
        if "nbd" in parts and (not only or "uf2fs" in only.split()):
            nbd_res = nbd_bench.run_nbd(base, uf2fs, parse_size(env(
                "BENCH_NBD_SIZE", "32M" if quick else "128M")), bss, reps, runtime, fio, log,
                wire=args.nbd_wire if os.access(args.nbd_wire or "", os.X_OK) else None)

        # ================= report =================
        elapsed = time.time() - t_start
        now = datetime.datetime.now()
        load = (load_start, os.getloadavg())
        md, rows, wrows = report(targets, wtargets, samples, wsamples, bss, reps, size,
                                 can_drop, now, elapsed, stats_after_cold_1m, osync_stats,
                                 precache, dict(load=load, fsync_rt=fsync_rt, dd_count=dd_count,
                                                osync_rt=osync_rt, osync_size=osync_size,
                                                runtime=runtime, wsize=wsize))
        if sparse_get:
            md += report_sparse_get(sparse_get)
        if nbd_res:
            md += nbd_bench.report(nbd_res, bss)
        tmd, trows, drows = tree.report(wtargets, tsamples, dsamples, tree_info, tree_reps)
        if tmd:     # before the closing run time line
            head, tail = md.rstrip("\n").rsplit("\nRun time", 1)
            md = head + "\n" + "\n".join(tmd) + "\nRun time" + tail + "\n"
        pngs = plot.plot_all(args.out, rows, wrows, trows, drows, log)
        if pngs:
            md += "\nCharts: %s\n" % ", ".join(os.path.basename(p) for p in pngs)
        print()
        print(md)
        with open(os.path.join(args.out, "results.md"), "w") as f:
            f.write(md)
        raw = {"date": now.isoformat(), "quick": quick, "reps": reps, "size": size,
               "bs": bss, "parts": parts, "cold_drops_caches": can_drop,
               "kernel": platform.release(), "cpus": os.cpu_count(),
               "write_params": {"file_size": wsize, "fsync_runtime_s": fsync_rt,
                                "dd_count_2M": dd_count,
                                "osync_runtime_s": osync_rt, "osync_size_per_job": osync_size,
                                "runtime_s": runtime, "write_image_bytes": wimg_size},
               "targets": {t.name: {"label": t.label, "cmd": t.cmd, "error": t.error}
                           for t in targets},
               "write_targets": {t.name: {"label": t.label, "cmd": t.cmd, "error": t.error,
                                          "check": t.check} for t in wtargets},
               "samples": [{"workload": k[0], "bs": k[1], "cache": k[2], "target": k[3],
                            "mib_s": v, "load": loads.get(k[:2] + ("cold",) + k[3:])}
                           for k, v in sorted(samples.items())],
               "write_samples": [{"workload": k[0], "bs": k[1], "sync": k[2], "target": k[3],
                                  "mib_s": v, "load": loads.get(k)}
                                 for k, v in sorted(wsamples.items())],
               "rows": rows, "write_rows": wrows,
               "uf2fs_stats_after_cold_1m": stats_after_cold_1m,
               "osync_stats": {n: [{"text": s, "write_hist": parse_hist(s)} for s in v]
                               for n, v in osync_stats.items()},
               "precache": precache, "sparse_get": sparse_get,
               "nbd": nbd_res and {"error": nbd_res["error"], "size": nbd_res["size"],
                                   "samples": [{"workload": k[0], "bs": k[1], "source": k[2],
                                                "mib_s": v}
                                               for k, v in sorted(nbd_res["samples"].items())],
                                   "wire": [{"workload": k[0], "shape": k[1], "mib_s": v}
                                            for k, v in sorted(nbd_res["wire"].items())]},
               "elapsed_s": elapsed, "loadavg_start_end": load,
               "tree": tree_info, "tree_reps": tree_reps,
               "tree_samples": [{"step": k[0], "target": k[1], "seconds": v}
                                for k, v in sorted(tsamples.items())],
               "dir_samples": [{"op": k[0], "target": k[1], "ops_s": v}
                               for k, v in sorted(dsamples.items())],
               "tree_rows": trows, "dir_rows": drows}
        jpath = os.path.join(args.out, "results-%s.json" % now.strftime("%Y%m%d-%H%M%S"))
        with open(jpath, "w") as f:
            json.dump(raw, f, indent=1, ensure_ascii=False)
        log("wrote %s and %s" % (os.path.join(args.out, "results.md"), jpath))
    finally:
        for t in targets + wtargets:
            try:
                t.umount()
            except Exception:
                pass
        shutil.rmtree(base, ignore_errors=True)
    return 0


def measure_sparse_get(base, uf2fs, tree_size, reps):
    """`uf2fs get IMAGE / DEST` of a tree of tree_size bytes (files of 4 KiB to
    8 MiB, random bytes, sload.f2fs), timed from the raw image and from its
    img2simg conversion, which uf2fs reads in place. Each run is a new process
    (its caches start empty); the image files live in base (tmpfs by default),
    so this compares the two device paths, not the disk."""
    res = {"tree_bytes": 0, "files": 0, "raw_s": [], "sparse_s": [], "raw_cpu_s": [],
           "sparse_cpu_s": [], "error": None,
           "image_bytes": 0, "sparse_bytes": 0}
    src, img = os.path.join(base, "sparse-src"), os.path.join(base, "sparse-get.img")
    simg, dest = img + ".simg", os.path.join(base, "sparse-dest")
    try:
        os.makedirs(src)
        sizes = [8 * MIB, 1 * MIB, 64 * 1024, 4096]
        while res["tree_bytes"] < tree_size:
            n = sizes[res["files"] % 4]
            d = os.path.join(src, "d%02d" % (res["files"] % 16))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "f%05d" % res["files"]), "wb") as f:
                f.write(os.urandom(n))
            res["tree_bytes"] += n
            res["files"] += 1
        with open(img, "wb") as f:
            f.truncate(tree_size * 2 + 256 * MIB)
        run(["mkfs.f2fs", "-q", "-f", img])
        run(["sload.f2fs", "-f", src, img], check=False)
        run(["img2simg", img, simg])
        res["image_bytes"], res["sparse_bytes"] = os.path.getsize(img), os.path.getsize(simg)
        for _ in range(reps):
            for key, path in (("raw_s", img), ("sparse_s", simg)):
                shutil.rmtree(dest, ignore_errors=True)
                ru0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                run([uf2fs, "get", path, "/", dest])
                ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                res[key].append(time.perf_counter() - t0)
                res[key[:-2] + "_cpu_s"].append(ru1.ru_utime + ru1.ru_stime -
                                                ru0.ru_utime - ru0.ru_stime)
        run(["diff", "-r", "-q", src, dest])
        log("sparse get: raw %s s, sparse %s s" % (
            fmt(statistics.median(res["raw_s"])), fmt(statistics.median(res["sparse_s"]))))
    except (subprocess.CalledProcessError, OSError) as e:
        res["error"] = str(e)[-300:] + (getattr(e, "stdout", "") or "")[-300:]
        log("sparse get: %s" % res["error"])
    finally:
        for p in (src, dest):
            shutil.rmtree(p, ignore_errors=True)
        for p in (img, simg):
            remove(p)
    return res


def report_sparse_get(r):
    if r["error"] or not r["raw_s"]:
        return "\n## uf2fs get from an Android sparse image\n\nnot measured: %s\n" % r["error"]
    mib = r["tree_bytes"] / MIB
    raw, sp = statistics.median(r["raw_s"]), statistics.median(r["sparse_s"])
    rc, sc = statistics.median(r["raw_cpu_s"]), statistics.median(r["sparse_cpu_s"])
    return ("\n## uf2fs get from an Android sparse image\n\n"
            "`uf2fs get IMAGE / DEST` of %d files, %.0f MiB (sload.f2fs), from the raw image "
            "(%.0f MiB) and from its img2simg conversion (%.0f MiB), read in place; median "
            "of %d runs, each a new process; CPU = user + system of the process.\n\n"
            "| source | seconds | MiB/s | CPU s |\n|---|---:|---:|---:|\n"
            "| raw image | %.2f | %.0f | %.2f |\n| sparse image | %.2f | %.0f | %.2f |\n"
            "| sparse / raw | %.2fx | | %.2fx |\n" % (
                r["files"], mib, r["image_bytes"] / MIB, r["sparse_bytes"] / MIB,
                len(r["raw_s"]), raw, mib / raw, rc, sp, mib / sp, sc, sp / raw, sc / rc))


def measure_precache(base, uf2fs, lib, pc_size, reps, can_drop, pc_tool):
    """Seed 002, scaled: a file whose first half is one extent and whose second
    half has 1 MiB overwritten every 4 MiB (dd conv=notrunc through a read-write
    uf2fs mount: f2fs writes out of place, so each overwrite is an extent of its
    own); then, per repetition, a cold read-only mount and the ioctl, timed."""
    res = {"size": pc_size, "overwrites": 0, "extents": None, "cold_ms": [], "warm_ms": [],
           "node_reads": [], "read_requests": [], "skipped": None, "error": None, "lib": None}
    img = os.path.join(base, "f2fs-pc.img")
    mnt = os.path.join(base, "mnt-pc")
    w = Target("pc-rw", "uf2fs rw", [uf2fs, "mount", img, mnt, "-o", "rw", "-f"], mnt, rw=True)
    r_ = Target("pc-ro", "uf2fs", [uf2fs, "mount", img, mnt, "-f"], mnt, stats=True)
    try:
        with open(img, "wb") as f:
            f.truncate(pc_size * 2 + 256 * MIB)
        run(["mkfs.f2fs", "-q", "-f", img])
        w.mount()
        p = os.path.join(mnt, "pc")
        nmib = pc_size // MIB
        run(["dd", "if=/dev/zero", "of=" + p, "bs=1M", "count=%d" % nmib, "conv=fsync",
             "status=none"])
        for k in range(nmib // 2, nmib, 4):
            run(["dd", "if=/dev/zero", "of=" + p, "bs=1M", "seek=%d" % k, "count=1",
                 "conv=notrunc", "status=none"])
            res["overwrites"] += 1
        os.sync()
        w.umount()
        r = run([sys.executable, os.path.join(lib, "f2fsimg.py"), "bmap", img, "/pc"],
                check=False)
        if r.returncode == 0:
            addrs = json.loads(r.stdout)
            res["extents"] = 1 + sum(1 for a, b in zip(addrs, addrs[1:]) if b != a + 1)
        # the library call, no FUSE (bench/precache.c): one JSON line per rep
        if pc_tool:
            r = subprocess.run([pc_tool, img, "/pc", str(reps)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            if r.returncode == 0:
                res["lib"] = [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()]
            else:
                res["lib_error"] = r.stderr.strip()[-300:]
        for rep in range(reps):
            drop_caches(can_drop)
            r_.mount()
            st = run([uf2fs, "stats", mnt], check=False).stdout
            before = (stat_counter(st, "node reads"), stat_counter(st, "read  requests"))
            fd = os.open(p, os.O_RDONLY)
            try:
                t0 = time.perf_counter()
                try:
                    fcntl.ioctl(fd, F2FS_IOC_PRECACHE_EXTENTS)
                except OSError as e:
                    res["skipped"] = "the ioctl failed with %s (%s) on the uf2fs mount" % (
                        errno.errorcode.get(e.errno, e.errno), os.strerror(e.errno))
                    if e.errno == errno.ENOTTY:
                        res["skipped"] += ": the FUSE front end does not forward " \
                                          "F2FS_IOC_PRECACHE_EXTENTS (yet)"
                    break
                res["cold_ms"].append((time.perf_counter() - t0) * 1000)
                st = run([uf2fs, "stats", mnt], check=False).stdout
                after = (stat_counter(st, "node reads"), stat_counter(st, "read  requests"))
                t0 = time.perf_counter()
                fcntl.ioctl(fd, F2FS_IOC_PRECACHE_EXTENTS)
                res["warm_ms"].append((time.perf_counter() - t0) * 1000)
                if None not in before + after:
                    res["node_reads"].append(after[0] - before[0])
                    res["read_requests"].append(after[1] - before[1])
            finally:
                os.close(fd)
                r_.umount()
        if res["lib"]:
            log("precache (library): cold %.2f ms, warm %.3f ms" % (
                statistics.median(x["cold_ms"] for x in res["lib"]),
                statistics.median(x["warm_ms"] for x in res["lib"])))
        log("precache (ioctl): %s" % (res["skipped"] or "cold %.2f ms, warm %.3f ms" % (
            statistics.median(res["cold_ms"]), statistics.median(res["warm_ms"]))))
    except Exception as e:
        res["error"] = str(e)
        log("precache: %s" % e)
    finally:
        for t in (w, r_):
            try:
                t.umount()
            except Exception:
                pass
        remove(img)
    return res


def report(targets, wtargets, samples, wsamples, bss, reps, size, can_drop, now, elapsed,
           stats_after_cold_1m, osync_stats, precache, wp):
    med = {k: statistics.median(v) for k, v in samples.items()}
    wmed = {k: statistics.median(v) for k, v in wsamples.items()}
    out = ["# uf2fs benchmark", "",
           "%s, %s, %d CPUs, kernel %s; file %d MiB; median of %d; fio psync, buffered, "
           "iodepth 1; MiB/s. Images and files on tmpfs. Load average %.1f at the start, "
           "%.1f at the end (other work on the machine skews the numbers)." % (
               now.strftime("%Y-%m-%d %H:%M"), platform.machine(), os.cpu_count(),
               platform.release(), size // MIB, reps, wp["load"][0][0], wp["load"][1][0]),
           ""]

    # ---- reads ----
    rows = []
    if targets:
        names = [t.name for t in targets]
        labels = {t.name: t.label for t in targets}
        for w in WORKLOADS:
            for bs in bss:
                for cache in ("cold", "warm"):
                    v = {n: med.get((w["name"], bs, cache, n)) for n in names}
                    u, e2 = v.get("uf2fs"), v.get("fuse2fs")
                    ce, tm = v.get("ceiling"), v.get("tmpfs")
                    rows.append({"workload": w["name"], "bs": bs, "cache": cache, "mib_s": v,
                                 "uf2fs/fuse2fs": ratio(u, e2), "uf2fs/ceiling": ratio(u, ce),
                                 "uf2fs/tmpfs": ratio(u, tm),
                                 "seed_target_met": seed_met(u, e2, ce, SEED_TARGET)})
        hdr = (["workload", "bs", "cache"] + [labels[n] for n in names] +
               ["uf2fs/fuse2fs", "uf2fs/ceiling", "uf2fs/tmpfs", "≥1.5× fuse2fs"])
        out += ["## Reads", "",
                "Cold = %s; warm = the median of the next %d reads on the same mount." %
                ("drop_caches + remount" if can_drop else "remount only (not root)",
                 WARM_READS),
                "Seed target: uf2fs (default options) ≥ 1.5× fuse2fs on every read row; where "
                "1.5× fuse2fs is above the FUSE ceiling (passthrough_ll -o writeback,cache=always "
                "over tmpfs), ≥ 95 % of the ceiling meets it: marked ✓ (ceiling). Where "
                "fuse2fs is faster than passthrough_ll (hole reads), fuse2fs is the ceiling "
                "for that rule; the uf2fs/ceiling column is always against passthrough_ll.",
                "", "| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        for r in rows:
            cells = [r["workload"], r["bs"], r["cache"]] + [fmt(r["mib_s"][n]) for n in names]
            cells += [fmt_ratio(x) for x in (r["uf2fs/fuse2fs"], r["uf2fs/ceiling"],
                                             r["uf2fs/tmpfs"])]
            out.append("| " + " | ".join(cells + [MARK[r["seed_target_met"]]]) + " |")
        out.append("")

    # ---- writes ----
    wrows = []
    if wtargets and wsamples:
        names = [t.name for t in wtargets if t.name not in tree.TREE_ONLY]
        labels = {t.name: t.label for t in wtargets}
        keys = []
        for w in WRITE_WORKLOADS:
            for bs in bss:
                keys.append((w["name"], bs, w["sync"]))
        keys += [("DD", "2M", "conv=fsync"), ("WB_OSYNC", "1M", "O_SYNC ×8")]
        keys = [k for k in keys if any(k + (n,) in wmed for n in names)]
        for k in keys:
            v = {n: wmed.get(k + (n,)) for n in names}
            e2, ce, tm = v.get("fuse2fs"), v.get("ceiling"), v.get("tmpfs")
            factor = SEED_TARGET_4K_WRITE if k[1].lower() == "4k" else SEED_TARGET
            met = {c: seed_met(v.get(c), e2, ce, factor) for c in WRITE_CANDIDATES}
            cands = [c for c in WRITE_CANDIDATES if v.get(c) is not None]
            best = max(cands, key=lambda c: v[c]) if cands else None
            wrows.append({"workload": k[0], "bs": k[1], "sync": k[2], "mib_s": v,
                          "factor": factor,
                          "uf2fs/fuse2fs": ratio(v.get("uf2fs"), e2),
                          "wbc/fuse2fs": ratio(v.get("uf2fs-wbc"), e2),
                          "best": best, "best/ceiling": ratio(v.get(best), ce),
                          "best/tmpfs": ratio(v.get(best), tm),
                          "seed_target_met": met})
        short = {"uf2fs": "default", "uf2fs-wbc": "wbc"}
        hdr = (["workload", "bs", "sync"] + [labels[n] for n in names] +
               ["uf2fs/fuse2fs", "wbc/fuse2fs", "best", "best/ceiling", "target",
                "default", "wbc"])
        out += ["## Writes", "",
                "Each target on a fresh image (tmpfs-backed); every run cold: the previous "
                "file removed, unmount, sync, mount. fio --rw=write --fallocate=none, a %d "
                "MiB file. "
                "WRITE_NEW: a new file; WRITE_OVER: a fully written file overwritten in "
                "place. end_fsync: one fsync at the end (the seeds' S=0); fsync=1: fsync "
                "after every write, each run bounded to %d s (it never wraps around). DD: "
                "`dd if=/dev/zero bs=2M count=%d conv=fsync`. WB_OSYNC: seed 004's job "
                "(8 threads, 1M, O_SYNC, %d MiB per thread, %d s, time based). "
                "FUSE ceiling = passthrough_ll -o writeback,cache=always over tmpfs, "
                "without xattrs: after its first ENOSYS the kernel stops sending the "
                "GETXATTR of security.capability that precedes every write(2) to uf2fs and "
                "fuse2fs, which keep xattrs (BENCH_TARGETS=ceiling-x adds passthrough_ll "
                "-o xattr on the 4k rows); on fsync=1 rows its writeback cache makes every "
                "fsync flush a page through a WRITE first, so it is no upper bound there; "
                "fuse2fs -o rw,fakeroot on ext4; uf2fs -o rw (default, writeback_cache "
                "since issue 12), -o rw,writeback_cache (wbc, the same), -o "
                "rw,max_folio_order=0 (order 0, for comparison only; BENCH_TARGETS="
                "uf2fs-nowbc adds -o rw,no_writeback_cache, the old default)." % (wp["wsize"] // MIB, wp["fsync_rt"], wp["dd_count"],
                                        wp["osync_size"] // MIB,
                                        wp["osync_rt"]),
                "Seed target: uf2fs ≥ 1.5× fuse2fs on every write row, ≥ 3× on the 4k "
                "rows; where that is above the FUSE ceiling (the higher of passthrough_ll "
                "and fuse2fs), ≥ 95 % of it meets it: ✓ (ceiling). Marked for the default "
                "configuration and for writeback_cache; best = the faster of the two.",
                "", "| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        for r in wrows:
            cells = [r["workload"], r["bs"], r["sync"]] + [fmt(r["mib_s"][n]) for n in names]
            cells += [fmt_ratio(r["uf2fs/fuse2fs"]), fmt_ratio(r["wbc/fuse2fs"]),
                      short.get(r["best"], "n/a"), fmt_ratio(r["best/ceiling"]),
                      "≥%g×" % r["factor"]]
            cells += [MARK[r["seed_target_met"].get(c)] for c in WRITE_CANDIDATES]
            out.append("| " + " | ".join(cells) + " |")
        if wrows:
            n = len(wrows)
            cnt = {c: sum(1 for r in wrows if r["seed_target_met"].get(c))
                   for c in WRITE_CANDIDATES}
            either = sum(1 for r in wrows if any(r["seed_target_met"].get(c)
                                                 for c in WRITE_CANDIDATES))
            bestc = {c: sum(1 for r in wrows if r["best"] == c) for c in WRITE_CANDIDATES}
            out += ["", "Write targets met: default %d/%d rows, writeback_cache %d/%d, either "
                    "%d/%d. Faster configuration: default on %d rows, writeback_cache on %d." % (
                        cnt["uf2fs"], n, cnt["uf2fs-wbc"], n, either, n, bestc["uf2fs"],
                        bestc["uf2fs-wbc"])]
            missed = ["%s %s %s" % (r["workload"], r["bs"], r["sync"]) for r in wrows
                      if not any(r["seed_target_met"].get(c) for c in WRITE_CANDIDATES)]
            if missed:
                out.append("Missed by both: %s." % "; ".join(missed))
        checks = ["- %s: %s" % (t.name, t.check) for t in wtargets if t.check]
        if checks:
            out += ["", "After the writes:"] + checks
        out.append("")

    # ---- seed 004 histogram ----
    if osync_stats:
        out += ["## Seed 004: device write requests during WB_OSYNC", "",
                "`uf2fs stats` after the job (counters since the cold mount; last "
                "repetition). The seed's proof: 4 KiB share 89.9 % → 7.3 %, ≥ 512 KiB share "
                "0 % → 51.3 %. Here > 256 KiB = histogram buckets ≤512K and above.", "",
                "| target | MiB/s | write requests | MiB written | ≤ 4 KiB | > 256 KiB | "
                "checkpoints | flushes |", "|---|---|---|---|---|---|---|---|"]
        labels = {t.name: t.label for t in wtargets}
        for n, texts in osync_stats.items():
            h = parse_hist(texts[-1])
            fl = re.search(r"flushes (\d+)", texts[-1])
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                labels.get(n, n), fmt(wmed.get(("WB_OSYNC", "1M", "O_SYNC ×8", n))),
                h["requests"], fmt(h["mib"]),
                "%.1f %%" % (100 * h["share_4k"]) if h["share_4k"] is not None else "n/a",
                "%.1f %%" % (100 * h["share_gt256k"]) if h["share_gt256k"] is not None else "n/a",
                stat_counter(texts[-1], "checkpoints"), fl.group(1) if fl else "n/a"))
        first = next(iter(osync_stats))
        out += ["", "`uf2fs stats` after WB_OSYNC (%s):" % labels.get(first, first), "",
                "```", osync_stats[first][-1].rstrip(), "```", ""]

    # ---- seed 002 precache ----
    if precache is not None:
        out += ["## Seed 002: F2FS_IOC_PRECACHE_EXTENTS", "",
                "A %d MiB file written with dd, then 1 MiB overwritten every 4 MiB in its "
                "second half (%d overwrites, %s extents) through a read-write uf2fs mount. "
                "ioctl: cold = drop caches + a fresh read-only mount, the ioctl timed from "
                "Python on the mount. library: bench/precache.c, a fresh read-only library "
                "mount per repetition, uf2fs_precache_extents timed with no FUSE in the way. "
                "The image is on tmpfs, so a node read is a memory copy: the times are CPU "
                "and round trips, not device latency (the seed's 5 GB file: 101.8 → 37.0 ms "
                "on a real device)." % (
                    precache["size"] // MIB, precache["overwrites"],
                    precache["extents"] if precache["extents"] is not None else "?"), "",
                "| path | file | extents | cold ms | warm ms | node reads (cold) | "
                "device read requests (cold) |", "|---|---|---|---|---|---|---|"]
        ext = precache["extents"] if precache["extents"] is not None else "?"
        if precache["error"]:
            out.append("| ioctl | %d MiB | %s | not measured: %s |||||" % (
                precache["size"] // MIB, ext, precache["error"]))
        elif precache["skipped"]:
            out.append("| ioctl | %d MiB | %s | skipped: %s |||||" % (
                precache["size"] // MIB, ext, precache["skipped"]))
        else:
            out.append("| ioctl | %d MiB | %s | %.2f | %.3f | %s | %s |" % (
                precache["size"] // MIB, ext, statistics.median(precache["cold_ms"]),
                statistics.median(precache["warm_ms"]),
                statistics.median(precache["node_reads"]) if precache["node_reads"]
                else "n/a",
                statistics.median(precache["read_requests"]) if precache["read_requests"]
                else "n/a"))
        if precache["lib"]:
            lb = precache["lib"]
            out.append("| library | %d MiB | %s | %.2f | %.3f | %s | %s |" % (
                precache["size"] // MIB, ext, statistics.median(x["cold_ms"] for x in lb),
                statistics.median(x["warm_ms"] for x in lb),
                statistics.median(x["node_reads"] for x in lb),
                statistics.median(x["read_requests"] for x in lb)))
        elif precache.get("lib_error"):
            out.append("| library | %d MiB | %s | failed: %s |||||" % (
                precache["size"] // MIB, ext, precache["lib_error"]))
        out.append("")

    errs = [("- %s: %s" % (t.name, t.error)) for t in targets if t.error]
    errs += [("- %s (write): %s" % (t.name, t.error)) for t in wtargets if t.error]
    if errs:
        out += ["Errors:"] + errs + [""]
    out.append("Run time %.0f s." % elapsed)
    if stats_after_cold_1m:
        out += ["", "`uf2fs stats` after the cold 1M DATA_READ:", "", "```",
                stats_after_cold_1m.rstrip(), "```"]
    return "\n".join(out) + "\n", rows, wrows


if __name__ == "__main__":
    sys.exit(main())
