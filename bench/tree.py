# SPDX-License-Identifier: GPL-2.0
"""Everyday-use rows of `make bench` (bench.py parts "tree" and "dirops").

tree    a tarball made at bench time: a real source tree from local directories
        (BENCH_TREE_SRC, default /usr/share/doc /usr/lib/python3.* /usr/share/locale
        /usr/include; the smoke run takes /usr/share/doc) plus a generated Android
        /data tree (data/app/<pkg> with apks, libs and oat files, data/data/<pkg>
        with shared_prefs, databases, files, cache; BENCH_TREE_APPS packages,
        default 300, deterministic), about 50k entries, then on each target, on a
        fresh image:
          untar     tar -xf (GNU tar: 10 KiB records, a create + small writes
                    per file) until tar exits; "untar+sync" adds syncfs(2)
          find      cold: find MNT | wc -l
          du -s     cold
          stat      cold: lstat(2) of every path (from Python)
          ls -lR    cold: every directory listed, every entry stat'ed
          ls -lR warm  the same again on the same mount
          grep -r   cold: every file read (a pattern that matches nothing)
          rm -rf    the whole tree, then syncfs(2)
        Cold = unmount, sync, drop the kernel caches (root), mount. passthrough_ll
        needs an fd per inode the kernel knows, and RLIMIT_NOFILE cannot be raised
        in some containers: when the tree has more entries than that allows, the
        ceilings run each cold step once per shard (subtrees that fit, each on a
        fresh mount) and the shard times are summed.
git     a generated git checkout of BENCH_GIT_N files (default 100000; smoke
        5000), committed, tarred, untarred into each target, `git status` run
        once (the index learns the new stat data), then cold `git status`, then
        "git stat": cold lstat(2) of every path of the checkout (fresh mount).
        Skipped on the ceilings when N does not fit in RLIMIT_NOFILE.
dirops  one directory, N entries (BENCH_DIR_N, default 100000; smoke 10000):
          create    open(O_CREAT|O_EXCL) + close of N empty files
          stat      cold: stat(2) of every name (a LOOKUP each on FUSE)
          unlink    unlink(2) of every name, then syncfs(2)
        reported as operations per second.

Targets: tmpfs, libfuse's passthrough_ll -o writeback over tmpfs (the FUSE
ceiling) and with -o xattr (ceiling-x: every `ls -l` entry then costs the
GETXATTRs that uf2fs and fuse2fs answer too), fuse2fs on ext4, uf2fs -o rw (the
default), -o rw,writeback_cache, and the default on an encrypted tree (key
present) and a casefolded one. ceiling-hl, libfuse's path-based passthrough
example (high-level API), holds no fd per inode: it runs the git and dirops
parts, which passthrough_ll cannot at 100k files here, as a second ceiling
(it answers a LOOKUP with one lstat where passthrough_ll opens an O_PATH fd).
Repetitions outside, targets inside.
"""
import ctypes
import glob
import io
import os
import random
import resource
import shutil
import statistics
import subprocess
import tarfile
import time

MIB = 1 << 20
READ_STEPS = ["find", "du -s", "stat", "ls -lR", "ls -lR warm", "grep -r"]
TREE_STEPS = ["untar", "untar+sync"] + READ_STEPS + ["rm -rf", "git status", "git stat"]
DIR_STEPS = ["create", "stat", "unlink"]
TREE_TARGETS = ("tmpfs", "ceiling", "ceiling-x", "ceiling-hl", "fuse2fs", "uf2fs", "uf2fs-wbc",
                "uf2fs-enc", "uf2fs-cf", "uf2fs-cf-before")
CEILINGS = ("ceiling", "ceiling-x")
# The path-based ceiling exists for the rows passthrough_ll cannot hold in
# RLIMIT_NOFILE (git, dirops): it skips the tree part and every write row.
TREE_ONLY = ("ceiling-hl",)


def default_sources(quick):
    """About 37k entries and 680 MiB here; with the generated Android tree
    about 50k. passthrough_ll holds an O_PATH fd per inode it knows, and
    RLIMIT_NOFILE (20000 on the development machine, not raisable in its
    container) is less than that: the ceilings run the read steps on shards
    (shards())."""
    if quick:
        return ["/usr/share/doc"]
    return ["/usr/share/doc"] + sorted(glob.glob("/usr/lib/python3.*")) + \
        ["/usr/share/locale", "/usr/include"]


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
    total += sum(sz for _, sz in android_sizes(random.Random(21), apps(quick)))
    if not quick or "BENCH_GIT_N" in os.environ:     # the git checkout beside it
        total += git_n(quick) * 8192
    return total


