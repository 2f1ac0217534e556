#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A small, independent f2fs image reader and editor for the tests.

It reads the super block, picks the current checkpoint, looks nodes up in the
NAT (with the NAT journal), walks directories (inline and block dentries),
maps file blocks through direct, indirect and double-indirect nodes and reads
inline and node xattrs. It can also make the targeted edits the tests need:
corrupt one structure, or turn an empty file into a hole-only sparse file
(which sload.f2fs 1.15 cannot make: it writes every block of a source file).

It is deliberately separate from the C library: the tests use it to find the
block of a structure to corrupt and as a second opinion on what an image
holds. Python stdlib only. Format facts as in include/uf2fs/format.h.

  f2fsimg.py info IMG                       geometry, checkpoints, NAT (JSON)
  f2fsimg.py stat IMG PATH                  inode fields, node and NAT location (JSON)
  f2fsimg.py ls IMG DIR                     entries: name ino type
  f2fsimg.py cat IMG PATH                   file or symlink bytes to stdout
  f2fsimg.py xattrs IMG PATH                xattrs (JSON; values hex)
  f2fsimg.py bmap IMG PATH                  block addresses of each file block (JSON)
  f2fsimg.py dentry-blocks IMG DIR          block addresses of a directory's dentry blocks
  f2fsimg.py extract IMG DEST               extract the tree (no special files)
  f2fsimg.py quota-usage IMG                per user/group/project: space bytes, inodes
  f2fsimg.py make-hole IMG PATH SIZE        empty inline file -> hole-only file of SIZE
  f2fsimg.py corrupt IMG WHAT [PATH]        corrupt one structure; prints what (JSON)
      WHAT: sb-primary | sb-both | cp-current | cp-both | nat PATH | nat-block PATH |
            inode PATH | dentry DIR | cluster PATH
"""
import json
import os
import stat as st
import struct
import sys
import zlib

BLK = 4096
SB_OFF = 1024
MAGIC = 0xF2F52010
NULL_ADDR, NEW_ADDR, COMPRESS_ADDR = 0, 0xFFFFFFFF, 0xFFFFFFFE
ADDRS_PER_INODE = 923
ADDRS_PER_BLOCK = 1018
NIDS_PER_BLOCK = 1018
NAT_PER_BLOCK = 455
INLINE_XATTR_ADDRS = 50
F2FS_INLINE_XATTR, F2FS_INLINE_DATA, F2FS_INLINE_DENTRY = 0x01, 0x02, 0x04
F2FS_DATA_EXIST, F2FS_INLINE_DOTS, F2FS_EXTRA_ATTR = 0x08, 0x10, 0x20
FEAT_EXTRA_ATTR, FEAT_INODE_CHKSUM, FEAT_FLEX_XATTR = 0x8, 0x20, 0x40
FEAT_SB_CHKSUM, FEAT_COMPRESSION = 0x800, 0x2000
CP_COMPACT_SUM_FLAG, CP_LARGE_NAT_BITMAP_FLAG = 0x4, 0x400
F2FS_COMPR_FL = 0x4
SUM_JOURNAL_SIZE = 507
XATTR_PREFIX = {1: "user.", 2: "system.posix_acl_access", 3: "system.posix_acl_default",
                4: "trusted.", 5: "lustre.", 6: "security.", 7: "system.advise",
                9: "encryption.", 11: "verity."}
FT_NAMES = {0: "unknown", 1: "reg", 2: "dir", 3: "chr", 4: "blk", 5: "fifo", 6: "sock",
            7: "symlink"}


class F2fsError(Exception):
    pass


def crc32_f2fs(seed, data):
    """f2fs's CRC32: reflected poly 0xEDB88320, no pre/post inversion."""
    return zlib.crc32(data, seed ^ 0xFFFFFFFF) ^ 0xFFFFFFFF


def test_bit(nr, buf):
    """f2fs_test_bit: MSB-first bit order (NAT/SIT version bitmaps)."""
    return (buf[nr >> 3] >> (7 - (nr & 7))) & 1


def test_bit_le(nr, buf):
    return (buf[nr >> 3] >> (nr & 7)) & 1


