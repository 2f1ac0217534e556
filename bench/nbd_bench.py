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
"""
import os
import shutil
import statistics
import subprocess
import time

MIB = 1 << 20
SOURCES = ("local", "nbd", "qraw", "qcow2")


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


def serve(argv, sock):
    """A server in the foreground of a child, once its socket is there."""
    proc = subprocess.Popen(argv)
    for _ in range(100):
        if os.path.exists(sock):
            return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("%s did not start" % argv[0])


def run_nbd(base, uf2fs, size, bss, reps, runtime, fio, log):
    """Returns {"samples": {(workload, bs, source): [MiB/s]}, "error": str or None}."""
    res = {"samples": {}, "error": None, "size": size}
    kit = qraw = None
    sock = os.path.join(base, "nbd.sock")
    qsock = os.path.join(base, "qraw.sock")
    mnt = os.path.join(base, "mnt-nbd")
    img = qcow = None
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
        qraw = serve(["qemu-nbd", "--cache=writeback", "--discard=unmap", "-k", qsock,
                      "-x", "", "--persistent", "--shared=4", "--image-opts",
                      "driver=raw,file.driver=file,file.locking=off,file.filename=" + img],
                     qsock)
        images = {"local": img, "nbd": "nbd+unix:///?socket=" + sock,
                  "qraw": "nbd+unix:///?socket=" + qsock, "qcow2": qcow}
        for _ in range(reps):
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
        for p in (kit, qraw):
            if p:
                p.terminate()
                p.wait()
        for p in (img, qcow):
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
    if res["error"]:
        md.append("\nincomplete: %s" % res["error"])
    return "\n".join(md) + "\n"
