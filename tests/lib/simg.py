#!/usr/bin/env python3
"""Android sparse image (simg) helper for the tests: list chunks, make
corrupt variants of a real sparse image, or a tiny synthetic one.

  simg.py chunks FILE             one line per chunk: type blocks total_sz
  simg.py corrupt KIND IN OUT     write IN with one defect (KINDS below; crc-blocks
                                  needs a crc32 chunk, as synth's)
  simg.py corrupt-all IN PREFIX   every defect: PREFIX-KIND.simg (python starts once)
  simg.py synth OUT               a small valid image: raw, fill, don't-care, crc32
  simg.py add-crc IN OUT [header] IN with a crc32 chunk after every raw chunk (and
                                  the header's image_checksum set, with "header")
  simg.py corrupt-crc IN PREFIX   checksum defects of an add-crc image: writes
                                  PREFIX-KIND.simg, prints "KIND CHUNK BYTE" for each
                                  (the first chunk that must mismatch, its file offset;
                                  "header 24" for image_checksum)
  simg.py libsparse-crc IN OUT    libsparse's own writer (sparse_file_write, crc on)
  simg.py libsparse-check FILE    exit 1 if libsparse's reader (crc on) rejects FILE

The format (libsparse's sparse_format.h): a 28-byte header (le32 magic
0xed26ff3a, le16 major 1, le16 minor, le16 file_hdr_sz 28, le16
chunk_hdr_sz 12, le32 blk_sz, le32 total_blks, le32 total_chunks, le32
checksum), then chunks of a 12-byte header (le16 type, le16 reserved, le32
chunk_sz in blocks, le32 total_sz in bytes incl. the header) and a payload.
"""
import ctypes
import glob
import mmap
import os
import shutil
import struct
import sys
import zlib

HDR = struct.Struct('<IHHHHIIII')
CHUNK = struct.Struct('<HHII')
RAW, FILL, DONT_CARE, CRC32 = 0xCAC1, 0xCAC2, 0xCAC3, 0xCAC4


def parse(data):
    h = list(HDR.unpack_from(data, 0))
    chunks, pos = [], h[3]
    for _ in range(h[7]):
        t, _, sz, tot = CHUNK.unpack_from(data, pos)
        chunks.append((pos, t, sz, tot))
        pos += tot
    return h, chunks


def first(chunks, ctype):
    return next(c for c in chunks if c[1] == ctype)


def set_hdr(data, field, value):
    h = list(HDR.unpack_from(data, 0))
    h[field] = value
    HDR.pack_into(data, 0, *h)


def set_chunk(data, pos, field, value):
    c = list(CHUNK.unpack_from(data, pos))
    c[field] = value
    CHUNK.pack_into(data, pos, *c)


