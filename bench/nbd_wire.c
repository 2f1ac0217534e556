// SPDX-License-Identifier: GPL-2.0
/*
 * The NBD wire ceiling for bench/nbd_bench.py: how fast bytes cross from an
 * NBD server into this process's memory with nothing else in the way (no
 * FUSE, no uf2fs, no page cache on our side). Every byte uf2fs reads from an
 * NBD image crosses this wire first, so the best rate found here over every
 * shape (connections x commands in flight x command size) bounds what any
 * uf2fs read through that server can reach on this machine; the same holds
 * for writes.
 *
 *   nbd_wire URI read|write SIZE CONNS DEPTH BS
 *
 * CONNS threads each open their own handle and move their own slice of
 * [0, SIZE) with DEPTH commands of BS bytes in flight (libnbd's asynchronous
 * API); a write run ends with a FLUSH on each handle, as uf2fs's end_fsync
 * does. Prints MiB/s on one line.
 */
#include <errno.h>
#include <libnbd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct wire_job {
	const char *uri;
	bool write;
	uint64_t off, len, bs;
	unsigned int depth;
	int err;
};

static int wire_fail(struct wire_job *j, struct nbd_handle *h)
{
	fprintf(stderr, "nbd_wire: %s\n", nbd_get_error());
	j->err = -EIO;
	if (h)
		nbd_close(h);
	return -EIO;
}

/* Keeps DEPTH commands in flight until the slice is done. */
static int wire_slice(struct wire_job *j, struct nbd_handle *h, char *buf)
{
	uint64_t next = j->off, end = j->off + j->len;
	int64_t cookies[64];
	unsigned int slot;

	for (slot = 0; slot < j->depth; slot++)
		cookies[slot] = 0;
	for (;;) {
		bool busy = false;

		for (slot = 0; slot < j->depth; slot++) {
			char *b = buf + slot * j->bs;

			if (cookies[slot] > 0) {
				int r = nbd_aio_command_completed(h, cookies[slot]);

				if (r < 0)
					return -EIO;
				if (!r) {
					busy = true;
					continue;
				}
				cookies[slot] = 0;
			}
			if (next >= end)
				continue;
			uint64_t n = end - next < j->bs ? end - next : j->bs;

			cookies[slot] = j->write ?
				nbd_aio_pwrite(h, b, n, next, NBD_NULL_COMPLETION, 0) :
				nbd_aio_pread(h, b, n, next, NBD_NULL_COMPLETION, 0);
			if (cookies[slot] < 0)
				return -EIO;
			next += n;
			busy = true;
		}
		if (!busy)
			return 0;
		if (nbd_poll(h, -1) < 0)
			return -EIO;
	}
}

static void *wire_main(void *arg)
{
	struct wire_job *j = arg;
	struct nbd_handle *h = nbd_create();
	char *buf;

	if (!h || nbd_set_pread_initialize(h, false) < 0 || nbd_connect_uri(h, j->uri) < 0) {
		wire_fail(j, h);
		return NULL;
	}
	buf = malloc(j->depth * j->bs);
	if (!buf) {
		j->err = -ENOMEM;
		nbd_close(h);
		return NULL;
	}
	memset(buf, 0x5a, j->depth * j->bs);
	if (wire_slice(j, h, buf) < 0 || (j->write && nbd_flush(h, 0) < 0))
		wire_fail(j, NULL);
	free(buf);
	nbd_close(h);
	return NULL;
}

int main(int argc, char **argv)
{
	struct wire_job jobs[16];
	pthread_t tid[16];
	struct timespec t0, t1;
	unsigned int conns, i;
	uint64_t size, slice;
	int err = 0;

	if (argc != 7) {
		fprintf(stderr, "usage: nbd_wire URI read|write SIZE CONNS DEPTH BS\n");
		return 2;
	}
	size = strtoull(argv[3], NULL, 0);
	conns = strtoul(argv[4], NULL, 0);
	if (!conns || conns > 16 || !strtoul(argv[5], NULL, 0) || strtoul(argv[5], NULL, 0) > 64 ||
	    !strtoull(argv[6], NULL, 0) || !size) {
		fprintf(stderr, "nbd_wire: CONNS 1-16, DEPTH 1-64, BS and SIZE > 0\n");
		return 2;
	}
	slice = size / conns;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < conns; i++) {
		jobs[i] = (struct wire_job){
			.uri = argv[1], .write = !strcmp(argv[2], "write"),
			.off = i * slice, .len = i + 1 == conns ? size - i * slice : slice,
			.depth = strtoul(argv[5], NULL, 0), .bs = strtoull(argv[6], NULL, 0),
		};
		if (pthread_create(&tid[i], NULL, wire_main, &jobs[i])) {
			conns = i;
			err = 1;
			break;
		}
	}
	for (i = 0; i < conns; i++) {
		pthread_join(tid[i], NULL);
		if (jobs[i].err)
			err = 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err)
		return 1;
	printf("%.1f\n", size / 1048576.0 /
	       (t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9));
	return 0;
}