class Inode:
    def __init__(self, img, nid, blkaddr, raw):
        self.img, self.nid, self.blkaddr, self.raw = img, nid, blkaddr, raw
        (self.mode, self.advise, self.inline, self.uid, self.gid, self.links, self.size,
         self.blocks, self.atime, self.ctime, self.mtime, self.atime_nsec, self.ctime_nsec,
         self.mtime_nsec, self.generation, self.depth, self.xattr_nid, self.flags,
         self.pino, self.namelen) = struct.unpack_from("<HBBIIIQQQQQIIIIIIIII", raw, 0)
        self.name = raw[92:92 + min(self.namelen, 255)]
        self.dir_level = raw[347]
        self.extra_isize = 0
        self.inline_xattr_size = 0
        self.crtime = self.crtime_nsec = None
        self.compress_algorithm = self.log_cluster_size = None
        if self.inline & F2FS_EXTRA_ATTR:
            self.extra_isize, self.inline_xattr_size = struct.unpack_from("<HH", raw, 360)
            if self.extra_isize >= 24:
                self.crtime, self.crtime_nsec = struct.unpack_from("<QI", raw, 372)
            if self.extra_isize >= 36:
                self.compress_algorithm, self.log_cluster_size = raw[392], raw[393]
        self.footer_nid, self.footer_ino, self.footer_flag, self.footer_cpver, _ = \
            struct.unpack_from("<IIIQI", raw, 4072)

    @property
    def inline_xattr_addrs(self):
        if (self.img.feature & FEAT_FLEX_XATTR) and (self.inline & F2FS_EXTRA_ATTR):
            return self.inline_xattr_size
        if self.inline & (F2FS_INLINE_XATTR | F2FS_INLINE_DENTRY):
            return INLINE_XATTR_ADDRS
        return 0

    @property
    def compressed(self):
        return st.S_ISREG(self.mode) and bool(self.flags & F2FS_COMPR_FL)

    @property
    def cluster_size(self):
        return 1 << (self.log_cluster_size or 0)

    def addrs_per_inode(self):
        n = ADDRS_PER_INODE - self.extra_isize // 4 - self.inline_xattr_addrs
        if self.compressed:
            n -= n % self.cluster_size
        return n

    def addrs_per_block(self):
        n = ADDRS_PER_BLOCK
        if self.compressed:
            n -= n % self.cluster_size
        return n

    def iaddr(self, i):
        """i_addr[i] in the raw array (no extra_isize shift)."""
        return struct.unpack_from("<I", self.raw, 360 + 4 * i)[0]

    def inid(self, i):
        return struct.unpack_from("<I", self.raw, 4052 + 4 * i)[0]

    def inline_data_off(self):
        return 360 + self.extra_isize + 4     # one reserved word

    def max_inline(self):
        return 4 * (ADDRS_PER_INODE - self.extra_isize // 4 - self.inline_xattr_addrs - 1)

    def to_json(self):
        d = {k: getattr(self, k) for k in (
            "nid", "blkaddr", "mode", "advise", "inline", "uid", "gid", "links", "size",
            "blocks", "atime", "ctime", "mtime", "atime_nsec", "ctime_nsec", "mtime_nsec",
            "generation", "xattr_nid", "flags", "pino", "dir_level", "extra_isize",
            "inline_xattr_size", "crtime", "crtime_nsec", "compress_algorithm",
            "log_cluster_size", "footer_nid", "footer_ino")}
        d["name"] = self.name.decode("utf-8", "replace")
        d["i_nid"] = [self.inid(i) for i in range(5)]
        return d


class Image:
    def __init__(self, path, writable=False):
        self.path = path
        self.f = open(path, "r+b" if writable else "rb")
        self.size = os.fstat(self.f.fileno()).st_size
        self.sb_index = None
        for idx in (0, 1):
            raw = self.pread(idx * BLK + SB_OFF, 3072)
            if len(raw) == 3072 and struct.unpack_from("<I", raw, 0)[0] == MAGIC:
                self.sb_index, self.sb_raw = idx, raw
                break
        if self.sb_index is None:
            raise F2fsError("no valid super block (magic 0x%08x) at byte 1024 or 5120" % MAGIC)
        s = self.sb_raw
        (self.log_blocks_per_seg,) = struct.unpack_from("<I", s, 20)
        self.blocks_per_seg = 1 << self.log_blocks_per_seg
        (self.block_count,) = struct.unpack_from("<Q", s, 36)
        (self.segment_count_nat,) = struct.unpack_from("<I", s, 60)
        (self.segment0_blkaddr, self.cp_blkaddr, self.sit_blkaddr, self.nat_blkaddr,
         self.ssa_blkaddr, self.main_blkaddr, self.root_ino) = struct.unpack_from("<7I", s, 72)
        (self.cp_payload,) = struct.unpack_from("<I", s, 1664)
        (self.feature,) = struct.unpack_from("<I", s, 2180)
        self.uuid = s[108:124]
        self.chksum_seed = crc32_f2fs(0xFFFFFFFF, self.uuid)
        self._load_cp()
        self._load_nat_journal()

    # -- raw I/O --
    def pread(self, off, n):
        self.f.seek(off)
        return self.f.read(n)

    def block(self, addr):
        if addr >= self.block_count:
            raise F2fsError("block address %d beyond block_count %d" % (addr, self.block_count))
        b = self.pread(addr * BLK, BLK)
        if len(b) != BLK:
            raise F2fsError("short read of block %d" % addr)
        return b

    def write_block(self, addr, data):
        assert len(data) == BLK
        self.f.seek(addr * BLK)
        self.f.write(data)
        self.f.flush()

    # -- checkpoint --
    def _cp_at(self, addr):
        """Return (version, raw_block) when the pack at addr is valid, else None."""
        try:
            b = self.block(addr)
        except F2fsError:
            return None
        (crc_off,) = struct.unpack_from("<I", b, 164)
        if crc_off < 192 or crc_off > BLK - 4:
            return None
        (crc,) = struct.unpack_from("<I", b, crc_off)
        if crc32_f2fs(MAGIC, b[:crc_off]) != crc:
            return None
        (ver,) = struct.unpack_from("<Q", b, 0)
        (total,) = struct.unpack_from("<I", b, 136)
        try:
            last = self.block(addr + total - 1)
        except F2fsError:
            return None
        (crc_off2,) = struct.unpack_from("<I", last, 164)
        if crc_off2 < 192 or crc_off2 > BLK - 4:
            return None
        (crc2,) = struct.unpack_from("<I", last, crc_off2)
        if crc32_f2fs(MAGIC, last[:crc_off2]) != crc2:
            return None
        if struct.unpack_from("<Q", last, 0)[0] != ver:
            return None
        return ver, b

    def _load_cp(self):
        self.cp_packs = [self.cp_blkaddr, self.cp_blkaddr + self.blocks_per_seg]
        c = [self._cp_at(a) for a in self.cp_packs]
        self.cp_versions = [x[0] if x else None for x in c]
        best = None
        for i, x in enumerate(c):
            if x and (best is None or x[0] > c[best][0]):
                best = i
        if best is None:
            raise F2fsError("no valid checkpoint (packs at blocks %d and %d)" % tuple(self.cp_packs))
        self.cp_index = best
        self.cp_addr = self.cp_packs[best]
        self.cp_ver, self.cp = c[best]
        (self.ckpt_flags, self.cp_total, self.cp_start_sum) = struct.unpack_from("<III", self.cp, 132)
        (self.sit_bitmap_size, self.nat_bitmap_size) = struct.unpack_from("<II", self.cp, 156)
        if self.ckpt_flags & CP_LARGE_NAT_BITMAP_FLAG:
            off = 192 + 4
        elif self.cp_payload > 0:
            off = 192
        else:
            off = 192 + self.sit_bitmap_size
        self.nat_bitmap = self.cp[off:off + self.nat_bitmap_size]

    def _load_nat_journal(self):
        self.nat_journal = {}
        sum_addr = self.cp_addr + self.cp_start_sum
        b = self.block(sum_addr)
        if self.ckpt_flags & CP_COMPACT_SUM_FLAG:
            j = b[0:SUM_JOURNAL_SIZE]
            self.nat_journal_where = (sum_addr, 0)
        else:
            j = b[BLK - 5 - SUM_JOURNAL_SIZE:BLK - 5]
            self.nat_journal_where = (sum_addr, BLK - 5 - SUM_JOURNAL_SIZE)
        (n,) = struct.unpack_from("<H", j, 0)
        for i in range(min(n, 38)):
            nid, ver, ino, addr = struct.unpack_from("<IBII", j, 2 + 13 * i)
            self.nat_journal[nid] = (ino, addr, i)

    # -- NAT --
    def nat_block_addr(self, nid):
        block_off = nid // NAT_PER_BLOCK
        seg_off = block_off >> self.log_blocks_per_seg
        addr = (self.nat_blkaddr + (seg_off << self.log_blocks_per_seg << 1) +
                (block_off & (self.blocks_per_seg - 1)))
        if test_bit(block_off, self.nat_bitmap):
            addr += self.blocks_per_seg
        return addr

    def nat_lookup(self, nid):
        """(ino, block_addr, where) with where = 'journal' or (nat_blkaddr, index)."""
        if nid in self.nat_journal:
            ino, addr, _ = self.nat_journal[nid]
            return ino, addr, "journal"
        nb = self.nat_block_addr(nid)
        b = self.block(nb)
        i = nid % NAT_PER_BLOCK
        ver, ino, addr = struct.unpack_from("<BII", b, 9 * i)
        return ino, addr, (nb, i)

    def node(self, nid):
        ino, addr, _ = self.nat_lookup(nid)
        if addr in (NULL_ADDR, NEW_ADDR):
            raise F2fsError("nid %d has no block in the NAT" % nid)
        b = self.block(addr)
        fnid = struct.unpack_from("<I", b, 4072)[0]
        if fnid != nid:
            raise F2fsError("node block %d: footer nid %d, expected %d" % (addr, fnid, nid))
        return addr, b

    def inode(self, ino):
        addr, b = self.node(ino)
        return Inode(self, ino, addr, b)

    # -- data --
    def block_path(self, ino, idx):
        """[(kind, nid_or_ino, offset)] from the inode down to the data slot."""
        dpi = ino.addrs_per_inode()
        dpb = ino.addrs_per_block()
        ind = dpb * NIDS_PER_BLOCK
        if idx < dpi:
            return [("inode", idx)]
        idx -= dpi
        for k in (0, 1):
            if idx < dpb:
                return [("nid", k), ("dnode", idx)]
            idx -= dpb
        for k in (2, 3):
            if idx < ind:
                return [("nid", k), ("ind", idx // dpb), ("dnode", idx % dpb)]
            idx -= ind
        if idx < ind * NIDS_PER_BLOCK:
            return [("nid", 4), ("ind", idx // ind), ("ind", (idx % ind) // dpb),
                    ("dnode", idx % dpb)]
        raise F2fsError("block index beyond the maximum file size")

    def bmap(self, ino, idx, nodes=None):
        """Block address of file block idx (NULL_ADDR for a hole)."""
        path = self.block_path(ino, idx)
        if path[0][0] == "inode":
            return ino.iaddr(ino.extra_isize // 4 + idx)
        nid = ino.inid(path[0][1])
        blk = None
        for kind, off in path[1:]:
            if nid == 0:
                return NULL_ADDR
            if nodes is not None and nid in nodes:
                blk = nodes[nid]
            else:
                blk = self.node(nid)[1]
                if nodes is not None:
                    nodes[nid] = blk
            v = struct.unpack_from("<I", blk, 4 * off)[0]
            if kind == "ind":
                nid = v
            else:
                return v
        return NULL_ADDR

    def nblocks(self, ino):
        return (ino.size + BLK - 1) // BLK

    def read_data(self, ino):
        if ino.inline & F2FS_INLINE_DATA:
            o = ino.inline_data_off()
            return ino.raw[o:o + ino.size]
        if ino.compressed:
            raise F2fsError("compressed file: this reader does not decompress")
        out = bytearray()
        cache = {}
        for i in range(self.nblocks(ino)):
            a = self.bmap(ino, i, cache)
            out += bytes(BLK) if a in (NULL_ADDR, NEW_ADDR) else self.block(a)
        return bytes(out[:ino.size])

    # -- directories --
    def _parse_dentries(self, buf, nr, bitmap_off, dent_off, name_off):
        out = []
        bit = 0
        while bit < nr:
            if not test_bit_le(bit, buf[bitmap_off:]):
                bit += 1
                continue
            h, ino, nlen, ftype = struct.unpack_from("<IIHB", buf, dent_off + 11 * bit)
            name = buf[name_off + 8 * bit:name_off + 8 * bit + nlen]
            out.append((name, ino, ftype))
            bit += max(1, (nlen + 7) // 8)
        return out

    def dentry_blocks(self, ino):
        if ino.inline & F2FS_INLINE_DENTRY:
            return []
        cache = {}
        res = []
        for i in range(self.nblocks(ino)):
            a = self.bmap(ino, i, cache)
            if a not in (NULL_ADDR, NEW_ADDR):
                res.append((i, a))
        return res

    def readdir(self, ino):
        if not st.S_ISDIR(ino.mode):
            raise F2fsError("inode %d is not a directory" % ino.nid)
        if ino.inline & F2FS_INLINE_DENTRY:
            mi = ino.max_inline()
            nr = mi * 8 // ((11 + 8) * 8 + 1)
            bm = (nr + 7) // 8
            reserved = mi - ((11 + 8) * nr + bm)
            base = ino.inline_data_off()
            area = ino.raw[base:base + mi]
            return self._parse_dentries(area, nr, 0, bm + reserved, bm + reserved + 11 * nr)
        out = []
        for _, a in self.dentry_blocks(ino):
            out += self._parse_dentries(self.block(a), 214, 0, 30, 30 + 11 * 214)
        return out

    def resolve(self, path):
        ino = self.inode(self.root_ino)
        for comp in [c for c in path.encode().split(b"/") if c]:
            for name, cino, _ in self.readdir(ino):
                if name == comp:
                    ino = self.inode(cino)
                    break
            else:
                raise F2fsError("%s: no such entry" % comp.decode("utf-8", "replace"))
        return ino

    # -- xattrs --
    def xattrs(self, ino):
        n = ino.inline_xattr_addrs if ino.inline & F2FS_INLINE_XATTR or \
            (self.feature & FEAT_FLEX_XATTR and ino.inline & F2FS_EXTRA_ATTR) else 0
        buf = b""
        if n:
            o = 360 + 4 * (ADDRS_PER_INODE - n)
            buf += ino.raw[o:o + 4 * n]
        if ino.xattr_nid:
            buf += self.node(ino.xattr_nid)[1][:BLK - 24]
        if len(buf) < 24:
            return {}
        # Like the kernel, a missing header magic is not an error: the area is
        # read as an empty list that ends at the first all-zero entry.
        res = {}
        p = 24
        while p + 4 <= len(buf):
            idx, nlen, vsz = struct.unpack_from("<BBH", buf, p)
            if idx == 0 and nlen == 0 and vsz == 0:
                break
            name = buf[p + 4:p + 4 + nlen].decode("utf-8", "replace")
            val = buf[p + 4 + nlen:p + 4 + nlen + vsz]
            res[XATTR_PREFIX.get(idx, "index%d." % idx) + name] = val
            p += (4 + nlen + vsz + 3) & ~3
        return res

    def inode_checksum(self, raw):
        ino, = struct.unpack_from("<I", raw, 4072 + 4)
        gen, = struct.unpack_from("<I", raw, 68)
        c = crc32_f2fs(self.chksum_seed, struct.pack("<I", ino))
        c = crc32_f2fs(c, struct.pack("<I", gen))
        c = crc32_f2fs(c, raw[:368])
        c = crc32_f2fs(c, b"\0\0\0\0")
        return crc32_f2fs(c, raw[372:BLK])

    def fix_inode_checksum(self, raw):
        raw = bytearray(raw)
        if (self.feature & FEAT_INODE_CHKSUM) and (raw[3] & F2FS_EXTRA_ATTR):
            extra, = struct.unpack_from("<H", raw, 360)
            if extra >= 12:
                struct.pack_into("<I", raw, 368, self.inode_checksum(raw))
        return bytes(raw)


def ftype_of(mode):
    for t, f in (("reg", st.S_ISREG), ("dir", st.S_ISDIR), ("symlink", st.S_ISLNK),
                 ("chr", st.S_ISCHR), ("blk", st.S_ISBLK), ("fifo", st.S_ISFIFO),
                 ("sock", st.S_ISSOCK)):
        if f(mode):
            return t
    return "unknown"


def flip(img, addr, off, data):
    b = bytearray(img.block(addr))
    b[off:off + len(data)] = data
    img.write_block(addr, bytes(b))


def corrupt(img, what, path):
    """Corrupt one structure; returns a dict that names it and its block."""
    r = {"what": what}
    if what == "sb-primary":
        # Break the magic of super block #0 only; #1 (block 1) stays valid.
        img.f.seek(SB_OFF)
        img.f.write(b"\xde\xad\xbe\xef")
        r.update(structure="super block", block=0, byte=SB_OFF)
    elif what == "sb-both":
        for i in (0, 1):
            img.f.seek(i * BLK + SB_OFF)
            img.f.write(bytes(3072))
        r.update(structure="super block", block=0, blocks=[0, 1])
    elif what in ("cp-current", "cp-both"):
        packs = [img.cp_addr] if what == "cp-current" else img.cp_packs
        for a in packs:
            # Flip bytes inside the CRC-covered header: the pack's checksum fails.
            flip(img, a, 8, b"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8")
        r.update(structure="checkpoint", block=packs[0], blocks=packs,
                 cp_versions=img.cp_versions, current_pack=img.cp_index)
    elif what in ("nat", "nat-block"):
        ino = img.resolve(path)
        _, addr, where = img.nat_lookup(ino.nid)
        bad = img.block_count + 12345
        if where == "journal":
            sa, jo = img.nat_journal_where
            _, _, i = img.nat_journal[ino.nid]
            flip(img, sa, jo + 2 + 13 * i + 4 + 1 + 4, struct.pack("<I", bad))
            r.update(structure="NAT", block=sa, in_journal=True, nid=ino.nid, bad_addr=bad)
        elif what == "nat":
            nb, i = where
            flip(img, nb, 9 * i + 5, struct.pack("<I", bad))
            r.update(structure="NAT", block=nb, nid=ino.nid, entry=i, bad_addr=bad)
        else:
            nb, i = where
            img.write_block(nb, bytes((x * 37 + 11) & 0xFF for x in range(BLK)))
            r.update(structure="NAT", block=nb, nid=ino.nid)
        r["inode_block"] = addr
    elif what == "inode":
        ino = img.resolve(path)
        raw = bytearray(ino.raw)
        # Footer nid/ino that do not match the NAT entry, and a mode of no file type.
        struct.pack_into("<II", raw, 4072, ino.nid + 7777, ino.nid + 7777)
        struct.pack_into("<H", raw, 0, 0o170777)
        img.write_block(ino.blkaddr, bytes(raw))
        r.update(structure="inode", block=ino.blkaddr, ino=ino.nid)
    elif what == "dnode-self":
        # The first direct-node pointer names the inode itself (Linux fix
        # c18ecd99e0c7): a valid checksum, so only the tree walk can tell.
        ino = img.resolve(path)
        raw = bytearray(ino.raw)
        struct.pack_into("<I", raw, 4052, ino.nid)
        if img.feature & FEAT_INODE_CHKSUM and ino.extra_isize >= 12:
            struct.pack_into("<I", raw, 368, img.inode_checksum(bytes(raw)))
        img.write_block(ino.blkaddr, bytes(raw))
        r.update(structure="node", block=ino.blkaddr, ino=ino.nid)
    elif what == "inline-xattr":
        # i_inline says inline xattrs and no extra attributes, with a huge
        # i_inline_xattr_size (Linux fix 5c1768b67250): without extra
        # attributes the checksum is not checked, so the inode must be.
        ino = img.resolve(path)
        raw = bytearray(ino.raw)
        raw[3] = 0x01
        struct.pack_into("<H", raw, 362, 2048)
        img.write_block(ino.blkaddr, bytes(raw))
        r.update(structure="inode", block=ino.blkaddr, ino=ino.nid)
    elif what == "dentry":
        ino = img.resolve(path)
        blks = img.dentry_blocks(ino)
        if not blks:
            raise F2fsError("%s has inline dentries; no dentry block to corrupt" % path)
        idx, a = blks[0]
        b = bytearray(img.block(a))
        # Every slot in use, every entry with a name longer than F2FS_NAME_LEN
        # (the kernel's readdir fails with EFSCORRUPTED on that; a zero length
        # it only skips with a warning), a bad inode number and a bad type.
        b[0:27] = b"\xff" * 27
        for i in range(214):
            struct.pack_into("<IIHB", b, 30 + 11 * i, 0x12345678, 0xFFFFFF00 + i, 300, 0xEE)
        img.write_block(a, bytes(b))
        r.update(structure="dentry", block=a, ino=ino.nid, index=idx)
    elif what == "cluster":
        ino = img.resolve(path)
        if not ino.compressed:
            raise F2fsError("%s is not a compressed file" % path)
        cache = {}
        for i in range(0, img.nblocks(ino), ino.cluster_size):
            if img.bmap(ino, i, cache) == COMPRESS_ADDR:
                a = img.bmap(ino, i + 1, cache)
                # clen far beyond the cluster: the header cannot be valid.
                flip(img, a, 0, struct.pack("<I", 0x7FFFFF00))
                r.update(structure="compress", block=a, ino=ino.nid, cluster=i // ino.cluster_size,
                         file_block=i)
                break
        else:
            raise F2fsError("%s has no compressed cluster" % path)
    else:
        raise F2fsError("unknown corruption %r" % what)
    return r


def make_hole(img, path, size):
    """Turn an empty (inline) regular file into a hole-only file of `size` bytes."""
    ino = img.resolve(path)
    if not st.S_ISREG(ino.mode) or ino.size != 0:
        raise F2fsError("%s: need an empty regular file" % path)
    raw = bytearray(ino.raw)
    raw[3] &= ~(F2FS_INLINE_DATA | F2FS_DATA_EXIST) & 0xFF
    struct.pack_into("<Q", raw, 16, size)
    # i_addr (past the extra attributes, before inline xattrs) and i_nid all NULL.
    base = 360 + ino.extra_isize
    end = 360 + 4 * (ADDRS_PER_INODE - ino.inline_xattr_addrs)
    raw[base:end] = bytes(end - base)
    raw[4052:4072] = bytes(20)
    img.write_block(ino.blkaddr, img.fix_inode_checksum(bytes(raw)))
    return {"ino": ino.nid, "block": ino.blkaddr, "size": size}


def extract(img, dest):
    """Write the image's tree under dest (a second opinion beside `uf2fs get`)."""
    os.makedirs(dest, exist_ok=True)
    seen = {}
    dirs = []
    errors = []

    def setattrs(path, ino, is_link):
        try:
            os.lchown(path, ino.uid, ino.gid)
        except OSError as e:
            errors.append("%s: chown: %s" % (path, e.strerror))
        for k, v in img.xattrs(ino).items():
            try:
                os.setxattr(path, k, v, follow_symlinks=False)
            except OSError as e:
                errors.append("%s: setxattr %s: %s" % (path, k, e.strerror))
        if not is_link:
            os.chmod(path, st.S_IMODE(ino.mode))

    def walk(ino, path):
        for name, cino, ft in img.readdir(ino):
            if name in (b".", b".."):
                continue
            p = os.path.join(path, os.fsdecode(name))
            if cino in seen:
                os.link(seen[cino], p)
                continue
            c = img.inode(cino)
            if st.S_ISDIR(c.mode):
                os.mkdir(p)
                walk(c, p)
                dirs.append((p, c))
                continue
            if st.S_ISREG(c.mode):
                with open(p, "wb") as f:
                    f.write(img.read_data(c))
                if c.links > 1:
                    seen[cino] = p
            elif st.S_ISLNK(c.mode):
                os.symlink(img.read_data(c), p)
            else:
                errors.append("%s: special file (mode %o) not extracted" % (p, c.mode))
                continue
            setattrs(p, c, st.S_ISLNK(c.mode))
            ns = c.mtime * 10**9 + c.mtime_nsec
            os.utime(p, ns=(c.atime * 10**9 + c.atime_nsec, ns), follow_symlinks=False)

    root = img.inode(img.root_ino)
    walk(root, dest)
    dirs.append((dest, root))
    for p, c in dirs:
        setattrs(p, c, False)
        os.utime(p, ns=(c.atime * 10**9 + c.atime_nsec, c.mtime * 10**9 + c.mtime_nsec))
    return errors


def quota_usage(img):
    """Usage as fsck.f2fs counts it: each inode under the root once, (i_blocks - 1) blocks."""
    FEAT_PRJQUOTA = 0x10
    seen, todo, use = set(), [img.root_ino], {}
    while todo:
        nid = todo.pop()
        if nid in seen:
            continue
        seen.add(nid)
        ino = img.inode(nid)
        projid = 0
        if img.feature & FEAT_PRJQUOTA and ino.inline & F2FS_EXTRA_ATTR and ino.extra_isize >= 8:
            projid = struct.unpack_from("<I", ino.raw, 364)[0]
        for kind, qid in (("user", ino.uid), ("group", ino.gid), ("project", projid)):
            sp, n = use.get((kind, qid), (0, 0))
            use[(kind, qid)] = (sp + (ino.blocks - 1) * 4096, n + 1)
        if st.S_ISDIR(ino.mode):
            todo += [c for name, c, _ in img.readdir(ino) if name not in (b".", b"..")]
    return use


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, path = argv[1], argv[2]
    args = argv[3:]
    writable = cmd in ("corrupt", "make-hole")
    try:
        img = Image(path, writable)
        if cmd == "info":
            print(json.dumps({
                "sb_index": img.sb_index, "block_count": img.block_count,
                "feature": img.feature, "blocks_per_seg": img.blocks_per_seg,
                "cp_blkaddr": img.cp_blkaddr, "cp_packs": img.cp_packs,
                "cp_versions": img.cp_versions, "cp_current": img.cp_index,
                "ckpt_flags": img.ckpt_flags, "nat_blkaddr": img.nat_blkaddr,
                "sit_blkaddr": img.sit_blkaddr, "ssa_blkaddr": img.ssa_blkaddr,
                "main_blkaddr": img.main_blkaddr, "root_ino": img.root_ino,
                "nat_journal_nids": sorted(img.nat_journal)}, indent=1))
        elif cmd == "stat":
            ino = img.resolve(args[0])
            d = ino.to_json()
            _, addr, where = img.nat_lookup(ino.nid)
            d["type"] = ftype_of(ino.mode)
            d["nat"] = where if where == "journal" else {"block": where[0], "index": where[1]}
            if img.feature & FEAT_INODE_CHKSUM and ino.extra_isize >= 12:
                d["checksum_ok"] = img.inode_checksum(ino.raw) == struct.unpack_from("<I", ino.raw, 368)[0]
            print(json.dumps(d, indent=1))
        elif cmd == "ls":
            for name, cino, ft in img.readdir(img.resolve(args[0] if args else "/")):
                print("%s %d %s" % (name.decode("utf-8", "replace"), cino, FT_NAMES.get(ft, ft)))
        elif cmd == "cat":
            sys.stdout.buffer.write(img.read_data(img.resolve(args[0])))
        elif cmd == "xattrs":
            x = img.xattrs(img.resolve(args[0]))
            print(json.dumps({k: v.hex() for k, v in sorted(x.items())}, indent=1))
        elif cmd == "bmap":
            ino = img.resolve(args[0])
            cache = {}
            print(json.dumps([img.bmap(ino, i, cache) for i in range(img.nblocks(ino))]))
        elif cmd == "dentry-blocks":
            print(json.dumps([a for _, a in img.dentry_blocks(img.resolve(args[0]))]))
        elif cmd == "quota-usage":
            for (kind, qid), (sp, n) in sorted(quota_usage(img).items()):
                print("%s %d %d %d" % (kind, qid, sp, n))
        elif cmd == "extract":
            for e in extract(img, args[0]):
                print("f2fsimg: %s" % e, file=sys.stderr)
        elif cmd == "make-hole":
            print(json.dumps(make_hole(img, args[0], int(args[1]))))
        elif cmd == "corrupt":
            print(json.dumps(corrupt(img, args[0], args[1] if len(args) > 1 else None)))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except F2fsError as e:
        print("f2fsimg: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
