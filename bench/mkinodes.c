// SPDX-License-Identifier: GPL-2.0
/*
 * bench/mkinodes IMAGE DIRS FILES: DIRS directories of FILES empty files
 * each, made through the library (no FUSE), owners spread over 40 uids and
 * 13 gids, for the quota recount measurement (bench/quota-recount.sh): a
 * million inodes take about two minutes this way, against more than half an
 * hour through sload.f2fs.
 */
#include <stdio.h>
#include <stdlib.h>

#include "uf2fs/uf2fs.h"

static int fill_dir(struct uf2fs *fs, int d, int nf)
{
	char name[32];
	uint32_t dino, ino;
	int n = snprintf(name, sizeof(name), "d%05d", d);
	int ret = uf2fs_mkdir(fs, uf2fs_root_ino(fs), name, n, 0755, 0, 0, &dino);

	for (int f = 0; f < nf && !ret; f++) {
		struct uf2fs_create_args a = { .mode = 0100644, .uid = 1000 + (d * 7 + f) % 40,
					       .gid = 2000 + f % 13 };

		n = snprintf(name, sizeof(name), "f%05d", f);
		ret = uf2fs_create(fs, dino, name, n, &a, &ino);
		if (!ret)
			uf2fs_forget(fs, ino, 1);
	}
	if (ret)
		fprintf(stderr, "mkinodes: directory %d: %s (%s)\n", d, uf2fs_last_error(fs),
			ret < 0 ? "error" : "?");
	else
		uf2fs_forget(fs, dino, 1);
	return ret;
}

int main(int argc, char **argv)
{
	struct uf2fs_options o;
	struct uf2fs *fs;
	int nd, nf;

	if (argc != 4) {
		fprintf(stderr, "usage: mkinodes IMAGE DIRS FILES\n");
		return 2;
	}
	nd = atoi(argv[2]);
	nf = atoi(argv[3]);
	uf2fs_default_options(&o);
	o.device = argv[1];
	o.read_only = false;
	o.quiet = true;
	if (uf2fs_mount(&o, &fs)) {
		fprintf(stderr, "mkinodes: mount: %s\n", uf2fs_last_error(NULL));
		return 1;
	}
	for (int d = 0; d < nd; d++)
		if (fill_dir(fs, d, nf)) {
			uf2fs_unmount(fs);
			return 1;
		}
	return uf2fs_unmount(fs) ? 1 : 0;
}
