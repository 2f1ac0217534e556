#!/usr/bin/env python3
"""Helpers of the fscrypt compat tests (Python 3 standard library only).

  fscrypt-list.py keys NAMES_FILE POLICIES_OUT KEYFILE
        NAMES_FILE: "name version contents filenames pad flags images" lines.
        Derives each policy's key from its name, writes POLICIES_OUT (the
        same columns + key + keyspec) and KEYFILE (uf2fs's format: HEX for a
        v2 key, DESCRIPTOR:HEX for a v1 key). The v2 keyspec is the key
        identifier, computed here as Linux does (HKDF-SHA512, context 1), so
        the guest's FS_IOC_ADD_ENCRYPTION_KEY answer checks it.
  fscrypt-list.py walk ROOT OUT
        the no-key view of a mounted tree, in `gh fscrypt nokey_list` format:
        path type mode size target nlink ino open
  fscrypt-list.py ls LS_OUTPUT OUT
        the same from the output of `uf2fs ls -ldi IMAGE /; uf2fs ls -lRi
        IMAGE /` (open is "*")
  fscrypt-list.py diff EXPECTED GOT [--ignore COL,...]
        compare two such listings ("*" matches anything); exit 1 on a difference
  fscrypt-list.py flags MANIFEST ROOT
        the encrypt (0x800) and casefold (0x40000000) inode flags of every file
        and directory under ROOT are the manifest's
"""
import errno
import fcntl
import hashlib
import hmac
import os
import stat
import struct
import sys
import importlib.util

_spec = importlib.util.spec_from_file_location(
    "verify_tree", os.path.join(os.path.dirname(os.path.abspath(__file__)), "verify-tree.py"))
VT = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(VT)

COLS = ["path", "type", "mode", "size", "target", "nlink", "ino", "open"]


def esc(b):
    out = []
    i = 0
    while i < len(b):
        c = b[i]
        if c >= 0x80:
            for n in (4, 3, 2):
                try:
                    s = b[i:i + n].decode("utf-8")
                    if len(s) == 1:
                        out.append(b[i:i + n].decode("utf-8"))
                        i += n
                        break
                except UnicodeDecodeError:
                    pass
            else:
                out.append("\\x%02x" % c)
                i += 1
            continue
        if c <= 0x20 or c == 0x7f or c == 0x5c:
            out.append("\\x%02x" % c)
        else:
            out.append(chr(c))
        i += 1
    return "".join(out)


def hkdf_sha512(ikm, info, length):
    prk = hmac.new(b"\0" * 64, ikm, hashlib.sha512).digest()
    out, t, n = b"", b"", 1
    while len(out) < length:
        t = hmac.new(prk, t + info + bytes([n]), hashlib.sha512).digest()
        out += t
        n += 1
    return out[:length]


def cmd_keys(names, pol_out, keyfile):
    with open(names) as f, open(pol_out, "w") as po, open(keyfile, "w") as kf:
        for line in f:
            c = line.split()
            if not c or c[0].startswith("#"):
                continue
            key = hashlib.sha512(b"uf2fs-fscrypt-test:" + c[0].encode()).digest()
            if c[1] == "1":
                spec = hashlib.sha256(c[0].encode()).hexdigest()[:16]
                kf.write("%s:%s\n" % (spec, key.hex()))
            else:
                spec = hkdf_sha512(key, b"fscrypt\0" + bytes([1]), 16).hex()
                kf.write("%s\n" % key.hex())
            po.write(" ".join(c[:7] + [key.hex(), spec]) + "\n")


def line(rel, full):
    st = os.lstat(full)
    t = ("file" if stat.S_ISREG(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode)
         else "symlink" if stat.S_ISLNK(st.st_mode) else "other")
    target, opened = "-", "-"
    if t == "symlink":
        try:
            target = esc(os.readlink(full))
        except OSError as e:
            target = "<%s>" % errno.errorcode.get(e.errno, e.errno)
    if t == "file":
        try:
            os.close(os.open(full, os.O_RDONLY | os.O_NOFOLLOW))
            opened = "ok"
        except OSError as e:
            opened = errno.errorcode.get(e.errno, str(e.errno))
    return [esc(rel), t, "%04o" % stat.S_IMODE(st.st_mode), str(st.st_size), target,
            str(st.st_nlink), str(st.st_ino), opened]


def cmd_walk(root, out):
    root = os.fsencode(root)
    rows = [line(b".", root)]
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            full = os.path.join(dirpath, n)
            rows.append(line(os.path.relpath(full, root), full))
    write_rows(rows, out)


def write_rows(rows, out):
    rows.sort(key=lambda r: unesc(r[0]))
    with open(out, "w") as f:
        for r in rows:
            f.write("\t".join(r) + "\n")


