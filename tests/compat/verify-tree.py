#!/usr/bin/env python3
"""Compare a directory tree with a manifest written in the compat guest.

    python3 tests/compat/verify-tree.py [options] MANIFEST XATTRS ROOT
    python3 tests/compat/verify-tree.py [options] MANIFEST XATTRS --manifest M2 X2

ROOT is a uf2fs FUSE mount or a `uf2fs get` extraction. With --manifest the
other side is a second manifest (e.g. the guest's view after recovery).
Prints one line per mismatch and exits 1 if there is any, 0 otherwise.

MANIFEST (tests/compat/guest-helper.c writes it) has one tab-separated line per
path, root first as ".":

    path type mode uid gid size mtime_sec sha256|target|- nlink rdev ino mtime_nsec flags

  type   file dir symlink fifo chr blk sock
  mode   permission bits in octal (07777)
  sha256 for regular files; the link target for symlinks; "-" otherwise
  rdev   MAJOR:MINOR for chr and blk, else "-"
  ino    the guest's inode number: paths sharing it must share an inode in
         ROOT, and no others may (hard links). Compared as a number only
         with --ino.
  flags  FS_IOC_GETFLAGS in hex, or "-"; compared only with --flags
Columns 11-13 are optional. A field "*" is not compared. In paths and
link targets, \\xHH stands for the byte HH.

XATTRS: path, name, hex value, tab-separated; every xattr of every path.
Python 3 standard library only.
"""
import argparse
import collections
import fcntl
import hashlib
import os
import stat
import struct
import sys

FIELDS = ["type", "mode", "uid", "gid", "size", "mtime", "data", "nlink", "rdev", "ino",
          "nsec", "flags"]
FS_IOC_GETFLAGS = 0x80086601
# User-visible inode flags worth comparing: compr, immutable, append, nodump,
# noatime, nocomp, verity. (Inline-data, extent etc. are layout, not content.)
FLAG_MASK = 0x00000004 | 0x10 | 0x20 | 0x40 | 0x80 | 0x400 | 0x00100000


def unescape(b):
    out = bytearray()
    i = 0
    while i < len(b):
        if b[i:i + 2] == b"\\x" and i + 4 <= len(b):
            out.append(int(b[i + 2:i + 4], 16))
            i += 4
        else:
            out.append(b[i])
            i += 1
    return bytes(out)


def show(p):
    return p.decode("utf-8", "backslashreplace").replace("\t", "\\t").replace("\n", "\\n")


Entry = collections.namedtuple("Entry", ["path"] + FIELDS)


def read_manifest(path):
    entries = collections.OrderedDict()
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip(b"\n")
            if not line:
                continue
            cols = line.split(b"\t")
            if len(cols) < 10:
                sys.exit("%s:%d: %d columns, need at least 10" % (path, n, len(cols)))
            cols += [b"*"] * (13 - len(cols))
            p = unescape(cols[0])
            vals = []
            for i, c in enumerate(cols[1:13]):
                if FIELDS[i] == "data" and cols[1] == b"symlink" and c != b"*":
                    vals.append(unescape(c))
                else:
                    vals.append(c.decode())
            entries[p] = Entry(p, *vals)
    return entries


def read_xattrs(path):
    x = collections.defaultdict(dict)
    with open(path, "rb") as f:
        for line in f:
            line = line.rstrip(b"\n")
            if not line:
                continue
            p, name, val = line.split(b"\t")
            x[unescape(p)][name.decode()] = bytes.fromhex(val.decode())
    return x


def sha256_file(path):
    """sha256 of a file; holes (SEEK_DATA/SEEK_HOLE) are hashed without reading."""
    h = hashlib.sha256()
    zero = bytes(1 << 20)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        size = os.fstat(fd).st_size
        pos = 0
        while pos < size:
            try:
                data = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:
                data = size  # ENXIO: only a hole is left
            data = min(data, size)
            while pos < data:
                n = min(len(zero), data - pos)
                h.update(zero[:n])
                pos += n
            if pos >= size:
                break
            try:
                hole = min(os.lseek(fd, pos, os.SEEK_HOLE), size)
            except OSError:
                hole = size
            os.lseek(fd, pos, os.SEEK_SET)
            while pos < hole:
                b = os.read(fd, min(1 << 20, hole - pos))
                if not b:
                    raise OSError("short read at %d of %d" % (pos, size))
                h.update(b)
                pos += len(b)
    finally:
        os.close(fd)
    return h.hexdigest()