def apps(quick):
    return int(os.environ.get("BENCH_TREE_APPS", "20" if quick else "300"))


def git_n(quick):
    return int(os.environ.get("BENCH_GIT_N", "5000" if quick else "100000"))


def android_sizes(rng, apps):
    """(path, size) of a generated Android /data tree: per package an app dir
    (base.apk, split apks, native libs, oat files) and a data dir (shared_prefs,
    databases with -journal/-wal, files, cache, code_cache, no_backup); sizes
    drawn log-uniformly between what such files weigh, from a fixed seed."""
    def lsize(lo, hi):
        return int(lo * (hi / lo) ** rng.random())
    out = []
    for i in range(apps):
        pkg = "com.%s.app%03d" % (rng.choice(["google", "android", "example", "vendor"]), i)
        app = "data/app/~~%08x==/%s-%08x==" % (rng.getrandbits(32), pkg, rng.getrandbits(32))
        out.append((app + "/base.apk", lsize(32 << 10, 1 << 20)))
        for s in range(rng.randrange(0, 4)):
            out.append((app + "/split_config.%d.apk" % s, lsize(8 << 10, 512 << 10)))
        for s in range(rng.randrange(0, 6)):
            out.append((app + "/lib/arm64/lib%s%d.so" % (pkg.split(".")[1], s),
                        lsize(8 << 10, 256 << 10)))
        out.append((app + "/oat/arm64/base.odex", lsize(4 << 10, 128 << 10)))
        out.append((app + "/oat/arm64/base.vdex", lsize(4 << 10, 256 << 10)))
        dd = "data/data/" + pkg
        for s in range(rng.randrange(1, 12)):
            out.append((dd + "/shared_prefs/%s_pref%d.xml" % (pkg, s), lsize(100, 16 << 10)))
        for s in range(rng.randrange(0, 5)):
            db = dd + "/databases/db%d.db" % s
            out.append((db, lsize(8 << 10, 512 << 10)))
            out.append((db + ("-journal" if rng.random() < 0.5 else "-wal"),
                        lsize(1, 64 << 10)))
        for s in range(rng.randrange(0, 15)):
            out.append((dd + "/files/f%02d/%d.bin" % (s % 3, s), lsize(16, 256 << 10)))
        for s in range(rng.randrange(0, 25)):
            out.append((dd + "/cache/c%03d" % s, lsize(64, 128 << 10)))
        out.append((dd + "/code_cache/.keep", 0))
        out.append((dd + "/no_backup/.keep", 0))
    return out


