#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The benchmark driver behind bench/run.sh (`make bench`). Python stdlib only.

Targets are mounted (or not) by this script; each measurement is one fio job:
  fio --ioengine=psync --direct=0 --iodepth=1 --rw=read --bs=BS --size=SIZE
      --invalidate=0 --readonly --output-format=json
Cold: unmount the FUSE fs, sync, drop the kernel caches (root only), mount
again, read. Warm: read again on the same mount. Each (target, file, bs) is
measured BENCH_REPS times; the median is reported.

Workloads are data (WORKLOADS below): a later write path adds rows with
"rw": "write" and the targets that can write, without touching the rest.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20

# name, file, rw[, fio: extra options]. Write rows land with the write path:
# e.g. {"name": "WRITE", "file": "new", "rw": "write", "fio": ["--end_fsync=1"]},
# measured only on targets created with rw=True (mounted read-write).
WORKLOADS = [
    {"name": "DATA_READ", "file": "data", "rw": "read"},
    {"name": "HOLE_READ", "file": "hole", "rw": "read"},
]

SEED_TARGET = 1.5          # uf2fs >= 1.5x fuse2fs on every read row
CEILING_SHARE = 0.95       # ... or >= 95 % of the FUSE ceiling when 1.5x is above it


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


class Target:
    """A place to read the files from; FUSE targets are (re)mounted for cold reads."""

    def __init__(self, name, label, cmd=None, mnt=None, path=None, rw=False):
        self.name, self.label, self.cmd, self.mnt, self.rw = name, label, cmd, mnt, rw
        self.path = path or mnt
        self.proc = None
        self.error = None
        self.log = None

    @property
    def fuse(self):
        return self.cmd is not None

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
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


def drop_caches(can_drop):
    os.sync()
    if can_drop:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")


def fio(path, bs, size, runtime, rw="read", extra=()):
    """One fio job; returns MiB/s of its `rw` direction. Write workloads pass
    rw="write" and their own options in extra (e.g. --end_fsync=1)."""
    cmd = ["fio", "--name=r", "--filename=" + path, "--rw=" + rw, "--bs=" + bs,
           "--size=%d" % size, "--ioengine=psync", "--direct=0", "--iodepth=1",
           "--invalidate=0", "--output-format=json", "--runtime=%d" % runtime]
    cmd += ["--readonly"] if rw == "read" else []
    cmd += list(extra)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("fio failed: %s" % (r.stderr.strip() or r.stdout[-500:]))
    j = json.loads(r.stdout[r.stdout.index("{"):])
    job = j["jobs"][0]
    if job.get("error"):
        raise RuntimeError("fio job error %s" % job["error"])
    return job["write" if "write" in rw else "read"]["bw_bytes"] / MIB


