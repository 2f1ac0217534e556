#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Asynchronous O_DIRECT writes beside buffered readers (xfstests generic/451's
# case): io_uring writes a whole 640 KiB file with O_DIRECT, alternating two
# patterns, and after each completion a buffered read must see the new data,
# while two processes keep reading the file through the page cache. The kernel
# drops cached pages before an O_DIRECT write and, for an asynchronous one,
# not after it, so a reader that fetched the range in between left the old
# data cached; the daemon drops the range after writing it
# (fuse_write_direct_done). Under the read-write default (writeback_cache),
# no_writeback_cache and direct_io (no kept pages); each ends fsck-clean.
set -u
. "$(dirname "$0")/../lib/common.sh"
need_root
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd cc
tmpdir_init dio-coherence
IMG=$TMP/dio.img MNT=$TMP/mnt
SECS=${DIO_SECS:-6}

cat >"$TMP/dio.c" <<'CEOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <liburing.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIZE (640 * 1024)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *path = argv[1];
	double secs = argc > 2 ? atof(argv[2]) : 10;
	int readers = argc > 3 ? atoi(argv[3]) : 2;
	static char cmp[SIZE];
	struct io_uring ring;
	pid_t pids[16];
	char *buf;
	long cycles = 0;
	int fd, bad = 0;

	fd = open(path, O_CREAT | O_RDWR | O_DIRECT, 0600);
	if (fd < 0 || posix_memalign((void **)&buf, 4096, SIZE) || io_uring_queue_init(4, &ring, 0)) {
		perror("setup");
		return 2;
	}
	memset(buf, 0, SIZE);
	if (pwrite(fd, buf, SIZE, 0) != SIZE) {
		perror("first write");
		return 2;
	}
	for (int i = 0; i < readers; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			for (;;) {
				int r = open(path, O_RDONLY);

				if (r < 0 || pread(r, cmp, SIZE, 0) < 0)
					_exit(3);
				close(r);
			}
		}
	}
	for (double end = now() + secs; now() < end && !bad; cycles++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;
		int r;

		memset(buf, cycles & 1 ? 0xaa : 0x55, SIZE);
		io_uring_prep_write(sqe, fd, buf, SIZE, 0);
		io_uring_submit(&ring);
		if (io_uring_wait_cqe(&ring, &cqe) || cqe->res != SIZE) {
			fprintf(stderr, "write: %d\n", cqe ? cqe->res : -1);
			bad = 2;
			break;
		}
		io_uring_cqe_seen(&ring, cqe);
		r = open(path, O_RDONLY);
		if (r < 0 || pread(r, cmp, SIZE, 0) != SIZE) {
			perror("check read");
			bad = 2;
			break;
		}
		close(r);
		for (int i = 0; i < SIZE; i++)
			if (cmp[i] != buf[i]) {
				fprintf(stderr, "cycle %ld: byte %d is %02x after the write of %02x: "
					"stale cached page\n", cycles, i, cmp[i] & 0xff, buf[i] & 0xff);
				bad = 1;
				break;
			}
	}
	for (int i = 0; i < readers; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	printf("%ld cycles\n", cycles);
	return bad;
}
CEOF
cc -O2 -Wall -o "$TMP/dio" "$TMP/dio.c" -luring || fail "cannot build the O_DIRECT helper"

truncate -s 256M "$IMG"
mkfs.f2fs -q -f "$IMG" >/dev/null || fail "mkfs.f2fs"
for opts in rw rw,no_writeback_cache rw,direct_io; do
	step "io_uring O_DIRECT writes, buffered readers: -o $opts"
	mount_uf2fs "$IMG" "$MNT" "$opts" || fail "mount -o $opts"
	out=$("$TMP/dio" "$MNT/f" "$SECS" 2 2>&1)
	rc=$?
	log "$out"
	[ $rc = 0 ] || fail "-o $opts: $out"
	cycles=${out%% cycles*}
	[ "$cycles" -ge 50 ] || fail "-o $opts: only $cycles write cycles in $SECS s"
	umount_uf2fs "$MNT" || fail "umount"
	fsck_clean "$IMG" || fail "fsck after -o $opts"
done
pass