def add_generated(tf, items, rng):
    """Adds (path, size) files and their directories to a tarfile; content is
    half random, half zeros (roughly what compresses in an app tree)."""
    seen = set()
    entries, data, names = 0, 0, []
    pool = rng.randbytes(1 << 20)
    for path, size in items:
        parts = path.split("/")
        for k in range(1, len(parts)):
            d = "/".join(parts[:k])
            if d not in seen:
                seen.add(d)
                ti = tarfile.TarInfo(d)
                ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o771, 1700000000
                tf.addfile(ti)
                entries += 1
                names.append(d)
        ti = tarfile.TarInfo(path)
        ti.size, ti.mode, ti.mtime = size, 0o660, 1700000000 + entries
        half = size // 2
        off = rng.randrange(0, len(pool) - min(half, len(pool)) + 1)
        body = (pool * (1 + half // len(pool)))[off:off + half] if half else b""
        tf.addfile(ti, io.BytesIO(body + bytes(size - len(body))))
        entries += 1
        names.append(path)
        data += size
    return entries, data, names


def make_tarball(path, sources, apps=0):
    """A GNU tar of the sources (symlinks kept, unreadable files skipped) and of
    a generated Android /data tree of `apps` packages; returns (entries, bytes
    of file data, member names)."""
    entries, data, names = 0, 0, []
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
                        names.append(ti.name)
                    except OSError:
                        continue
        if apps:
            rng = random.Random(21)
            items = android_sizes(rng, apps)
            e, d, n = add_generated(tf, items, rng)
            entries += e
            data += d
            names += n
    return entries, data, names


def shards(names, limit):
    """Groups of subtrees (relative paths), each group of at most `limit`
    entries, that together hold the tree's entries but those directly in a
    directory too large to be one subtree (returned as a count). Subtrees are
    packed in tree order, so a group is a few neighbours."""
    count = {}
    kids = {}
    for n in names:
        parts = n.rstrip("/").split("/")
        for k in range(1, len(parts) + 1):
            count["/".join(parts[:k])] = count.get("/".join(parts[:k]), 0) + 1
        for k in range(1, len(parts)):
            kids.setdefault("/".join(parts[:k]), set()).add("/".join(parts[:k + 1]))
    subtrees, left = [], 0

    def split(d):
        nonlocal left
        if count[d] <= limit:
            subtrees.append(d)
            return
        left += 1
        for c in sorted(kids.get(d, ())):
            if c in kids:
                split(c)
            else:
                left += 1
    for top in sorted({n.split("/")[0] for n in names}):
        split(top)
    groups, cur, size = [], [], 0
    for d in subtrees:
        if cur and size + count[d] > limit:
            groups.append(cur)
            cur, size = [], 0
        cur.append(d)
        size += count[d]
    if cur:
        groups.append(cur)
    return groups, left


def make_git_tarball(base, path, n):
    """A git checkout of n small text files in directories of about 40 (three
    levels), committed, tarred with its .git; returns seconds taken."""
    t0 = time.time()
    rng = random.Random(2121)
    src = os.path.join(base, "gitsrc")
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    words = [("w%x" % rng.getrandbits(20)) for _ in range(512)]
    for i in range(n):
        d = os.path.join(src, "m%02d" % (i // 4000 % 100), "p%03d" % (i // 40 % 100))
        if i % 40 == 0:
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%06d.c" % i), "w") as f:
            f.write(" ".join(rng.choice(words) for _ in range(rng.randrange(8, 400))) + "\n")
    # no automatic gc: one in the background would change .git under tar
    g = ["git", "-C", src, "-c", "user.name=bench", "-c", "user.email=bench@localhost",
         "-c", "gc.auto=0", "-c", "maintenance.auto=false"]
    # packed, as a clone is: not a loose object file per blob
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench tree"],
                ["repack", "-adq"], ["prune-packed"]):
        subprocess.run(g + cmd, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["tar", "-cf", path, "-C", src, "."], check=True)
    shutil.rmtree(src, ignore_errors=True)
    return time.time() - t0


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


def stat_all(paths):
    t0 = time.perf_counter()
    for p in paths:
        os.lstat(p)
    return time.perf_counter() - t0


def read_steps(top, roots, names, cold, t):
    """The cold read steps on each root under top (the whole tree, or the
    ceiling's shards, one fresh mount each); returns {step: summed seconds}."""
    res = dict.fromkeys(READ_STEPS, 0.0)
    for group in roots:
        ds = [os.path.join(top, r) if r else top for r in group]
        pres = tuple(r + "/" for r in group if r)
        sub = [os.path.join(top, n) for n in names if not pres or n in group or
               n.startswith(pres)]
        q = " ".join("'%s'" % d for d in ds)
        cold(t)
        res["find"] += sh_timed("find %s | wc -l >/dev/null" % q, "find")
        cold(t)
        res["du -s"] += sh_timed("du -s %s >/dev/null" % q, "du -s")
        cold(t)
        res["stat"] += stat_all(sub)
        cold(t)
        res["ls -lR"] += sh_timed("ls -lR %s >/dev/null" % q, "ls -lR")
        res["ls -lR warm"] += sh_timed("ls -lR %s >/dev/null" % q, "ls -lR")
        cold(t)
        # grep exits 1 when nothing matched, which is what is asked for
        res["grep -r"] += sh_timed("grep -r -q 'uf2fs-bench-no-such-string-9f3a' %s" % q,
                                   "grep -r")
    return res


def make_top(t, path):
    if getattr(t, "make_dir", None):
        t.make_dir(path)
    else:
        os.makedirs(path)


def tree_pass(t, tarball, names, roots, cold, log_sample):
    """The tree steps once on a mounted target t; returns {step: seconds}."""
    top = os.path.join(t.path, "tree")
    make_top(t, top)
    res = {"untar": 0.0, "untar+sync": 0.0, "rm -rf": 0.0}
    # Sharded (a ceiling with too few fds): each group untarred from a fresh
    # mount, then what lies outside the groups (the directories above them
    # and the files directly in them); timed in sum.
    sharded = roots != [[""]]
    rest = None
    if sharded:
        rest = os.path.join(os.path.dirname(tarball), "outside.list")
        with open(rest, "w") as f:
            f.writelines(n + "\n" for n in names
                         if not any(n == r or n.startswith(r + "/") for g in roots for r in g))
    for part in (roots + [None] if sharded else [None]):
        if sharded and part is not None:
            args = list(part)
        elif sharded:
            args = ["--no-recursion", "-T", rest]
        else:
            args = []
        dt, r = timed(["tar", "-xf", tarball, "-C", top, "--no-same-owner"] + args)
        if r.returncode != 0:
            raise RuntimeError("tar failed: %s" % r.stderr.strip()[-300:])
        t0 = time.perf_counter()
        syncfs(t.path)
        res["untar"] += dt
        res["untar+sync"] += dt + time.perf_counter() - t0
        if sharded:
            cold(t)
    res.update(read_steps(top, roots, names, cold, t))
    for part in (roots + [None] if sharded else [None]):
        cold(t)
        paths = [os.path.join(top, p) for p in part] if part else [top]
        t0 = time.perf_counter()
        r = subprocess.run(["rm", "-rf"] + paths, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError("rm -rf failed: %s" % r.stderr.strip()[-300:])
        syncfs(t.path)
        res["rm -rf"] += time.perf_counter() - t0
    for k in TREE_STEPS:
        if k in res:
            log_sample(k, res[k])
    return res


def git_pass(t, gittar, cold, log_sample):
    """Cold `git status` of the generated checkout (its index refreshed by a
    first, untimed status on this target), then the checkout removed."""
    top = os.path.join(t.path, "git")
    make_top(t, top)
    dt, r = timed(["tar", "-xf", gittar, "-C", top, "--no-same-owner"])
    if r.returncode != 0:
        raise RuntimeError("tar (git) failed: %s" % r.stderr.strip()[-300:])
    g = "git -c safe.directory='*' -C '%s' status --porcelain >/dev/null" % top
    sh_timed(g, "git status")
    syncfs(t.path)
    cold(t)
    log_sample("git status", sh_timed(g, "git status"))
    with tarfile.open(gittar) as tf:
        paths = [os.path.join(top, n) for n in tf.getnames()]
    cold(t)
    log_sample("git stat", stat_all(paths))
    subprocess.run(["rm", "-rf", top], check=True)
    syncfs(t.path)


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
    tarball = gittar = None
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    # passthrough_ll's fds beside the tree's: what one mount may see at once
    fits = nofile - 2000
    names, roots = [], {}
    if "tree" in parts:
        srcs = sources() or default_sources(quick)
        tarball = os.path.join(base, "tree.tar")
        t0 = time.time()
        entries, data, names = make_tarball(tarball, srcs, apps(quick))
        info["tree"] = {"sources": srcs, "apps": apps(quick), "entries": entries,
                        "data_bytes": data, "tar_bytes": os.path.getsize(tarball)}
        log("tree: %d entries, %.0f MiB of file data from %s and %d generated Android "
            "packages (tarred in %.0f s)" % (entries, data / MIB, " ".join(srcs),
                                             apps(quick), time.time() - t0))
        roots = {}
        if entries > fits:
            sh, left = shards(names, fits)
            roots["shards"] = sh
            info["tree"]["ceiling_shards"] = {"shards": len(sh), "limit": fits,
                                              "entries_outside": left}
            log("tree: the ceilings run the read steps on %d shards of <= %d entries "
                "(RLIMIT_NOFILE %d); %d entries lie outside every shard" % (
                    len(sh), fits, nofile, left))
    gn = git_n(quick)
    if "git" in parts:
        gittar = os.path.join(base, "git.tar")
        dt = make_git_tarball(base, gittar, gn)
        info["git"] = {"files": gn, "tar_bytes": os.path.getsize(gittar)}
        log("git: a checkout of %d files, made and tarred in %.0f s" % (gn, dt))
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
                def ls_(step, v, t=t):
                    tsamples.setdefault((step, t.name), []).append(v)
                    log("%d/%d %-12s %-11s %.2f s" % (rep + 1, reps, t.name, step, v))
                if tarball and t.name not in TREE_ONLY:
                    r_ = roots.get("shards", [[""]]) if t.name in CEILINGS else [[""]]
                    tree_pass(t, tarball, names, r_, cold_fn, ls_)
                if gittar and t.name in CEILINGS and gn > fits:
                    info["git_skipped"] = "passthrough_ll: %d files need more file " \
                        "descriptors than RLIMIT_NOFILE (%d)" % (gn, nofile)
                elif gittar:
                    git_pass(t, gittar, cold_fn, ls_)
                if "dirops" in parts and t.name in CEILINGS and n + 1000 > nofile:
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
    for p in (tarball, gittar):
        try:
            if p:
                os.unlink(p)
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
        ti = info.get("tree") or {"sources": [], "apps": 0, "entries": 0, "data_bytes": 0}
        # speedups: a/b > 1 means b is faster; shares of the ceilings and of plain uf2fs
        ratios = [(k, a, b) for k, a, b in (
            ("fuse2fs/uf2fs", "fuse2fs", "uf2fs"), ("ceiling/uf2fs", "ceiling", "uf2fs"),
            ("ceiling-x/uf2fs", "ceiling-x", "uf2fs"), ("ceiling-hl/uf2fs", "ceiling-hl", "uf2fs"),
            ("ceiling/wbc", "ceiling", "uf2fs-wbc"),
            ("uf2fs/enc", "uf2fs", "uf2fs-enc"), ("uf2fs/cf", "uf2fs", "uf2fs-cf"),
            ("uf2fs/cf-before", "uf2fs", "uf2fs-cf-before"))
            if a in names and b in names]
        hdr = ["step"] + [labels[n] for n in names] + [k for k, _, _ in ratios]
        sh = ti.get("ceiling_shards")
        out += ["## Tree: untar, find, du, stat, ls -lR, grep -r, rm -rf; git status", "",
                "A tarball made at bench time from %s and %d generated Android /data "
                "packages: %d entries, %.0f MiB of file data. Seconds, median of %d; each "
                "target on a fresh image (tmpfs-backed). untar = `tar -xf` until it exits; "
                "untar+sync adds syncfs(2). find, du -s, stat (lstat of every path), ls -lR "
                "and grep -r start cold (unmount, sync, drop caches, mount); ls -lR warm is "
                "a second ls -lR on the same mount; rm -rf includes a syncfs. git status: "
                "cold, on a generated checkout of %s files; git stat: lstat of its every "
                "path, cold. Ratios are speedups: "
                "fuse2fs/uf2fs > 1 means uf2fs (default mount) is faster than fuse2fs; "
                "ceiling/uf2fs is the share of the FUSE ceiling (passthrough_ll -o "
                "writeback) that uf2fs reaches, ceiling-x/uf2fs the same against "
                "passthrough_ll with xattrs (which answers the GETXATTRs of `ls -l` that "
                "the plain one refuses once for the whole mount), ceiling-hl/uf2fs against "
                "libfuse's path-based passthrough (high-level API, no fd per inode: git "
                "and dirops rows; a LOOKUP costs it one lstat, no O_PATH open); uf2fs/enc and uf2fs/cf "
                "are the encrypted and casefolded trees as a share of the plain one; "
                "wbc = uf2fs -o writeback_cache.%s%s" % (
                    " ".join(ti["sources"]), ti.get("apps", 0), ti["entries"],
                    ti["data_bytes"] / MIB, reps, info.get("git", {}).get("files", "n/a"),
                    (" passthrough_ll keeps an fd per inode the kernel holds, more than "
                     "RLIMIT_NOFILE allows for this tree: the ceilings ran untar, the read "
                     "steps and rm -rf on %d shards of at most %d entries, each from a fresh "
                     "mount, times summed; the %d entries outside them (directories above "
                     "the shards, files directly in those) were untarred and removed but "
                     "not read." % (
                         sh["shards"], sh["limit"], sh["entries_outside"])) if sh else "",
                    (" git status not on the ceilings: %s." % info["git_skipped"])
                    if info.get("git_skipped") else ""),
                "", "| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        for s in TREE_STEPS:
            v = {n: med.get((s, n)) for n in names}
            if not any(v.values()):
                continue
            row = {"step": s, "seconds": v}
            for k, a, b in ratios:
                row[k] = r_(v.get(a), v.get(b))
            trows.append(row)
            cells = [s] + [f_(v[n]) for n in names] + [f_(row[k]) for k, _, _ in ratios]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if dsamples:
        dcols = ["uf2fs/fuse2fs", "wbc/fuse2fs", "uf2fs/ceiling", "wbc/ceiling",
                 "uf2fs/ceiling-hl"]
        hdr = ["operation"] + [labels[n] for n in names] + dcols
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
                   "wbc/ceiling": r_(v.get("uf2fs-wbc"), v.get("ceiling")),
                   "uf2fs/ceiling-hl": r_(v.get("uf2fs"), v.get("ceiling-hl"))}
            drows.append(row)
            cells = [s] + [f_(v[n]) for n in names] + [f_(row[k]) for k in dcols]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return out, trows, drows


def cleanup_dirs(*dirs):
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
