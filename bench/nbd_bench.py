# SPDX-License-Identifier: GPL-2.0
"""Images that are not a local raw file (bench.py part "nbd", lib/dev/nbd.c).

One f2fs image holding a BENCH_NBD_SIZE data file (default 128M; smoke 32M) is
mounted read-write through uf2fs three ways, each a new FUSE daemon per
measurement:
  local   the raw image file, opened directly (psync)
  nbd     the same file served by nbdkit's file plugin over a Unix socket
          (nbd+unix:///?socket=...)
  qraw    the same file served by qemu-nbd -f raw over a Unix socket: the
          transport qcow2 goes through, without the format
  qcow2   its qemu-img conversion to qcow2, through the qemu-nbd uf2fs starts
Per bs (4k, 64k, 1M): fio sequential read of the data file on a fresh mount
(the FUSE page cache starts empty), and a sequential write of a new file of the
same size with end_fsync, removed afterwards. Reported as MiB/s and as ratios
nbd/local and qcow2/local (the goal of issue 19: >= 0.8 at 64k and 1M), and
qcow2/qraw: what the format costs over the same qemu-nbd transport.

The wire (bench/nbd_wire.c, when built): the same nbdkit over a Unix socket
moving a scratch file into and out of a plain libnbd client, no FUSE and no
uf2fs, in a few shapes (connections x commands in flight x 1 MiB), once per
rep. Every byte of the nbd rows crosses that wire, so it is their ceiling the
way passthrough_ll is the FUSE rows'.
"""
import os
import shutil
import statistics
import subprocess
import time

MIB = 1 << 20
SOURCES = ("local", "nbd", "qraw", "qcow2")
# (connections, commands in flight per connection, command size): uf2fs's
# own read window first (one handle, two 1 MiB FUSE reads in flight)
WIRE_SHAPES = ((1, 2, MIB), (1, 4, MIB), (2, 2, MIB))