def unesc(s):
    return VT.unescape(s.encode())


def mode_of(s):
    t = {"-": "file", "d": "dir", "l": "symlink"}.get(s[0], "other")
    m = 0
    for i, ch in enumerate(s[1:10]):
        if ch not in "-ST":
            m |= 0o400 >> i
    if s[3] in "sS":
        m |= 0o4000
    if s[6] in "sS":
        m |= 0o2000
    if s[9] in "tT":
        m |= 0o1000
    return t, "%04o" % m


def cmd_ls(lsout, out):
    """Parse `uf2fs ls -lRi`: "PATH:" headers, "total N", then
    ino mode nlink uid gid size date time name [-> target]."""
    rows, cur = [], None
    with open(lsout, "rb") as f:
        for raw in f:
            ln = raw.rstrip(b"\n")
            if not ln or ln.startswith(b"total "):
                continue
            if ln.endswith(b":") and ln.startswith(b"/"):
                cur = ln[:-1].lstrip(b"/")
                continue
            p = ln.split(None, 8)
            if len(p) < 9:
                sys.exit("fscrypt-list: cannot parse ls line: %r" % ln)
            ino, mode, nlink, size, rest = p[0], p[1].decode(), p[2], p[5], p[8]
            t, m = mode_of(mode)
            target = "-"
            if t == "symlink":
                rest, _, tg = rest.partition(b" -> ")
                target = esc(tg)
            if cur is None and rest == b"/":
                rel = b"."      # the root, from a first `uf2fs ls -ldi IMAGE /`
            else:
                rel = rest if not cur else cur + b"/" + rest
            rows.append([esc(rel), t, m, size.decode(), target, nlink.decode(),
                         ino.decode(), "*"])
    write_rows(rows, out)


def read_rows(path):
    rows = {}
    with open(path) as f:
        for ln in f:
            c = ln.rstrip("\n").split("\t")
            if len(c) == len(COLS):
                rows[c[0]] = c
    return rows


def cmd_diff(a, b, ignore):
    ea, eb = read_rows(a), read_rows(b)
    errs = []
    for p in sorted(set(ea) | set(eb)):
        if p not in eb:
            errs.append("%s: missing (%s)" % (p, ea[p][1]))
        elif p not in ea:
            errs.append("%s: unexpected (%s)" % (p, eb[p][1]))
        else:
            for i, c in enumerate(COLS[1:], 1):
                x, y = ea[p][i], eb[p][i]
                if c in ignore or "*" in (x, y) or x == y:
                    continue
                if c == "mode" and ea[p][1] == "symlink":
                    continue
                errs.append("%s: %s: expected %s, got %s" % (p, c, x[:80], y[:80]))
    for e in errs:
        print(e)
    print("fscrypt-list diff: %d paths, %d mismatches" % (len(ea), len(errs)))
    return 1 if errs else 0


def cmd_flags(manifest, root):
    errs, n = [], 0
    mask = 0x800 | 0x40000000
    with open(manifest, "rb") as f:
        for ln in f:
            c = ln.rstrip(b"\n").split(b"\t")
            if len(c) < 13 or c[1] not in (b"file", b"dir") or c[12] in (b"-", b"*"):
                continue
            full = os.path.join(os.fsencode(root), unesc(c[0].decode()))
            try:
                fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
                try:
                    got = struct.unpack("<I", fcntl.ioctl(fd, 0x80086601, b"\0" * 8)[:4])[0]
                finally:
                    os.close(fd)
            except OSError as e:
                errs.append("%s: FS_IOC_GETFLAGS: %s" % (c[0].decode(), e))
                continue
            want = int(c[12], 16)
            n += 1
            if (want ^ got) & mask:
                errs.append("%s: flags 0x%x, want 0x%x (of mask 0x%x)" %
                            (c[0].decode(), got & mask, want & mask, mask))
    for e in errs:
        print(e)
    print("fscrypt-list flags: %d paths, %d mismatches" % (n, len(errs)))
    return 1 if errs else 0


def main(a):
    if len(a) == 4 and a[0] == "keys":
        return cmd_keys(*a[1:])
    if len(a) == 3 and a[0] == "walk":
        return cmd_walk(*a[1:])
    if len(a) == 3 and a[0] == "ls":
        return cmd_ls(*a[1:])
    if len(a) in (3, 5) and a[0] == "diff":
        ign = a[4].split(",") if len(a) == 5 and a[3] == "--ignore" else []
        return cmd_diff(a[1], a[2], ign)
    if len(a) == 3 and a[0] == "flags":
        return cmd_flags(*a[1:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) or 0)
