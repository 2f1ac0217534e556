#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare two directory trees entry by entry. Python stdlib only.

  compare-tree.py SRC DST [options]

Compares, for every path in either tree: presence, file type, permission bits
(with setuid/setgid/sticky), owner, size, content (sha256, streamed), mtime,
symlink target, hard-link grouping, device numbers and xattrs. Prints every
difference as `PATH: FIELD: src=... dst=...` and exits 1 if there is any
(2 on a usage error, 0 when the trees match).

Options:
  --no-owner             do not compare uid/gid
  --no-mode              do not compare permission bits
  --no-times             do not compare mtimes
  --mtime-granularity N  compare mtimes truncated to N ns (sload.f2fs keeps
                         seconds only: 1000000000; "1s" also accepted)
  --no-xattr             do not compare xattrs
  --xattr-prefix P       compare only xattrs whose names start with P (repeatable)
  --no-acl               ignore system.posix_acl_* xattrs
  --no-special           skip fifos, sockets and device nodes on both sides
  --no-hardlinks         do not compare hard-link grouping or link counts
  --no-root              do not compare the attributes of the top directories
  --no-dir-times         do not compare directory mtimes
  --ignore PATH          skip this relative path and everything under it (repeatable)
  --id-bits N            compare uid/gid modulo 2^N (sload.f2fs 1.15 keeps 16 bits)
  --mtime-u32            compare mtime seconds modulo 2^32 (sload.f2fs 1.15 stores a
                         u32: times before 1970 or after 2106 wrap)
  --sload                what sload.f2fs 1.15 promises: --mtime-granularity 1s
                         --id-bits 16 --mtime-u32 --no-special --xattr-prefix
                         security.selinux (it copies no other xattr)
  --content-only         only presence, type, size and content
  --max-diffs N          stop printing after N differences (default 200)
  --quiet                print only the summary line