def corrupt(kind, data):
    """One defect, made in data (writable bytes); returns the length to cut
    the file to. Fields: 1 major, 3 file_hdr_sz, 4 chunk_hdr_sz, 5 blk_sz,
    6 total_blks, 7 total_chunks."""
    h, chunks = parse(data)
    raw = first(chunks, RAW)
    if kind == 'version':
        set_hdr(data, 1, 2)
    elif kind == 'file-hdr-sz':
        set_hdr(data, 3, 20)
    elif kind == 'chunk-hdr-sz':
        set_hdr(data, 4, 8)
    elif kind == 'blk-sz':
        set_hdr(data, 5, 4094)
    elif kind == 'total-blks':          # chunks cover fewer blocks than declared
        set_hdr(data, 6, h[6] + 1)
    elif kind == 'beyond-end':          # the last chunk runs past total_blks
        set_hdr(data, 6, h[6] - 1)
    elif kind == 'total-chunks':        # one more chunk than the file holds
        set_hdr(data, 7, h[7] + 1)
    elif kind == 'chunk-size':          # a raw chunk's blocks disagree with its bytes
        set_chunk(data, raw[0], 2, raw[2] + 1)
    elif kind == 'crc-blocks':          # a crc32 chunk covering blocks (it covers none)
        set_chunk(data, first(chunks, CRC32)[0], 2, 1)
    elif kind == 'magic-bit':           # one bit of the magic off, the rest a sparse header
        set_hdr(data, 0, h[0] ^ 0x100)
    elif kind == 'magic-zero':          # no magic, the layout fields a sparse header's
        set_hdr(data, 0, 0)
    elif kind == 'magic-bit-version':   # magic a bit off and a major version of 2
        set_hdr(data, 0, h[0] ^ 0x10000)
        set_hdr(data, 1, 2)
    elif kind == 'file-hdr-sz-big':     # a header size past the end of the file
        set_hdr(data, 3, 0xFFFF)
    elif kind == 'fill-size':           # a fill chunk's total_sz is not 12 + 4
        set_chunk(data, first(chunks, FILL)[0], 3, 20)
    elif kind == 'chunk-type':
        set_chunk(data, raw[0], 0, 0xCAFE)
    elif kind == 'huge-chunk':          # a raw chunk claiming 2^32-1 blocks, sizes agreeing
        set_chunk(data, raw[0], 2, 0xFFFFFFFF)
        set_chunk(data, raw[0], 3, (12 + 0xFFFFFFFF * h[5]) & 0xFFFFFFFF)
    elif kind == 'truncated-data':      # the file ends inside the last raw chunk's data
        last = [c for c in chunks if c[1] == RAW][-1]
        return last[0] + 12 + 100
    elif kind == 'truncated-header':    # the file ends inside a chunk header
        return chunks[-1][0] + 5
    elif kind == 'short':               # shorter than the file header
        return 20
    else:
        sys.exit('simg.py: unknown defect ' + kind)
    return len(data)


KINDS = ['version', 'file-hdr-sz', 'chunk-hdr-sz', 'blk-sz', 'total-blks', 'beyond-end',
         'total-chunks', 'chunk-size', 'crc-blocks', 'chunk-type', 'huge-chunk', 'truncated-data',
         'truncated-header', 'short', 'magic-bit', 'magic-zero', 'magic-bit-version',
         'file-hdr-sz-big', 'fill-size']


def expand(data, chunk):
    """The expanded bytes of one chunk (crc32 chunks expand to nothing)."""
    h = HDR.unpack_from(data, 0)
    pos, t, sz, tot = chunk
    if t == RAW:
        return bytes(data[pos + h[4]:pos + h[4] + sz * h[5]])
    if t == FILL:
        return bytes(data[pos + h[4]:pos + h[4] + 4]) * (sz * h[5] // 4)
    return bytes(sz * h[5]) if t == DONT_CARE else b''


def add_crc(data, header):
    """A copy with a crc32 chunk (the CRC32 of the expansion so far) after each raw chunk."""
    h, chunks = parse(data)
    out, crc, n = bytearray(), 0, 0
    for c in chunks:
        out += data[c[0]:c[0] + c[3]]
        crc = zlib.crc32(expand(data, c), crc)
        n += 1
        if c[1] == RAW:
            out += CHUNK.pack(CRC32, 0, 0, 16) + struct.pack('<I', crc)
            n += 1
    h[7] = n
    h[8] = crc if header else 0
    return HDR.pack(*h) + bytes(h[3] - HDR.size) + bytes(out)


def corrupt_crc(src, prefix):
    data = open(src, 'rb').read()
    h, chunks = parse(data)
    crcs = [(i, c) for i, c in enumerate(chunks) if c[1] == CRC32]
    raws = [(i, c) for i, c in enumerate(chunks) if c[1] == RAW]
    # a byte of the second raw chunk's data: the crc32 chunk after it must mismatch
    i, c = raws[min(1, len(raws) - 1)]
    bad = bytearray(data)
    bad[c[0] + h[4] + 100] ^= 0x40
    after = next((j, d) for j, d in crcs if j > i)
    open(prefix + '-crc-data.simg', 'wb').write(bad)
    print('crc-data', after[0], after[1][0])
    # the last crc32 chunk's value
    j, d = crcs[-1]
    bad = bytearray(data)
    bad[d[0] + h[4]] ^= 0x01
    open(prefix + '-crc-value.simg', 'wb').write(bad)
    print('crc-value', j, d[0])
    if h[8]:
        bad = bytearray(data)
        set_hdr(bad, 8, h[8] ^ 0x80000000)
        open(prefix + '-image-checksum.simg', 'wb').write(bad)
        print('image-checksum header 24')


def libsparse():
    # Debian installs it under the multiarch android/ folder, off the loader's path
    found = glob.glob('/usr/lib/*/android/libsparse.so.0') + ['libsparse.so.0']
    lib = ctypes.CDLL(found[0])
    lib.sparse_file_import.restype = ctypes.c_void_p
    lib.sparse_file_import.argtypes = [ctypes.c_int, ctypes.c_bool, ctypes.c_bool]
    lib.sparse_file_write.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_bool,
                                      ctypes.c_bool, ctypes.c_bool]
    lib.sparse_file_destroy.argtypes = [ctypes.c_void_p]
    return lib


