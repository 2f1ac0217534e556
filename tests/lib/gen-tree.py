#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Deterministic test tree generator.

  gen-tree.py SEED DIR [--small|--full] [--huge] [--compressible]
              [--selinux FILE_CONTEXTS] [--no-special] [--quiet]

The same SEED and options always give the same names, contents, modes, owners,
times and xattrs (the DIR path does not matter). DIR must not exist or be empty.

  --small         a few MiB: every kind of entry, small sizes (demo, quick runs)
  --full          (default) all of the below, about 60 MiB of data
  --huge          also sparse files of 5 GiB and 8 GiB+ whose last island lies in
                  the double-indirect range. Only for image builders that keep
                  holes (Linux f2fs): sload.f2fs 1.15 writes every block.
  --compressible  file contents compress well (text-like runs, zero runs), with
                  some incompressible clusters mixed in
  --selinux FC    give every entry a security.selinux xattr and write the
                  matching file_contexts to FC for `sload.f2fs -s FC` (sload
                  stores the context without a trailing NUL; so does this)
  --no-special    no fifos, sockets or device nodes

What it makes (--full), by top-level directory:
  files/      regular files of boundary sizes: 0, 1, 100, 3000, 3451..3453 and 3488/3489
              around the inline-data limits, 4095..4097, 8191/8192, 64K, 64K+1,
              1M+1, 873 blocks, 8 MiB, 16 MiB+123 (indirect nodes)
  sparse/     data islands in holes, a hole-only file, a hole at the head
  dirs/       empty dirs, nested empty dirs, a 3000-entry directory, a
              300-entry directory, a deep path, 255-byte names, UTF-8 names
  links/      short, 3000, 3460 and 4000-byte symlink targets, dangling,
              absolute and directory symlinks; hard links across directories
  special/    fifo, socket, char and block devices (root only for devices)
  modes/      0000, 0400, setuid, setgid, sticky, odd modes
  owners/     assorted uids/gids (root only)
  times/      mtimes with nanoseconds, epoch, pre-1970, 2^31-1 and past 2038
  xattrs/     user./trusted./security. xattrs, empty values, 1-2 KiB values
              that spill out of the inline xattr area, POSIX ACLs