class Mount:
    """uf2fs mount IMAGE MNT -f -o rw, waited for; umount() waits for the daemon."""

    def __init__(self, uf2fs, image, mnt):
        os.makedirs(mnt, exist_ok=True)
        self.mnt = mnt
        self.proc = subprocess.Popen([uf2fs, "mount", image, mnt, "-f", "-o", "rw"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        for _ in range(300):
            if os.path.ismount(mnt):
                return
            if self.proc.poll() is not None:
                raise RuntimeError("mount of %s failed: %s" % (image, self.proc.stdout.read()))
            time.sleep(0.1)
        self.proc.kill()
        raise RuntimeError("mount of %s timed out" % image)

    def umount(self):
        subprocess.run(["fusermount3", "-u", self.mnt], check=False)
        out, _ = self.proc.communicate(timeout=120)
        if self.proc.returncode:
            raise RuntimeError("uf2fs exited %d: %s" % (self.proc.returncode, out[-300:]))


def make_image(base, size, log):
    img = os.path.join(base, "nbd-local.img")
    with open(img, "wb") as f:
        f.truncate(size * 3 + 128 * MIB)
    subprocess.run(["mkfs.f2fs", "-q", "-f", img], check=True, stdout=subprocess.DEVNULL)
    return img


def serve(argv, sock, env=None):
    """A server in the foreground of a child, once its socket is there."""
    proc = subprocess.Popen(argv, env=env)
    for _ in range(100):
        if os.path.exists(sock):
            return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("%s did not start" % argv[0])


def wire_file(base, size):
    """A scratch file of random bytes for the wire rows (reads then writes)."""
    path = os.path.join(base, "nbd-wire.img")
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 16 * MIB)
            f.write(os.urandom(n))
            left -= n
    return path


def measure_wire(wire, uri, size, res, log):
    for conns, depth, cmd in WIRE_SHAPES:
        for wl in ("read", "write"):
            out = subprocess.run([wire, uri, wl, str(size), str(conns), str(depth), str(cmd)],
                                 capture_output=True, text=True, check=True).stdout
            res["wire"].setdefault((wl, "%dx%dx%dM" % (conns, depth, cmd // MIB)),
                                   []).append(float(out))
            log("nbd wire: %s %d conn x %d x %d MiB: %s MiB/s" % (
                wl, conns, depth, cmd // MIB, out.strip()))


def run_nbd(base, uf2fs, size, bss, reps, runtime, fio, log, wire=None):
    """Returns {"samples": {(workload, bs, source): [MiB/s]}, "wire": {(workload, shape):
    [MiB/s]}, "error": str or None}."""
    res = {"samples": {}, "wire": {}, "error": None, "size": size}
    kit = qraw = wkit = None
    sock = os.path.join(base, "nbd.sock")
    qsock = os.path.join(base, "qraw.sock")
    wsock = os.path.join(base, "wire.sock")
    mnt = os.path.join(base, "mnt-nbd")
    img = qcow = wimg = None
    # long enough to time: 512 MiB for the default 128M rows, 128 MiB for quick runs
    wsize = max(4 * size, 128 * MIB)
    try:
        for tool in ("nbdkit", "qemu-nbd", "qemu-img"):
            if not shutil.which(tool):
                raise RuntimeError("%s is missing (Debian: nbdkit, qemu-utils)" % tool)
        img = make_image(base, size, log)
        m = Mount(uf2fs, img, mnt)
        with open(os.path.join(mnt, "data"), "wb") as f:
            left = size
            while left:
                n = min(left, 16 * MIB)
                f.write(os.urandom(n))
                left -= n
        m.umount()
        qcow = os.path.join(base, "nbd-local.qcow2")
        subprocess.run(["qemu-img", "convert", "-f", "raw", "-O", "qcow2", img, qcow],
                       check=True)
        kit = serve(["nbdkit", "-f", "-U", sock, "file", img], sock)
        # --cache=writeback --discard=unmap: as the qemu-nbd uf2fs starts for qcow2
        # file.locking=off: qemu's byte-range locks would keep the local mount out
        # MALLOC_*_: the malloc thresholds uf2fs gives its own qemu-nbd (lib/dev/nbd.c)
        qraw = serve(["qemu-nbd", "--cache=writeback", "--discard=unmap", "-k", qsock,
                      "-x", "", "--persistent", "--shared=4", "--image-opts",
                      "driver=raw,file.driver=file,file.locking=off,file.filename=" + img],
                     qsock, env=dict(os.environ, MALLOC_MMAP_THRESHOLD_="33554432",
                                     MALLOC_TRIM_THRESHOLD_="67108864"))
        images = {"local": img, "nbd": "nbd+unix:///?socket=" + sock,
                  "qraw": "nbd+unix:///?socket=" + qsock, "qcow2": qcow}
        if wire:
            wimg = wire_file(base, wsize)
            wkit = serve(["nbdkit", "-f", "-U", wsock, "file", wimg], wsock)
        for _ in range(reps):
            if wire:
                measure_wire(wire, "nbd+unix:///?socket=" + wsock, wsize, res, log)
            for bs in bss:
                for src in SOURCES:
                    m = Mount(uf2fs, images[src], mnt)
                    try:
                        r = fio(os.path.join(mnt, "data"), bs, size, runtime)
                        w = fio(os.path.join(mnt, "w"), bs, size, runtime, rw="write",
                                extra=("--end_fsync=1",))
                        os.unlink(os.path.join(mnt, "w"))
                    finally:
                        m.umount()
                    res["samples"].setdefault(("read", bs, src), []).append(r)
                    res["samples"].setdefault(("write", bs, src), []).append(w)
                    log("nbd: %s bs %s: read %.0f, write %.0f MiB/s" % (src, bs, r, w))
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        res["error"] = str(e)[-400:]
        log("nbd: %s" % res["error"])
    finally:
        for p in (kit, qraw, wkit):
            if p:
                p.terminate()
                p.wait()
        for p in (img, qcow, wimg):
            if p and os.path.exists(p):
                os.unlink(p)
    return res


def report(res, bss):
    title = "\n## Images over NBD and in qcow2 (lib/dev/nbd.c)\n\n"
    if res["error"] and not res["samples"]:
        return title + "not measured: %s\n" % res["error"]
    s = res["samples"]
    med = lambda k: statistics.median(s[k]) if k in s else None  # noqa: E731
    md = [title.rstrip("\n"), "",
          "fio sequential read of a %d MiB file and write of a new one (end_fsync) through a "
          "uf2fs FUSE mount -o rw of: the raw image (local), the same file served by nbdkit "
          "over a Unix socket (nbd), the same file served by "
          "qemu-nbd -f raw (qraw), its qcow2 conversion through qemu-nbd (qcow2). MiB/s, "
          "median; goal: nbd/local and qcow2/local >= 0.8 at 64k and 1M; qcow2/qraw is the "
          "format's own cost." % (res["size"] // MIB),
          "", "| workload | bs | " + " | ".join(SOURCES) +
          " | nbd/local | qcow2/local | qcow2/qraw |",
          "|---|---|" + "---:|" * (len(SOURCES) + 3)]
    ratio = lambda a, b: "%.2f" % (a / b) if a and b else "n/a"  # noqa: E731
    for wl in ("read", "write"):
        for bs in bss:
            v = dict((src, med((wl, bs, src))) for src in SOURCES)
            cells = ["%.0f" % v[x] if v[x] else "n/a" for x in SOURCES]
            cells += [ratio(v["nbd"], v["local"]), ratio(v["qcow2"], v["local"]),
                      ratio(v["qcow2"], v["qraw"])]
            md.append("| %s | %s | %s |" % (wl, bs, " | ".join(cells)))
    md += report_wire(res, med)
    if res["error"]:
        md.append("\nincomplete: %s" % res["error"])
    return "\n".join(md) + "\n"


def report_wire(res, med):
    """The wire rows, and the nbd rows at 1M as a share of the wire at uf2fs's window."""
    w = res.get("wire") or {}
    if not w:
        return []
    md = ["", "The NBD wire alone (bench/nbd_wire.c: a libnbd client and the same nbdkit "
          "over a Unix socket, a scratch file, no FUSE, no uf2fs), median MiB/s; shape = "
          "connections x commands in flight x command size:", "",
          "| shape | read | write |", "|---|---:|---:|"]
    for conns, depth, cmd in WIRE_SHAPES:
        shape = "%dx%dx%dM" % (conns, depth, cmd // MIB)
        cells = [w.get((wl, shape)) for wl in ("read", "write")]
        md.append("| %s%s | %s |" % (shape, " (uf2fs's read window)" if shape == "1x2x1M" else "",
                                     " | ".join("%.0f" % statistics.median(c) if c else "n/a"
                                                for c in cells)))
    shares = []
    for wl in ("read", "write"):
        nbd, wire = med((wl, "1M", "nbd")), w.get((wl, "1x2x1M"))
        if nbd and wire:
            shares.append("%s %.2f" % (wl, nbd / statistics.median(wire)))
    if shares:
        md += ["", "nbd through uf2fs at 1M as a share of the wire at uf2fs's window: " +
               ", ".join(shares) + "."]
    return md