def libsparse_import(lib, path, crc):
    fd = os.open(path, os.O_RDONLY)
    s = lib.sparse_file_import(fd, False, crc)
    return fd, s


def synth():
    """4-block image: raw, fill (pattern 0x11223344), crc32, don't-care."""
    body = CHUNK.pack(RAW, 0, 1, 12 + 4096) + bytes(range(256)) * 16
    body += CHUNK.pack(FILL, 0, 2, 16) + struct.pack('<I', 0x11223344)
    body += CHUNK.pack(CRC32, 0, 0, 16) + b'\0\0\0\0'
    body += CHUNK.pack(DONT_CARE, 0, 1, 12)
    return HDR.pack(0xed26ff3a, 1, 0, 28, 12, 4096, 4, 4, 0) + body


def corrupt_copy(kind, src, dst):
    """A copy patched in place: the images can be tens of MiB, the defects bytes."""
    shutil.copyfile(src, dst)
    with open(dst, 'r+b') as f:
        m = mmap.mmap(f.fileno(), 0)
        length = corrupt(kind, m)
        m.close()
        f.truncate(length)


def main():
    cmd = sys.argv[1]
    if cmd == 'chunks':
        _, chunks = parse(open(sys.argv[2], 'rb').read())
        for _, t, sz, tot in chunks:
            print('%04x %d %d' % (t, sz, tot))
    elif cmd == 'corrupt':
        corrupt_copy(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == 'corrupt-all':
        for kind in KINDS:
            if kind != 'crc-blocks':
                corrupt_copy(kind, sys.argv[2], '%s-%s.simg' % (sys.argv[3], kind))
    elif cmd == 'synth':
        open(sys.argv[2], 'wb').write(synth())
    elif cmd == 'add-crc':
        data = bytearray(open(sys.argv[2], 'rb').read())
        open(sys.argv[3], 'wb').write(add_crc(data, len(sys.argv) > 4 and sys.argv[4] == 'header'))
    elif cmd == 'corrupt-crc':
        corrupt_crc(sys.argv[2], sys.argv[3])
    elif cmd == 'libsparse-crc':
        lib = libsparse()
        fd, s = libsparse_import(lib, sys.argv[2], False)
        if not s:
            sys.exit('libsparse cannot read ' + sys.argv[2])
        out = os.open(sys.argv[3], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        if lib.sparse_file_write(s, out, False, True, True):
            sys.exit('sparse_file_write failed')
        lib.sparse_file_destroy(s)
    elif cmd == 'libsparse-check':
        lib = libsparse()
        fd, s = libsparse_import(lib, sys.argv[2], True)
        sys.exit(0 if s else 1)
    elif cmd == 'kinds':
        print(' '.join(KINDS))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
