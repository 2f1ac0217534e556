// SPDX-License-Identifier: GPL-2.0
/*
 * bench/precache IMAGE PATH REPS: time uf2fs_precache_extents (the library
 * side of F2FS_IOC_PRECACHE_EXTENTS, seed 002) without FUSE in the way.
 * Per repetition: a fresh read-only library mount (a cold uf2fs cache), the
 * file resolved, then the call timed once cold and once warm. One JSON line
 * per repetition: {"cold_ms", "warm_ms", "node_reads", "read_requests"}, the
 * counters being what the cold call added. Built by bench/run.sh against
 * $BUILD/libuf2fs.a; public API only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uf2fs/uf2fs.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The first number after "label" in the `uf2fs stats` text, or -1. */
static long long counter(const char *text, const char *label)
{
	const char *p = strstr(text, label);

	return p ? strtoll(p + strlen(label), NULL, 10) : -1;
}

int main(int argc, char **argv)
{
	static char before[16384], after[16384];
	struct uf2fs_options opts;
	int reps = argc > 3 ? atoi(argv[3]) : 1;

	if (argc < 3) {
		fprintf(stderr, "usage: %s IMAGE PATH [REPS]\n", argv[0]);
		return 2;
	}
	for (int r = 0; r < reps; r++) {
		struct uf2fs *fs;
		uint32_t ino;
		double t0, cold, warm;
		int ret;

		uf2fs_default_options(&opts);
		opts.device = argv[1];
		opts.read_only = true;
		opts.quiet = true;
		ret = uf2fs_mount(&opts, &fs);
		if (ret < 0) {
			fprintf(stderr, "mount %s: %s\n", argv[1], strerror(-ret));
			return 1;
		}
		ret = uf2fs_resolve(fs, argv[2], &ino);
		if (ret < 0) {
			fprintf(stderr, "%s: %s\n", argv[2], strerror(-ret));
			return 1;
		}
		uf2fs_format_stats(fs, before, sizeof(before));
		t0 = now_ms();
		ret = uf2fs_precache_extents(fs, ino);
		cold = now_ms() - t0;
		uf2fs_format_stats(fs, after, sizeof(after));
		if (ret < 0) {
			fprintf(stderr, "precache: %s\n", strerror(-ret));
			return 1;
		}
		t0 = now_ms();
		uf2fs_precache_extents(fs, ino);
		warm = now_ms() - t0;
		printf("{\"cold_ms\": %.4f, \"warm_ms\": %.4f, \"node_reads\": %lld, "
		       "\"read_requests\": %lld}\n", cold, warm,
		       counter(after, "node reads") - counter(before, "node reads"),
		       counter(after, "read  requests") - counter(before, "read  requests"));
		uf2fs_unmount(fs);
	}
	return 0;
}
