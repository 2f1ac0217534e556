// SPDX-License-Identifier: GPL-2.0
/*
 * Readahead of the mount's backing device info. The kernel reads ahead the
 * smaller of the bdi's read_ahead_kb (128 KiB by default for FUSE) and the
 * max_readahead we negotiate, so without this a sequential reader gets 128
 * KiB requests however large our folios are. When we may (root), we raise
 * the bdi to the negotiated window. The bdi's name is the mount's device
 * number, which /proc/self/mountinfo gives without a FUSE round trip (a
 * stat of the mountpoint would wait for the session we have not started).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse_bdi.h"

/* Device "major:minor" of the mount at path, from mountinfo's third field. */
static int mount_devno(const char *path, char *out, size_t size)
{
	char *real = realpath(path, NULL), line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int found = -1;

	if (!f || !real) {
		if (f)
			fclose(f);
		free(real);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char dev[64], mnt[4096];

		/* id parent major:minor root mountpoint ... */
		if (sscanf(line, "%*s %*s %63s %*s %4095s", dev, mnt) != 2)
			continue;
		if (!strcmp(mnt, real)) {
			snprintf(out, size, "%s", dev);
			found = 0;	/* the last match is the topmost mount */
		}
	}
	fclose(f);
	free(real);
	return found;
}

void fuse_tune_bdi(const char *mountpoint, unsigned int readahead_kb)
{
	char dev[64], path[128];
	FILE *f;

	if (mount_devno(mountpoint, dev, sizeof(dev)))
		return;
	snprintf(path, sizeof(path), "/sys/class/bdi/%s/read_ahead_kb", dev);
	f = fopen(path, "w");
	if (!f)
		return;	/* not root, or no sysfs: the kernel default stays */
	fprintf(f, "%u\n", readahead_kb);
	fclose(f);
}