"""
import argparse
import hashlib
import os
import stat
import sys

CHUNK = 1 << 20


def ftype(mode):
    for name, test in (("dir", stat.S_ISDIR), ("file", stat.S_ISREG), ("symlink", stat.S_ISLNK),
                       ("fifo", stat.S_ISFIFO), ("socket", stat.S_ISSOCK),
                       ("chardev", stat.S_ISCHR), ("blockdev", stat.S_ISBLK)):
        if test(mode):
            return name
    return "unknown"


SPECIAL = {"fifo", "socket", "chardev", "blockdev"}


def walk(root, ignore):
    """{relpath: lstat} for everything under root, root itself as '.'"""
    out = {}
    stack = ["."]
    while stack:
        rel = stack.pop()
        full = os.path.join(root, rel) if rel != "." else root
        try:
            s = os.lstat(full)
        except OSError as e:
            out[rel] = e
            continue
        out[rel] = s
        if stat.S_ISDIR(s.st_mode):
            try:
                names = os.listdir(full)
            except OSError as e:
                out[rel + "/<listdir>"] = e
                continue
            for n in names:
                r = n if rel == "." else rel + "/" + n
                if r in ignore or any(r.startswith(i + "/") for i in ignore):
                    continue
                stack.append(r)
    return out


def sha256(path):
    h = hashlib.sha256()
    n = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            b = f.read(CHUNK)
            if not b:
                break
            h.update(b)
            n += len(b)
    return h.hexdigest(), n


def xattrs(path, args):
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError as e:
        return {"<listxattr error>": str(e).encode()}
    res = {}
    for n in names:
        if args.xattr_prefix and not any(n.startswith(p) for p in args.xattr_prefix):
            continue
        if args.no_acl and n.startswith("system.posix_acl_"):
            continue
        try:
            res[n] = os.getxattr(path, n, follow_symlinks=False)
        except OSError as e:
            res[n] = ("<getxattr error: %s>" % e.strerror).encode()
    return res


def show(v, limit=60):
    if isinstance(v, bytes):
        t = v.hex() if any(c < 32 or c > 126 for c in v) else v.decode()
        return repr(t if len(t) <= limit else t[:limit] + "...(%d bytes)" % len(v))
    return repr(v)


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--no-owner", action="store_true")
    ap.add_argument("--no-mode", action="store_true")
    ap.add_argument("--no-times", action="store_true")
    ap.add_argument("--mtime-granularity", default="1")
    ap.add_argument("--no-xattr", action="store_true")
    ap.add_argument("--xattr-prefix", action="append", default=[])
    ap.add_argument("--no-acl", action="store_true")
    ap.add_argument("--no-special", action="store_true")
    ap.add_argument("--no-hardlinks", action="store_true")
    ap.add_argument("--no-root", action="store_true")
    ap.add_argument("--no-dir-times", action="store_true")
    ap.add_argument("--ignore", action="append", default=[])
    ap.add_argument("--content-only", action="store_true")
    ap.add_argument("--id-bits", type=int, default=32)
    ap.add_argument("--mtime-u32", action="store_true")
    ap.add_argument("--sload", action="store_true")
    ap.add_argument("--max-diffs", type=int, default=200)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    if args.sload:
        args.mtime_granularity = "1s"
        args.id_bits = min(args.id_bits, 16)
        args.mtime_u32 = True
        args.no_special = True
        if not args.no_xattr and not args.xattr_prefix:
            args.xattr_prefix = ["security.selinux"]
    idmask = (1 << args.id_bits) - 1
    g = args.mtime_granularity
    gran = {"1s": 10**9, "1ms": 10**6, "1us": 10**3, "1ns": 1}.get(g) or int(g)
    if args.content_only:
        args.no_owner = args.no_mode = args.no_times = args.no_xattr = True
        args.no_hardlinks = True
    for d in (args.src, args.dst):
        if not os.path.isdir(d):
            print("compare-tree: %s is not a directory" % d, file=sys.stderr)
            return 2
    ignore = {os.path.normpath(i).lstrip("/") for i in args.ignore}

    diffs = []

    def diff(path, field, a, b):
        diffs.append((path, field, a, b))
        if not args.quiet and len(diffs) <= args.max_diffs:
            print("%s: %s: src=%s dst=%s" % (path, field, show(a), show(b)), flush=True)

    S = walk(args.src, ignore)
    D = walk(args.dst, ignore)
    nfiles = nbytes = 0
    src_groups, dst_groups = {}, {}
    for rel in sorted(set(S) | set(D)):
        s, d = S.get(rel), D.get(rel)
        if isinstance(s, os.stat_result) and args.no_special and ftype(s.st_mode) in SPECIAL:
            continue
        if isinstance(d, os.stat_result) and args.no_special and ftype(d.st_mode) in SPECIAL:
            continue
        if s is None or d is None:
            diff(rel, "presence", "present" if s is not None else "missing",
                 "present" if d is not None else "missing")
            continue
        if isinstance(s, OSError) or isinstance(d, OSError):
            diff(rel, "lstat", str(s) if isinstance(s, OSError) else "ok",
                 str(d) if isinstance(d, OSError) else "ok")
            continue
        ts, td = ftype(s.st_mode), ftype(d.st_mode)
        if ts != td:
            diff(rel, "type", ts, td)
            continue
        sp = os.path.join(args.src, rel)
        dp = os.path.join(args.dst, rel)
        is_root = rel == "."
        attrs = not (is_root and args.no_root)
        if attrs and not args.no_mode and stat.S_IMODE(s.st_mode) != stat.S_IMODE(d.st_mode):
            diff(rel, "mode", oct(stat.S_IMODE(s.st_mode)), oct(stat.S_IMODE(d.st_mode)))
        if attrs and not args.no_owner and \
                (s.st_uid & idmask, s.st_gid & idmask) != (d.st_uid & idmask, d.st_gid & idmask):
            diff(rel, "owner", "%d:%d" % (s.st_uid, s.st_gid), "%d:%d" % (d.st_uid, d.st_gid))
        if attrs and not args.no_times and not (ts == "dir" and args.no_dir_times):
            ms, md = s.st_mtime_ns // gran * gran, d.st_mtime_ns
            if gran > 1:
                md = md // gran * gran
            if args.mtime_u32:
                sec, rem = divmod(ms, 10**9)
                ms = (sec % (1 << 32)) * 10**9 + rem
            if ms != md:
                diff(rel, "mtime_ns", s.st_mtime_ns, d.st_mtime_ns)
        if ts == "file":
            nfiles += 1
            if s.st_size != d.st_size:
                diff(rel, "size", s.st_size, d.st_size)
            try:
                hs, _ = sha256(sp)
            except OSError as e:
                hs = "<read error: %s>" % e.strerror
            try:
                hd, n = sha256(dp)
                nbytes += n
            except OSError as e:
                hd = "<read error: %s>" % e.strerror
            if hs != hd:
                diff(rel, "content", hs, hd)
            if not args.no_hardlinks:
                src_groups.setdefault((s.st_dev, s.st_ino), []).append(rel)
                dst_groups.setdefault((d.st_dev, d.st_ino), []).append(rel)
                if s.st_nlink != d.st_nlink:
                    diff(rel, "nlink", s.st_nlink, d.st_nlink)
        elif ts == "symlink":
            try:
                ls, ld = os.readlink(sp), os.readlink(dp)
            except OSError as e:
                diff(rel, "readlink", "", str(e))
            else:
                if ls != ld:
                    diff(rel, "symlink target", ls, ld)
                if s.st_size != d.st_size:
                    diff(rel, "size", s.st_size, d.st_size)
        elif ts in ("chardev", "blockdev"):
            if s.st_rdev != d.st_rdev:
                diff(rel, "rdev", "%d,%d" % (os.major(s.st_rdev), os.minor(s.st_rdev)),
                     "%d,%d" % (os.major(d.st_rdev), os.minor(d.st_rdev)))
        if attrs and not args.no_xattr:
            xs, xd = xattrs(sp, args), xattrs(dp, args)
            for n in sorted(set(xs) | set(xd)):
                if xs.get(n) != xd.get(n):
                    diff(rel, "xattr " + n, xs.get(n, "<absent>"), xd.get(n, "<absent>"))
    if not args.no_hardlinks:
        sg = sorted(sorted(v) for v in src_groups.values() if len(v) > 1)
        dg = sorted(sorted(v) for v in dst_groups.values() if len(v) > 1)
        if sg != dg:
            for grp in sg:
                if grp not in dg:
                    diff(grp[0], "hard-link group", grp, "not linked the same way")
            for grp in dg:
                if grp not in sg:
                    diff(grp[0], "hard-link group", "not linked the same way", grp)
    if len(diffs) > args.max_diffs and not args.quiet:
        print("... %d more differences" % (len(diffs) - args.max_diffs))
    print("compare-tree: %d entries, %d files, %.1f MiB read from %s: %s" %
          (len(set(S) | set(D)), nfiles, nbytes / (1 << 20), args.dst,
           "%d differences" % len(diffs) if diffs else "identical"))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