Directory mtimes are set last, deepest first, so they are deterministic too.
"""
import argparse
import os
import random
import socket
import stat
import struct
import sys

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


class Gen:
    def __init__(self, seed, root, args):
        self.rng = random.Random(seed)
        self.seed = seed
        self.root = os.path.abspath(root)
        self.args = args
        self.is_root = os.geteuid() == 0
        self.dir_times = []
        self.skipped = []
        self.selinux = {} if args.selinux else None
        self.nbytes = 0
        self.nentries = 0

    # -- helpers --
    def p(self, rel):
        return os.path.join(self.root, rel)

    def data(self, n, rng=None):
        rng = rng or self.rng
        if not self.args.compressible:
            return rng.randbytes(n)
        out = bytearray()
        words = [bytes(rng.choice(b"abcdefghijklmnop ") for _ in range(rng.randint(3, 12)))
                 for _ in range(64)]
        while len(out) < n:
            k = rng.random()
            if k < 0.6:
                out += b" ".join(rng.choice(words) for _ in range(rng.randint(50, 400))) + b"\n"
            elif k < 0.8:
                out += bytes(rng.randint(1, 6) * 4096)
            else:
                out += rng.randbytes(rng.randint(1, 3) * 4096)   # an incompressible cluster
        return bytes(out[:n])

    def write(self, rel, size, chunk=4 * MIB):
        path = self.p(rel)
        # Each file has its own generator, so adding files elsewhere keeps contents stable.
        frng = random.Random("%s/%s" % (self.seed, rel))
        with open(path, "wb") as f:
            left = size
            while left > 0:
                n = min(left, chunk)
                f.write(self.data(n, frng))
                left -= n
        self.nbytes += size
        self.nentries += 1
        return path

    def sparse(self, rel, size, islands):
        """islands: [(offset, length)] of data; everything else is a hole."""
        path = self.p(rel)
        frng = random.Random("%s/%s" % (self.seed, rel))
        with open(path, "wb") as f:
            for off, n in islands:
                f.seek(off)
                f.write(self.data(n, frng))
                self.nbytes += n
            f.truncate(size)
        self.nentries += 1
        return path

    def mkdir(self, rel):
        os.makedirs(self.p(rel), exist_ok=True)
        self.nentries += 1

    def symlink(self, target, rel):
        os.symlink(target, self.p(rel))
        self.nentries += 1

    def utime(self, rel, sec, nsec=0):
        ns = sec * 1_000_000_000 + nsec
        os.utime(self.p(rel), ns=(ns, ns), follow_symlinks=False)

    def set_xattr(self, rel, name, value):
        try:
            os.setxattr(self.p(rel), name, value, follow_symlinks=False)
            return True
        except OSError as e:
            self.skipped.append("xattr %s on %s: %s" % (name, rel, e.strerror))
            return False

    # -- the tree --
    def files(self):
        self.mkdir("files")
        sizes = [0, 1, 100, 3000, 3451, 3452, 3453, 3488, 3489, 4095, 4096, 4097, 8191, 8192,
                 65536, 65537]
        if self.args.size != "small":
            sizes += [MIB + 1, 873 * 4096, 8 * MIB, 16 * MIB + 123]
        else:
            sizes += [300 * KIB + 7]
        for s in sizes:
            self.write("files/size-%d" % s, s)
        # Same content at an odd block count and an exact block multiple.
        self.write("files/blocks-33", 33 * 4096)

    def sparse_files(self):
        self.mkdir("sparse")
        self.sparse("sparse/hole-only", 2 * MIB if self.args.size != "small" else 256 * KIB, [])
        self.sparse("sparse/tail-only", 3 * MIB + 5, [(3 * MIB - 10, 15)])
        if self.args.size != "small":
            self.sparse("sparse/islands", 20 * MIB + 4097,
                        [(0, 4096), (MIB + 100, 5000), (9 * MIB, 64 * KIB + 3),
                         (20 * MIB + 4000, 97)])
        else:
            self.sparse("sparse/islands", 2 * MIB + 1, [(0, 10), (MIB - 5, 4106), (2 * MIB, 1)])
        if self.args.huge:
            self.sparse("sparse/huge-5g", 5 * GIB + 11,
                        [(0, 4096), (GIB + 7, 100), (4 * GIB - 1, 2), (5 * GIB, 11)])
            # Past 923 + 2*1018 + 2*1018*1018 blocks (~7.92 GiB): double-indirect nodes.
            self.sparse("sparse/dind-8g", 8 * GIB + MIB + 4096,
                        [(4096 * 5, 4096), (8 * GIB + MIB, 4096)])

    def dirs(self):
        self.mkdir("dirs/empty")
        self.mkdir("dirs/nested/a/b/c/d")
        n_big = 3000 if self.args.size != "small" else 120
        self.mkdir("dirs/big")
        for i in range(n_big):
            # Names of many lengths, so dentries take 1..32 slots.
            name = "e%04d-%s" % (i, "x" * (i % 53))
            with open(self.p("dirs/big/" + name), "wb") as f:
                if i % 97 == 0:
                    f.write(("entry %d\n" % i).encode())
            self.nentries += 1
        if self.args.size != "small":
            self.mkdir("dirs/mid")
            for i in range(300):
                self.write("dirs/mid/m%03d" % i, i % 5)
        deep = "dirs/deep"
        for i in range(40 if self.args.size != "small" else 12):
            deep += "/level%02d" % i
        self.mkdir(deep)
        self.write(deep + "/leaf", 123)
        self.mkdir("dirs/names")
        long_name = "L" * 255
        self.write("dirs/names/" + long_name, 10)
        self.mkdir("dirs/names/" + "D" * 254 + "d")
        utf8 = ["café", "naïve-résumé", "日本語のファイル", "emoji-\U0001F600\U0001F680",
                "e\u0301-combining", "Ωmega", "space in name", "quote'\"", "back\\slash",
                "-leading-dash", "tab\there", "% percent", "a" * 100 + "é" * 77]
        for n in utf8:
            self.write("dirs/names/" + n, len(n.encode()))
        # 255 bytes of UTF-8 (85 three-byte characters).
        self.write("dirs/names/" + "語" * 85, 3)

    def links(self):
        self.mkdir("links/d1")
        self.mkdir("links/d2")
        self.write("links/target", 5000)
        self.symlink("target", "links/short")
        self.symlink("/etc/passwd", "links/absolute")
        self.symlink("does/not/exist", "links/dangling")
        self.symlink("d1", "links/dirlink")
        self.symlink("../links/./target", "links/dotdot")
        for n in (3000, 3460, 4000):
            self.symlink(("t/" * (n // 2))[:n], "links/long-%d" % n)
        # Hard links: three names across directories, an empty one and a large one.
        self.write("links/d1/hard", 12345)
        os.link(self.p("links/d1/hard"), self.p("links/d2/hard-b"))
        os.link(self.p("links/d1/hard"), self.p("links/hard-c"))
        self.write("links/d1/empty-hard", 0)
        os.link(self.p("links/d1/empty-hard"), self.p("links/d2/empty-hard-b"))
        if self.args.size != "small":
            self.write("links/d1/big-hard", 2 * MIB + 1)
            os.link(self.p("links/d1/big-hard"), self.p("links/d2/big-hard-b"))
        for rel in ("links/d1/hard", "links/d1/empty-hard", "links/d1/big-hard"):
            if os.path.exists(self.p(rel)):
                self.utime(rel, 1400000000 + len(rel), 777)

    def special(self):
        if self.args.no_special:
            return
        self.mkdir("special")
        os.mkfifo(self.p("special/fifo"), 0o640)
        self.nentries += 1
        cwd = os.getcwd()
        try:
            os.chdir(self.p("special"))
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind("socket")
            s.close()
            self.nentries += 1
        except OSError as e:
            self.skipped.append("socket: %s" % e.strerror)
        finally:
            os.chdir(cwd)
        if self.is_root:
            os.mknod(self.p("special/null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            os.mknod(self.p("special/loop7"), 0o660 | stat.S_IFBLK, os.makedev(7, 7))
            os.mknod(self.p("special/bigdev"), 0o600 | stat.S_IFCHR, os.makedev(300, 70000))
            self.nentries += 3
        else:
            self.skipped.append("device nodes (not root)")

    def modes(self):
        self.mkdir("modes")
        for m in (0o000, 0o400, 0o644, 0o755, 0o4755, 0o2755, 0o6711, 0o1777, 0o7777, 0o007):
            self.write("modes/f%04o" % m, 7)
            os.chmod(self.p("modes/f%04o" % m), m)
        for m in (0o700, 0o1777, 0o2775, 0o555):
            self.mkdir("modes/d%04o" % m)
            os.chmod(self.p("modes/d%04o" % m), m)

    def owners(self):
        if not self.is_root:
            self.skipped.append("owners (not root)")
            return
        self.mkdir("owners")
        for uid, gid in ((0, 0), (1000, 1000), (65534, 65534), (1, 2), (100000, 200000),
                         (4294967294, 123456789)):
            rel = "owners/u%d-g%d" % (uid, gid)
            self.write(rel, 3)
            os.chown(self.p(rel), uid, gid)
        self.mkdir("owners/dir-1000")
        os.chown(self.p("owners/dir-1000"), 1000, 50)
        self.symlink("u1000-g1000", "owners/link-42")
        os.lchown(self.p("owners/link-42"), 42, 43)

    def times(self):
        self.mkdir("times")
        for name, sec, nsec in (("ns", 1600000000, 123456789), ("epoch", 0, 0),
                                ("pre1970", -1000000, 0), ("max32", 2**31 - 1, 999999999),
                                ("y2038plus", 2**31 + 1000, 1), ("y2300", 10413792000, 5),
                                ("half", 1234567890, 500000000)):
            self.write("times/" + name, 1)
            self.utime("times/" + name, sec, nsec)
        self.symlink("ns", "times/link")
        self.utime("times/link", 1500000000, 42)

    def xattrs(self):
        self.mkdir("xattrs")
        self.write("xattrs/small", 10)
        self.set_xattr("xattrs/small", "user.a", b"1")
        self.set_xattr("xattrs/small", "user.empty", b"")
        self.set_xattr("xattrs/small", "user.bin", bytes(range(256))[:40])
        self.write("xattrs/spill", 100)
        # Inline xattr space is 200 bytes; these go to the xattr node.
        self.set_xattr("xattrs/spill", "user.k1", self.rng.randbytes(1024))
        self.set_xattr("xattrs/spill", "user.k2", b"v" * 1900)
        self.write("xattrs/many", 1)
        for i in range(40):
            self.set_xattr("xattrs/many", "user.n%02d" % i, ("value-%d" % i).encode() * (i % 4))
        if self.is_root:
            self.set_xattr("xattrs/small", "trusted.t", b"trusted-value")
            if self.selinux is None:
                self.set_xattr("xattrs/small", "security.s", b"security-value")
        self.mkdir("xattrs/dir")
        self.set_xattr("xattrs/dir", "user.on-dir", b"d" * 300)
        self.symlink("small", "xattrs/link")
        if self.is_root:
            self.set_xattr("xattrs/link", "trusted.on-link", b"l")
        # POSIX ACLs in the VFS xattr format: version 2, then (tag, perm, id).
        undef = 0xFFFFFFFF
        acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i) for t, p, i in (
            (0x01, 6, undef), (0x02, 4, 1000), (0x02, 6, 4242), (0x04, 4, undef),
            (0x08, 5, 100), (0x10, 6, undef), (0x20, 4, undef)))
        self.write("xattrs/acl", 20)
        self.set_xattr("xattrs/acl", "system.posix_acl_access", acl)
        dacl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i) for t, p, i in (
            (0x01, 7, undef), (0x04, 5, undef), (0x08, 7, 1234), (0x10, 7, undef),
            (0x20, 5, undef)))
        self.mkdir("xattrs/acl-dir")
        self.set_xattr("xattrs/acl-dir", "system.posix_acl_default", dacl)

    # -- selinux labels for sload -s --
    def label_all(self):
        if self.selinux is None:
            return
        default = "u:object_r:uf2fs_default_t:s0"
        special = {
            "/xattrs/selinux-short": "u:object_r:short_t:s0",
            "/xattrs/selinux-300": "u:object_r:" + "m" * 286 + ":s0",
            "/xattrs/selinux-1500": "u:object_r:" + "l" * 1486 + ":s0",
        }
        for rel in special:
            self.write(rel.lstrip("/"), 33)
        for dirpath, dirnames, filenames in os.walk(self.root):
            for n in [None] + dirnames + filenames:
                full = dirpath if n is None else os.path.join(dirpath, n)
                rel = "/" + os.path.relpath(full, self.root)
                rel = "/" if rel == "/." else rel
                if n is None and dirpath != self.root:
                    continue
                ctx = special.get(rel, default)
                try:
                    os.setxattr(full, "security.selinux", ctx.encode(), follow_symlinks=False)
                except OSError as e:
                    self.skipped.append("security.selinux on %s: %s" % (rel, e.strerror))
        with open(self.args.selinux, "w") as f:
            f.write("# generated by gen-tree.py for sload.f2fs -s\n")
            f.write("/.*\t%s\n" % default)
            for rel, ctx in special.items():
                f.write("%s\t%s\n" % (rel, ctx))

    def finish_times(self):
        """Give every entry without an explicit time one derived from its path; dirs
        last, deepest first (creating entries changes a directory's mtime)."""
        t0 = 1500000000 + (self.seed % 1000) * 1000

        def ns_for(rel):
            r = random.Random("%s:time:%s" % (self.seed, rel))
            return (t0 + r.randint(0, 10**7)) * 10**9 + r.randint(0, 10**9 - 1)

        for dirpath, dirnames, filenames in os.walk(self.root, topdown=False):
            rel = os.path.relpath(dirpath, self.root)
            for n in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                relf = os.path.normpath(os.path.join(rel, n))
                full = os.path.join(dirpath, n)
                if relf.split(os.sep)[0] == "times":
                    continue
                if not os.path.islink(full) and os.lstat(full).st_nlink > 1:
                    continue        # hard links: set once in links()
                ns = ns_for(relf)
                os.utime(full, ns=(ns, ns), follow_symlinks=False)
            ns = ns_for(rel)
            os.utime(dirpath, ns=(ns, ns))

    def run(self):
        os.makedirs(self.root, exist_ok=True)
        if os.listdir(self.root):
            sys.exit("gen-tree: %s is not empty" % self.root)
        os.umask(0o022)
        self.files()
        self.sparse_files()
        self.dirs()
        self.links()
        self.special()
        self.modes()
        self.owners()
        self.times()
        self.xattrs()
        self.label_all()
        self.finish_times()
        if not self.args.quiet:
            print("gen-tree: %d entries, %.1f MiB of data in %s" %
                  (self.nentries, self.nbytes / MIB, self.root))
            for s in self.skipped:
                print("gen-tree: skipped %s" % s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seed", type=int)
    ap.add_argument("dir")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--small", dest="size", action="store_const", const="small")
    g.add_argument("--full", dest="size", action="store_const", const="full")
    ap.add_argument("--huge", action="store_true")
    ap.add_argument("--compressible", action="store_true")
    ap.add_argument("--selinux", metavar="FILE_CONTEXTS")
    ap.add_argument("--no-special", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    ap.set_defaults(size="full")
    args = ap.parse_args()
    Gen(args.seed, args.dir, args).run()


if __name__ == "__main__":
    main()
