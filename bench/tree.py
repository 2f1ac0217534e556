# SPDX-License-Identifier: GPL-2.0
"""Everyday-use rows of `make bench` (bench.py parts "tree" and "dirops").

tree    a real source tree, tarred at bench time from local directories
        (BENCH_TREE_SRC, default /usr/share/doc /usr/lib/python3.* /usr/share/locale
        and /usr/include/{linux,c++,x86_64-linux-gnu}; the smoke run takes
        /usr/share/doc), then on each
        target, on a fresh image:
          untar     tar -xf (GNU tar: 10 KiB records, a create + small writes
                    per file) until tar exits; "untar+sync" adds syncfs(2)
          find      cold: find MNT | wc -l
          ls -lR    cold: every directory listed, every entry stat'ed
          grep -r   cold: every file read (a pattern that matches nothing)
          rm -rf    the whole tree, then syncfs(2)
        Cold = unmount, sync, drop the kernel caches (root), mount.
dirops  one directory, N entries (BENCH_DIR_N, default 100000; smoke 10000):
          create    open(O_CREAT|O_EXCL) + close of N empty files
          stat      cold: stat(2) of every name (a LOOKUP each on FUSE)
          unlink    unlink(2) of every name, then syncfs(2)
        reported as operations per second.

Targets: tmpfs, libfuse's passthrough_ll -o writeback over tmpfs (the FUSE
ceiling), fuse2fs on ext4, uf2fs -o rw (the default) and -o
rw,writeback_cache. Repetitions outside, targets inside (as in bench.py).
"""
import ctypes
import glob
import os
import resource
import shutil
import statistics
import subprocess
import tarfile
import time

MIB = 1 << 20
TREE_STEPS = ["untar", "untar+sync", "find", "ls -lR", "grep -r", "rm -rf"]
DIR_STEPS = ["create", "stat", "unlink"]
TREE_TARGETS = ("tmpfs", "ceiling", "fuse2fs", "uf2fs", "uf2fs-wbc")


def default_sources(quick):
    """About 14k entries and 400 MiB here: passthrough_ll holds an O_PATH fd
    per inode it knows, so a tree larger than RLIMIT_NOFILE (20000 on the
    development machine, and not raisable in its container) makes the
    ceiling fail with EMFILE."""
    if quick:
        return ["/usr/share/doc"]
    return ["/usr/share/doc"] + sorted(glob.glob("/usr/lib/python3.*")) + \
        ["/usr/share/locale"] + [d for d in ("/usr/include/linux", "/usr/include/c++",
                                             "/usr/include/x86_64-linux-gnu")]


def sources():
    srcs = os.environ.get("BENCH_TREE_SRC")
    return srcs.split() if srcs else None


def source_bytes(quick):
    """Bytes the tree's files hold (apparent sizes), to size the images."""
    total = 0
    for src in sources() or default_sources(quick):
        for root, _, files in os.walk(src):
            for f in files:
                try:
                    total += os.lstat(os.path.join(root, f)).st_size
                except OSError:
                    pass
    return total


def make_tarball(path, sources):
    """A GNU tar of the sources (symlinks kept, unreadable files skipped);
    returns (entries, bytes of file data)."""
    entries, data = 0, 0
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tf:
        for src in sources:
            if not os.path.isdir(src):
                continue
            for root, dirs, files in os.walk(src):
                dirs.sort()
                for name in [None] + sorted(files):
                    p = root if name is None else os.path.join(root, name)
                    try:
                        ti = tf.gettarinfo(p, arcname=p.lstrip("/"))
                        if ti is None:
                            continue
                        if ti.isreg():
                            with open(p, "rb") as fh:
                                tf.addfile(ti, fh)
                            data += ti.size
                        elif ti.isdir() or ti.issym():
                            tf.addfile(ti)
                        else:
                            continue
                        entries += 1
                    except OSError:
                        continue
    return entries, data


_libc = ctypes.CDLL(None, use_errno=True)


def syncfs(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _libc.syncfs(fd) < 0:
            e = ctypes.get_errno()
            raise OSError(e, "syncfs %s: %s" % (path, os.strerror(e)))
    finally:
        os.close(fd)


def timed(cmd, **kw):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **kw)
    dt = time.perf_counter() - t0
    return dt, r


def sh_timed(script, what):
    dt, r = timed(["sh", "-c", script])
    if r.returncode not in (0, 1) or (r.returncode == 1 and "grep" not in what):
        raise RuntimeError("%s failed (%d): %s" % (what, r.returncode, r.stderr.strip()[-300:]))
    return dt