def type_of(m):
    for t, f in (("file", stat.S_ISREG), ("dir", stat.S_ISDIR), ("symlink", stat.S_ISLNK),
                 ("fifo", stat.S_ISFIFO), ("chr", stat.S_ISCHR), ("blk", stat.S_ISBLK),
                 ("sock", stat.S_ISSOCK)):
        if f(m):
            return t
    return "?"


def scan_tree(root, want_flags, errors):
    """Read ROOT into the same shape as a manifest: (entries, xattrs, inode keys)."""
    entries = collections.OrderedDict()
    xattrs = {}
    inode = {}

    def visit(rel, full):
        try:
            st = os.lstat(full)
        except OSError as e:
            errors.append("%s: lstat: %s" % (show(rel), e))
            return
        t = type_of(st.st_mode)
        data = "-"
        try:
            if t == "file":
                data = sha256_file(full)
            elif t == "symlink":
                data = os.readlink(full)
        except OSError as e:
            errors.append("%s: read: %s" % (show(rel), e))
            data = "<unreadable>"
        rdev = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev)) if t in ("chr", "blk") else "-"
        flags = "-"
        if want_flags and t in ("file", "dir"):
            try:
                fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                try:
                    buf = fcntl.ioctl(fd, FS_IOC_GETFLAGS, b"\0" * 8)
                    flags = "%x" % struct.unpack("<I", buf[:4])[0]
                finally:
                    os.close(fd)
            except OSError as e:
                flags = "<%s>" % e.strerror
        entries[rel] = Entry(rel, t, "%04o" % stat.S_IMODE(st.st_mode), str(st.st_uid),
                             str(st.st_gid), str(st.st_size), str(st.st_mtime_ns // 10**9),
                             data, str(st.st_nlink), rdev, str(st.st_ino),
                             str(st.st_mtime_ns % 10**9), flags)
        inode[rel] = (st.st_dev, st.st_ino)
        try:
            names = os.listxattr(full, follow_symlinks=False)
            xattrs[rel] = {n: os.getxattr(full, n, follow_symlinks=False) for n in names}
        except OSError as e:
            xattrs[rel] = e
        if t == "dir":
            try:
                names = sorted(os.listdir(full))
            except OSError as e:
                errors.append("%s: readdir: %s" % (show(rel), e))
                return
            for n in names:
                visit(n if rel == b"." else rel + b"/" + n, os.path.join(full, n))

    visit(b".", os.fsencode(root))
    return entries, xattrs, inode


def compare(exp, expx, got, gotx, got_inode, opts):
    errs = []
    ignore = set(opts.ignore)
    for p, e in exp.items():
        g = got.get(p)
        if g is None:
            errs.append("%s: missing (%s)" % (show(p), e.type))
            continue
        for f in FIELDS:
            ev, gv = getattr(e, f), getattr(g, f)
            if ev == "*" or gv == "*" or f in ignore or f == "ino":
                continue
            if f == "flags":
                if not opts.flags or ev == "-" or gv == "-":
                    continue
                if gv.startswith("<"):
                    errs.append("%s: flags: expected %s, got %s" % (show(p), ev, gv))
                    continue
                ev_m, gv_m = int(ev, 16) & FLAG_MASK, int(gv, 16) & FLAG_MASK
                if ev_m != gv_m:
                    errs.append("%s: flags: expected 0x%x, got 0x%x" % (show(p), ev_m, gv_m))
                continue
            if e.type == "dir" and f == "size" and (opts.extract or "dirsize" in ignore):
                continue
            # recovery stamps the directories it re-links into with its own clock
            if e.type == "dir" and f in ("mtime", "nsec") and "dirtime" in ignore:
                continue
            if e.type == "dir" and f == "nlink" and "dirnlink" in ignore:
                continue
            if e.type == "symlink" and f == "mode":
                continue
            if p == b"." and opts.ignore_root and f in ("mode", "uid", "gid", "mtime", "nsec"):
                continue
            if f == "nsec" and opts.no_nsec:
                continue
            if ev != gv:
                if isinstance(ev, bytes) or isinstance(gv, bytes):
                    ev, gv = (show(v) if isinstance(v, bytes) else v for v in (ev, gv))
                    if len(ev) > 80 or len(gv) > 80:
                        ev, gv = "%s... (%d bytes)" % (ev[:40], len(ev)), \
                                 "%s... (%d bytes)" % (gv[:40], len(gv))
                errs.append("%s: %s: expected %s, got %s" % (show(p), f, ev, gv))
        if opts.ino and e.ino not in ("*", "-") and e.ino != g.ino:
            errs.append("%s: ino: expected %s, got %s" % (show(p), e.ino, g.ino))
        if not opts.no_xattrs:
            want = expx.get(p, {})
            have = gotx.get(p, {})
            if isinstance(have, OSError):
                if want:
                    errs.append("%s: listxattr: %s" % (show(p), have))
                continue
            have = {n: v for n, v in have.items()
                    if not any(n.startswith(s) for s in opts.skip_xattr)}
            want = {n: v for n, v in want.items()
                    if not any(n.startswith(s) for s in opts.skip_xattr)}
            for n in sorted(set(want) | set(have)):
                if n not in have:
                    errs.append("%s: xattr %s missing" % (show(p), n))
                elif n not in want:
                    errs.append("%s: xattr %s unexpected (%s)" % (show(p), n, have[n].hex()[:64]))
                elif want[n] != have[n]:
                    errs.append("%s: xattr %s: expected %s, got %s" %
                                (show(p), n, want[n].hex()[:64], have[n].hex()[:64]))
    for p, g in got.items():
        if p not in exp:
            errs.append("%s: unexpected (%s)" % (show(p), g.type))
    # Hard links: the manifest's inode groups must be ROOT's inode groups.
    groups = collections.defaultdict(list)
    for p, e in exp.items():
        if e.ino not in ("*", "-") and p in got:
            groups[e.ino].append(p)
    owner = {}
    for ino, paths in groups.items():
        keys = {got_inode[p] for p in paths}
        if len(keys) > 1:
            errs.append("hard links: %s should share one inode, found %d" %
                        (", ".join(show(p) for p in paths), len(keys)))
        for k in keys:
            if k in owner and owner[k] != ino:
                errs.append("hard links: %s and %s share an inode but should not" %
                            (show(groups[owner[k]][0]), show(paths[0])))
            owner[k] = ino
    return errs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("manifest")
    ap.add_argument("xattrs")
    ap.add_argument("root", nargs="?")
    ap.add_argument("--manifest", dest="other", nargs=2, metavar=("M2", "X2"),
                    help="compare with a second manifest instead of a tree")
    ap.add_argument("--extract", action="store_true",
                    help="ROOT is an extraction onto another filesystem: "
                         "directory sizes are not compared")
    ap.add_argument("--ignore", default="", type=lambda s: [x for x in s.split(",") if x],
                    help="fields not to compare: " + ",".join(FIELDS) + ",dirsize,dirnlink")
    ap.add_argument("--ignore-root", action="store_true",
                    help="do not compare the root directory's mode, owner and times")
    ap.add_argument("--no-nsec", action="store_true", help="compare mtimes to the second")
    ap.add_argument("--no-xattrs", action="store_true")
    ap.add_argument("--skip-xattr", action="append", default=[], metavar="PREFIX",
                    help="ignore xattrs whose name starts with PREFIX (repeatable)")
    ap.add_argument("--flags", action="store_true",
                    help="compare user-visible inode flags (FS_IOC_GETFLAGS)")
    ap.add_argument("--ino", action="store_true", help="inode numbers must match the manifest's")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    opts = ap.parse_args()
    if (opts.root is None) == (opts.other is None):
        ap.error("give either ROOT or --manifest M2 X2")

    exp, expx = read_manifest(opts.manifest), read_xattrs(opts.xattrs)
    errs = []
    if opts.other:
        got, gotx = read_manifest(opts.other[0]), read_xattrs(opts.other[1])
        got_inode = {p: g.ino for p, g in got.items()}
        if any(g.ino in ("*", "-") for g in got.values()):
            got_inode = {p: p for p in got}
    else:
        if not os.path.isdir(opts.root):
            sys.exit("verify-tree: %s is not a directory" % opts.root)
        got, gotx, got_inode = scan_tree(opts.root, opts.flags, errs)
    errs += compare(exp, expx, got, gotx, got_inode, opts)
    if not opts.quiet:
        for e in errs:
            print(e)
    print("verify-tree: %d paths, %d mismatches" % (len(exp), len(errs)))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
