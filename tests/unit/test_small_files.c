// SPDX-License-Identifier: GPL-2.0
/*
 * The small-file path at scale: what an untar does (thousands of new files,
 * each a few odd-sized writes, nothing synced) must cost each file the same
 * whatever else is dirty in the cache.
 *
 * Also the cold side of a tree walk: a stat of every name reads inode
 * nodes a dentry block at a time.
 *
 * The proof is counted, not timed: `uf2fs stats` reports the dirty folios
 * that writeback and truncation walked to find one file's dirty folios
 * ("dirty walks"); every scenario also checks the data and ends with fsck.
 */
#include "test_rw_common.h"

#include <sys/stat.h>

#define NFILES		3000
#define NSYNCED		200
#define FILE_BYTES	5000	/* two blocks, the second partly written */

static void t_dirty_walks(void **state)
{
	char img[PATH_MAX], path[64];
	struct model m;
	struct uf2fs *fs;
	uint64_t before, walked;

	(void)state;
	snprintf(rw_context, sizeof(rw_context), "dirty_walks");
	rw_img_path(img, PATH_MAX, "dirty_walks");
	rw_mkfs(img, 256, RW_FEATURES_DEFAULT);
	model_init(&m);
	fs = rw_mount(img, false);
	for (int i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "f%05d", i);
		rw_create(fs, &m, path, S_IFREG | 0644, 0, NULL);
		rw_write_pat(fs, &m, path, 0, FILE_BYTES, i);
	}
	/*
	 * One fsync walks that file's dirty folios (two here), not the
	 * thousands of the other files. A checkpoint in between (the
	 * background thread) walks everything once: allow three.
	 */
	before = rw_stat_number(fs, "dirty walks");
	for (int i = 0; i < NSYNCED; i++) {
		snprintf(path, sizeof(path), "f%05d", i * (NFILES / NSYNCED));
		RW_OK(uf2fs_fsync(fs, rw_ino(fs, path), false));
	}
	walked = rw_stat_number(fs, "dirty walks") - before;
	if (walked > NSYNCED * 16 + 3 * 2 * NFILES)
		RW_FAIL("%" PRIu64 " dirty folios walked for %d fsyncs of 2-block files among %d",
			walked, NSYNCED, NFILES);
	/* The checkpoint: one walk of the list, then one per file of its own. */
	before = rw_stat_number(fs, "dirty walks");
	RW_OK(uf2fs_sync(fs));
	walked = rw_stat_number(fs, "dirty walks") - before;
	if (walked > 8 * 2 * NFILES)
		RW_FAIL("%" PRIu64 " dirty folios walked by one checkpoint of %d files", walked,
			NFILES);
	RW_VERIFY(fs, &m, "after the checkpoint");
	rw_cycle_verify(&fs, img, &m);
	model_free(&m);
}

/*
 * A cold stat of every name in a directory: the first lookup that misses an
 * inode node reads the inode nodes of its whole dentry block, in nid order,
 * so the device sees a few requests, not one per name.
 */
#define NLOOKUP		400

static void t_lookup_readahead(void **state)
{
	char img[PATH_MAX], name[32];
	struct uf2fs_attr attr;
	struct uf2fs *fs;
	uint64_t before, reqs, nodes;
	uint32_t root, ino;

	(void)state;
	snprintf(rw_context, sizeof(rw_context), "lookup_readahead");
	rw_img_path(img, PATH_MAX, "lookup_readahead");
	rw_mkfs(img, 128, RW_FEATURES_DEFAULT);
	fs = rw_mount(img, false);
	root = rw_ino(fs, "/");
	for (int i = 0; i < NLOOKUP; i++) {
		snprintf(name, sizeof(name), "n%04d", i);
		RW_OK(uf2fs_mknod(fs, root, name, strlen(name), S_IFREG | 0644, 0, 0, 0, &ino));
	}
	rw_unmount(fs);
	fs = rw_mount(img, true);
	root = rw_ino(fs, "/");
	before = rw_stat_number(fs, "read  requests");
	nodes = rw_stat_number(fs, "node reads");
	for (int i = 0; i < NLOOKUP; i++) {
		snprintf(name, sizeof(name), "n%04d", i);
		RW_OK(uf2fs_lookup(fs, root, name, strlen(name), &ino));
		RW_OK(uf2fs_getattr(fs, ino, &attr));
		if (!S_ISREG(attr.mode))
			RW_FAIL("%s: mode 0%o", name, attr.mode);
	}
	reqs = rw_stat_number(fs, "read  requests") - before;
	nodes = rw_stat_number(fs, "node reads") - nodes;
	/* the dentry blocks (a few), and the inode nodes in runs */
	if (reqs > NLOOKUP / 8)
		RW_FAIL("%" PRIu64 " device reads (%" PRIu64 " node reads) for a cold lookup "
			"and stat of %d names", reqs, nodes, NLOOKUP);
	rw_unmount(fs);
	RW_FSCK(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_dirty_walks),
		cmocka_unit_test(t_lookup_readahead),
	};
	int failures;

	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	rw_tmp_init("small-files");
	failures = cmocka_run_group_tests(tests, NULL, NULL);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