def tree_pass(t, tarball, cold, log_sample):
    """The tree steps once on a mounted target t; returns {step: seconds}."""
    top = os.path.join(t.path, "tree")
    os.makedirs(top)
    res = {}
    dt, r = timed(["tar", "-xf", tarball, "-C", top, "--no-same-owner"])
    if r.returncode != 0:
        raise RuntimeError("tar failed: %s" % r.stderr.strip()[-300:])
    res["untar"] = dt
    t0 = time.perf_counter()
    syncfs(t.path)
    res["untar+sync"] = dt + time.perf_counter() - t0
    cold(t)
    res["find"] = sh_timed("find '%s' | wc -l >/dev/null" % top, "find")
    cold(t)
    res["ls -lR"] = sh_timed("ls -lR '%s' >/dev/null" % top, "ls -lR")
    cold(t)
    # grep exits 1 when nothing matched, which is what is asked for
    res["grep -r"] = sh_timed("grep -r -q 'uf2fs-bench-no-such-string-9f3a' '%s'" % top,
                              "grep -r")
    cold(t)
    t0 = time.perf_counter()
    r = subprocess.run(["rm", "-rf", top], stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("rm -rf failed: %s" % r.stderr.strip()[-300:])
    syncfs(t.path)
    res["rm -rf"] = time.perf_counter() - t0
    for k in TREE_STEPS:
        log_sample(k, res[k])
    return res


def dir_pass(t, n, cold, log_sample):
    """create / cold stat / unlink of n entries in one directory: ops/s."""
    d = os.path.join(t.path, "onedir")
    os.makedirs(d)
    names = [os.path.join(d, "f%07d" % i) for i in range(n)]
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    res = {}
    t0 = time.perf_counter()
    for p in names:
        os.close(os.open(p, flags, 0o644))
    syncfs(t.path)
    res["create"] = n / (time.perf_counter() - t0)
    cold(t)
    t0 = time.perf_counter()
    for p in names:
        os.stat(p)
    res["stat"] = n / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for p in names:
        os.unlink(p)
    syncfs(t.path)
    res["unlink"] = n / (time.perf_counter() - t0)
    os.rmdir(d)
    for k in DIR_STEPS:
        log_sample(k, res[k])
    return res


def run_tree(base, wtargets, parts, reps, quick, cold_fn, log):
    """Runs the tree and dirops parts on the write targets named in
    TREE_TARGETS; returns (tree samples, dir samples, info), samples as
    {(step, target): [values]}."""
    env = os.environ.get
    tsamples, dsamples = {}, {}
    info = {}
    targets = [t for t in wtargets if t.name in TREE_TARGETS]
    tarball = None
    if "tree" in parts:
        srcs = sources() or default_sources(quick)
        tarball = os.path.join(base, "tree.tar")
        t0 = time.time()
        entries, data = make_tarball(tarball, srcs)
        info["tree"] = {"sources": srcs, "entries": entries, "data_bytes": data,
                        "tar_bytes": os.path.getsize(tarball)}
        log("tree: %d entries, %.0f MiB of file data from %s (tarred in %.0f s)" % (
            entries, data / MIB, " ".join(srcs), time.time() - t0))
    n = int(env("BENCH_DIR_N", "10000" if quick else "100000"))
    if "dirops" in parts:
        info["dir_n"] = n
    for rep in range(reps):
        for t in targets:
            if t.error:
                continue
            t0 = time.time()
            try:
                t.prepare()
                t.mount()
                if tarball:
                    def ls_(step, v, t=t):
                        tsamples.setdefault((step, t.name), []).append(v)
                        log("%d/%d %-12s %-11s %.2f s" % (rep + 1, reps, t.name, step, v))
                    tree_pass(t, tarball, cold_fn, ls_)
                nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
                if "dirops" in parts and t.name == "ceiling" and n + 1000 > nofile:
                    # passthrough_ll holds an O_PATH fd per inode it knows
                    info["dir_skipped"] = "passthrough_ll: %d entries need more file " \
                        "descriptors than RLIMIT_NOFILE (%d)" % (n, nofile)
                    log("ceiling: dirops skipped, %s" % info["dir_skipped"])
                elif "dirops" in parts:
                    def ld_(step, v, t=t):
                        dsamples.setdefault((step, t.name), []).append(v)
                        log("%d/%d %-12s %-11s %.0f /s" % (rep + 1, reps, t.name, step, v))
                    dir_pass(t, n, cold_fn, ld_)
            except Exception as e:      # reported, not fatal
                t.error = "tree: %s" % e
                log("%s (tree): %s" % (t.name, e))
            finally:
                try:
                    t.umount()
                except Exception as e:
                    t.error = t.error or str(e)
                try:
                    t.cleanup()
                except Exception as e:
                    t.check = "cleanup failed: %s" % e
                log("%d/%d %s: tree steps took %.0f s%s" % (
                    rep + 1, reps, t.name, time.time() - t0,
                    "; " + t.check if t.check else ""))
                if t.check and not t.check.startswith("fsck.f2fs: clean"):
                    t.error = t.error or "after the tree steps: %s" % t.check
    if tarball:
        try:
            os.unlink(tarball)
        except FileNotFoundError:
            pass
    return tsamples, dsamples, info


def report(targets, tsamples, dsamples, info, reps):
    """Markdown for the two tables and the rows (for JSON and plots)."""
    names = [t.name for t in targets if t.name in TREE_TARGETS]
    labels = {t.name: t.label for t in targets}
    out, trows, drows = [], [], []
    med = {k: statistics.median(v) for k, v in tsamples.items()}
    dmed = {k: statistics.median(v) for k, v in dsamples.items()}

    def r_(a, b):
        return a / b if a and b else None

    def f_(x, unit=""):
        if x is None:
            return "n/a"
        return ("%.0f" if x >= 100 else "%.2f" if x < 10 else "%.1f") % x + unit

    if tsamples:
        ti = info["tree"]
        hdr = ["step"] + [labels[n] for n in names] + \
            ["fuse2fs/uf2fs", "fuse2fs/wbc", "ceiling/uf2fs", "ceiling/wbc"]
        out += ["## Tree: untar, find, ls -lR, grep -r, rm -rf", "",
                "A tarball made at bench time from %s: %d entries, %.0f MiB of file data. "
                "Seconds, median of %d; each target on a fresh image (tmpfs-backed). "
                "untar = `tar -xf` until it exits; untar+sync adds syncfs(2). find, "
                "ls -lR and grep -r start cold (unmount, sync, drop caches, mount); rm -rf "
                "includes a syncfs. Ratios are speedups: fuse2fs/uf2fs > 1 means uf2fs "
                "(default mount) is faster than fuse2fs; ceiling/uf2fs is the share of the "
                "FUSE ceiling (passthrough_ll -o writeback) that uf2fs reaches; wbc = uf2fs "
                "-o writeback_cache." % (" ".join(ti["sources"]), ti["entries"],
                                         ti["data_bytes"] / MIB, reps),
                "", "| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        for s in TREE_STEPS:
            v = {n: med.get((s, n)) for n in names}
            row = {"step": s, "seconds": v,
                   "fuse2fs/uf2fs": r_(v.get("fuse2fs"), v.get("uf2fs")),
                   "fuse2fs/wbc": r_(v.get("fuse2fs"), v.get("uf2fs-wbc")),
                   "ceiling/uf2fs": r_(v.get("ceiling"), v.get("uf2fs")),
                   "ceiling/wbc": r_(v.get("ceiling"), v.get("uf2fs-wbc"))}
            trows.append(row)
            cells = [s] + [f_(v[n]) for n in names] + \
                [f_(row[k]) for k in ("fuse2fs/uf2fs", "fuse2fs/wbc", "ceiling/uf2fs",
                                      "ceiling/wbc")]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if dsamples:
        hdr = ["operation"] + [labels[n] for n in names] + \
            ["uf2fs/fuse2fs", "wbc/fuse2fs", "uf2fs/ceiling", "wbc/ceiling"]
        out += ["## One directory: %d entries" % info["dir_n"], "",
                "Operations per second, median of %d. create = open(O_CREAT|O_EXCL) + close "
                "of empty files then syncfs; stat = stat(2) of every name, cold; unlink = "
                "unlink(2) of every name then syncfs. Driven from Python (a few µs per call "
                "of its own, which caps tmpfs).%s" % (
                    reps, " Not measured: %s." % info["dir_skipped"]
                    if info.get("dir_skipped") else ""),
                "", "| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        for s in DIR_STEPS:
            v = {n: dmed.get((s, n)) for n in names}
            row = {"op": s, "ops_s": v,
                   "uf2fs/fuse2fs": r_(v.get("uf2fs"), v.get("fuse2fs")),
                   "wbc/fuse2fs": r_(v.get("uf2fs-wbc"), v.get("fuse2fs")),
                   "uf2fs/ceiling": r_(v.get("uf2fs"), v.get("ceiling")),
                   "wbc/ceiling": r_(v.get("uf2fs-wbc"), v.get("ceiling"))}
            drows.append(row)
            cells = [s] + [f_(v[n]) for n in names] + \
                [f_(row[k]) for k in ("uf2fs/fuse2fs", "wbc/fuse2fs", "uf2fs/ceiling",
                                      "wbc/ceiling")]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return out, trows, drows


def cleanup_dirs(*dirs):
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