def fmt(v):
    if v is None:
        return "n/a"
    return "%.0f" % v if v >= 100 else "%.1f" % v


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--passthrough", required=True)
    ap.add_argument("--uf2fs", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    quick = os.environ.get("BENCH_QUICK", "0") == "1"
    reps = int(os.environ.get("BENCH_REPS", "1" if quick else "3"))
    size = parse_size(os.environ.get("BENCH_SIZE", "64M" if quick else "256M"))
    bss = os.environ.get("BENCH_BS", "4k 1M" if quick else "4k 64k 1M").split()
    runtime = int(os.environ.get("BENCH_RUNTIME", "10" if quick else "20"))
    can_drop = os.geteuid() == 0 and os.access("/proc/sys/vm/drop_caches", os.W_OK)
    uf2fs = os.path.abspath(args.uf2fs)
    lib = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib")
    t_start = time.time()

    parent = os.environ.get("BENCH_DIR")
    if parent:
        os.makedirs(parent, exist_ok=True)
    else:
        parent = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    base = tempfile.mkdtemp(prefix="uf2fs-bench.", dir=parent)
    log("working in %s (size %d MiB, bs %s, %d repetition(s)%s)" %
        (base, size // MIB, " ".join(bss), reps, "" if can_drop else
         ", NOT root: cold = remount only, kernel caches not dropped"))

    targets = []
    try:
        # -- data --
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

        # -- f2fs image: sload writes every block, so the hole-only file is made
        #    afterwards by tests/lib/f2fsimg.py (an empty file grown to a hole). --
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

        m = lambda n: os.path.join(base, "mnt-" + n)  # noqa: E731
        targets = [
            Target("tmpfs", "tmpfs", path=src),
            Target("ceiling", "FUSE ceiling",
                   [args.passthrough, "-f", "-o", "source=%s,writeback,cache=always" % src,
                    m("pt")], m("pt")),
            Target("fuse2fs", "fuse2fs", ["fuse2fs", ext4, m("e2"), "-o", "ro", "-f"], m("e2")),
            Target("uf2fs", "uf2fs", [uf2fs, "mount", f2fs, m("uf"), "-o", "ro", "-f"], m("uf")),
            Target("uf2fs-o0", "uf2fs order 0",
                   [uf2fs, "mount", f2fs, m("uf0"), "-o", "ro,max_folio_order=0", "-f"], m("uf0")),
            Target("uf2fs-dio", "uf2fs direct_io",
                   [uf2fs, "mount", f2fs, m("ufd"), "-o", "ro,direct_io", "-f"], m("ufd")),
            Target("uf2fs-uring", "uf2fs uring",
                   [uf2fs, "mount", f2fs, m("ufu"), "-o", "ro,backend=uring", "-f"], m("ufu")),
        ]
        only = os.environ.get("BENCH_TARGETS")
        if only:
            targets = [t for t in targets if t.name in only.split()]

        # -- measure --
        samples = {}     # (workload, bs, cache, target) -> [MiB/s]
        stats_after_cold_1m = None
        for t in targets:
            try:
                t.mount()
                for w in WORKLOADS:
                    if w["rw"] != "read" and not t.rw:
                        continue
                    path = os.path.join(t.path, w["file"])
                    for bs in bss:
                        for rep in range(reps):
                            t.umount()
                            drop_caches(can_drop)
                            t.mount()
                            cold = fio(path, bs, size, runtime, w["rw"], w.get("fio", ()))
                            if (t.name == "uf2fs" and w["file"] == "data" and bs.upper() == "1M"
                                    and stats_after_cold_1m is None):
                                r = run([uf2fs, "stats", t.mnt], check=False)
                                stats_after_cold_1m = r.stdout
                            warm = fio(path, bs, size, runtime, w["rw"], w.get("fio", ()))
                            samples.setdefault((w["name"], bs, "cold", t.name), []).append(cold)
                            samples.setdefault((w["name"], bs, "warm", t.name), []).append(warm)
                        log("%-12s %-9s %-4s cold %s warm %s MiB/s" % (
                            t.name, w["name"], bs,
                            fmt(statistics.median(samples[(w["name"], bs, "cold", t.name)])),
                            fmt(statistics.median(samples[(w["name"], bs, "warm", t.name)]))))
            except Exception as e:      # a target that fails is reported, not fatal
                t.error = str(e)
                log("%s: %s" % (t.name, e))
            finally:
                t.umount()

        # -- report --
        med = {k: statistics.median(v) for k, v in samples.items()}
        names = [t.name for t in targets]
        labels = {t.name: t.label for t in targets}
        rows = []
        for w in WORKLOADS:
            for bs in bss:
                for cache in ("cold", "warm"):
                    v = {n: med.get((w["name"], bs, cache, n)) for n in names}
                    u, e2, ce, tm = v.get("uf2fs"), v.get("fuse2fs"), v.get("ceiling"), v.get("tmpfs")
                    target_met = None
                    if u is not None and e2 is not None:
                        # fuse2fs itself above passthrough_ll shows that the
                        # FUSE path can go at least that fast: the ceiling for
                        # the rule is the higher of the two.
                        ceil = max(ce, e2) if ce is not None else None
                        if u >= SEED_TARGET * e2:
                            target_met = True
                        elif ceil is not None and SEED_TARGET * e2 > ceil and \
                                u >= CEILING_SHARE * ceil:
                            target_met = "ceiling"
                        else:
                            target_met = False
                    rows.append({"workload": w["name"], "bs": bs, "cache": cache, "mib_s": v,
                                 "uf2fs/fuse2fs": ratio(u, e2), "uf2fs/ceiling": ratio(u, ce),
                                 "uf2fs/tmpfs": ratio(u, tm), "seed_target_met": target_met})
        hdr = (["workload", "bs", "cache"] + [labels[n] for n in names] +
               ["uf2fs/fuse2fs", "uf2fs/ceiling", "uf2fs/tmpfs", "≥1.5× fuse2fs"])
        lines = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        for r in rows:
            mark = {True: "✓", "ceiling": "✓ (ceiling)", False: "✗", None: "–"}[r["seed_target_met"]]
            cells = [r["workload"], r["bs"], r["cache"]] + [fmt(r["mib_s"][n]) for n in names]
            cells += ["%.2f" % x if x is not None else "n/a"
                      for x in (r["uf2fs/fuse2fs"], r["uf2fs/ceiling"], r["uf2fs/tmpfs"])]
            lines.append("| " + " | ".join(cells + [mark]) + " |")
        elapsed = time.time() - t_start
        now = datetime.datetime.now()
        head = ["# uf2fs read benchmark", "",
                "%s, %s, %d CPUs, kernel %s; file %d MiB; median of %d; fio psync, buffered, "
                "iodepth 1; MiB/s." % (now.strftime("%Y-%m-%d %H:%M"), platform.machine(),
                                      os.cpu_count(), platform.release(), size // MIB, reps),
                "Cold = %s; warm = the second read on the same mount." %
                ("drop_caches + remount" if can_drop else "remount only (not root)"),
                "Seed target: uf2fs (default options) ≥ 1.5× fuse2fs on every read row; where "
                "1.5× fuse2fs is above the FUSE ceiling (passthrough_ll -o writeback,cache=always "
                "over tmpfs), ≥ 95 % of the ceiling meets it: marked ✓ (ceiling). Where "
                "fuse2fs is faster than passthrough_ll (hole reads), fuse2fs is the ceiling "
                "for that rule; the uf2fs/ceiling column is always against passthrough_ll.",
                ""]
        errs = ["", "Errors:"] + ["- %s: %s" % (t.name, t.error) for t in targets if t.error] \
            if any(t.error for t in targets) else []
        tail = ["", "Run time %.0f s." % elapsed]
        if stats_after_cold_1m:
            tail += ["", "`uf2fs stats` after the cold 1M DATA_READ:", "", "```",
                     stats_after_cold_1m.rstrip(), "```"]
        md = "\n".join(head + lines + errs + tail) + "\n"
        print()
        print(md)
        with open(os.path.join(args.out, "results.md"), "w") as f:
            f.write(md)
        raw = {"date": now.isoformat(), "quick": quick, "reps": reps, "size": size,
               "bs": bss, "cold_drops_caches": can_drop, "kernel": platform.release(),
               "cpus": os.cpu_count(),
               "targets": {t.name: {"label": t.label, "cmd": t.cmd, "error": t.error}
                           for t in targets},
               "samples": [{"workload": k[0], "bs": k[1], "cache": k[2], "target": k[3],
                            "mib_s": v} for k, v in sorted(samples.items())],
               "rows": rows, "uf2fs_stats_after_cold_1m": stats_after_cold_1m,
               "elapsed_s": elapsed}
        jpath = os.path.join(args.out, "results-%s.json" % now.strftime("%Y%m%d-%H%M%S"))
        with open(jpath, "w") as f:
            json.dump(raw, f, indent=1, ensure_ascii=False)
        log("wrote %s and %s" % (os.path.join(args.out, "results.md"), jpath))
    finally:
        for t in targets:
            try:
                t.umount()
            except Exception:
                pass
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
