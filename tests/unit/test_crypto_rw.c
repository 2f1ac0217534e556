// SPDX-License-Identifier: GPL-2.0
/*
 * Encrypted regular files under the write paths that move or rewrite blocks
 * (issue 10): garbage collection must move ciphertext byte for byte (the IV
 * is the logical block, not the address), in-place updates, roll-forward
 * recovery, atomic writes, fallocate (preallocate, punch hole, zero range)
 * and truncate to a partial block must leave every byte as a plaintext model
 * says. Checked after a remount with the key, with fsck.f2fs -f, and without
 * the key: the blocks on disk must not hold the plaintext, and reads fail.
 */
#include "test_rw_common.h"

#include <linux/fscrypt.h>
#include <sys/statvfs.h>

#define FEATURES RW_FEATURES_DEFAULT ",encrypt"
#define BS 4096

static struct uf2fs *FS;
static struct model *M;
static char IMG[PATH_MAX];
static uint8_t KEY[64], KEY_ID[16];

static struct uf2fs *mount_rw(void)
{
	struct uf2fs_options o;

	uf2fs_default_options(&o);
	o.device = IMG;
	o.read_only = false;
	o.atime_mode = 1;
	o.background_gc = 0;	/* the gc counter must be the test's own calls */
	return rw_mount_opts(&o);
}

static void add_key(void)
{
	uint8_t id[16];

	RW_OK(uf2fs_add_key(FS, KEY, sizeof(KEY), NULL, id));
	memcpy(KEY_ID, id, sizeof(id));
}

static uint32_t addr_of(const char *path, uint64_t lblk)
{
	uint32_t a = 0;

	RW_OK(uf2fs_test_block_addr(FS, rw_ino(FS, path), lblk, &a));
	return a;
}

static void falloc(const char *path, int mode, uint64_t off, uint64_t len)
{
	struct mnode *n = model_get(M, path);

	RW_OK(uf2fs_fallocate(FS, rw_ino(FS, path), mode, off, len));
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		mnode_zero(n, off, len);
	if (!(mode & FALLOC_FL_KEEP_SIZE) && off + len > n->size)
		mnode_truncate(n, off + len);
}

/* The on-disk bytes of blocks 0..n-1 of path (synced first). */
static uint8_t *read_raw(const char *path, unsigned int n)
{
	uint8_t *buf = malloc((size_t)n * BS);
	int fd = open(IMG, O_RDONLY);

	assert_non_null(buf);
	assert_true(fd >= 0);
	for (unsigned int b = 0; b < n; b++)
		if (pread(fd, buf + (size_t)b * BS, BS, (off_t)addr_of(path, b) * BS) != BS)
			RW_FAIL("pread of %s block %u", path, b);
	close(fd);
	return buf;
}

/* Encrypted file `big` interleaved on disk with plaintext fillers, then the fillers go. */
static void fragment_and_gc(void)
{
	enum { CHUNK = 64 << 10, ROUNDS = 64 };
	uint8_t *raw0, *raw1;
	uint64_t gc0, blocks0;
	uint32_t before[ROUNDS * CHUNK / BS];
	unsigned int moved = 0, nblk = ROUNDS * CHUNK / BS;
	char p[32];

	rw_create(FS, M, "e/big", S_IFREG | 0644, 0, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(p, sizeof(p), "fill%d", i);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
		rw_write_pat(FS, M, p, 0, CHUNK * 3, 5000 + i);
		RW_OK(uf2fs_fsync(FS, rw_ino(FS, p), false));
		rw_write_pat(FS, M, "e/big", (uint64_t)i * CHUNK, CHUNK, 900 + i);
		/* written back one after the other, so the two share segments */
		RW_OK(uf2fs_fsync(FS, rw_ino(FS, "e/big"), false));
	}
	RW_OK(uf2fs_sync(FS));
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(p, sizeof(p), "fill%d", i);
		RW_OK(uf2fs_unlink(FS, uf2fs_root_ino(FS), p, strlen(p)));
		model_del(M, p);
	}
	RW_OK(uf2fs_sync(FS));
	for (unsigned int b = 0; b < nblk; b++)
		before[b] = addr_of("e/big", b);
	raw0 = read_raw("e/big", nblk);
	gc0 = rw_stat_number(FS, "gc  ");
	blocks0 = rw_stat_number(FS, "segments,");
	for (int i = 0; i < 40; i++) {
		int ret = uf2fs_gc(FS, true);

		if (ret == -EAGAIN)
			break;
		if (ret)
			RW_FAIL("uf2fs_gc = %d (%s)", ret, strerror(-ret));
	}
	RW_OK(uf2fs_sync(FS));
	for (unsigned int b = 0; b < nblk; b++)
		moved += addr_of("e/big", b) != before[b];
	/* the ciphertext moved as it was: same bytes at the new address */
	raw1 = read_raw("e/big", nblk);
	for (unsigned int b = 0; b < nblk; b++)
		if (memcmp(raw0 + (size_t)b * BS, raw1 + (size_t)b * BS, BS))
			RW_FAIL("e/big block %u: ciphertext at %u differs from the one at %u", b,
				addr_of("e/big", b), before[b]);
	free(raw0);
	free(raw1);
	if (rw_stat_number(FS, "gc  ") <= gc0 || rw_stat_number(FS, "segments,") <= blocks0)
		RW_FAIL("gc moved nothing (segments %llu -> %llu)", (unsigned long long)gc0,
			(unsigned long long)rw_stat_number(FS, "gc  "));
	if (moved < nblk / 2)
		RW_FAIL("gc moved only %u of %u encrypted blocks", moved, nblk);
	print_message("gc: %llu segments, %u of %u encrypted blocks moved\n",
		      (unsigned long long)(rw_stat_number(FS, "gc  ") - gc0), moved, nblk);
}

static void atomic_writes(void)
{
	uint32_t ino;

	ino = rw_create(FS, M, "e/atom", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "e/atom", 0, 10 * BS + 123, 11);
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_atomic_write(FS, ino, UF2FS_ATOMIC_START));
	rw_write_pat(FS, M, "e/atom", 2 * BS + 7, 3 * BS, 12);
	rw_write_pat(FS, M, "e/atom", 12 * BS, 100, 13);
	RW_OK(uf2fs_atomic_write(FS, ino, UF2FS_ATOMIC_COMMIT));

	ino = rw_create(FS, M, "e/abort", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "e/abort", 0, 6 * BS, 14);
	RW_OK(uf2fs_sync(FS));
	RW_OK(uf2fs_atomic_write(FS, ino, UF2FS_ATOMIC_START));
	rw_write_pat(FS, NULL, "e/abort", BS, 2 * BS, 15);
	RW_OK(uf2fs_atomic_write(FS, ino, UF2FS_ATOMIC_ABORT));
}

static void fallocate_and_truncate(void)
{
	uint64_t s = 77, ipu;

	rw_create(FS, M, "e/fal", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "e/fal", 0, 40 * BS, 21);
	falloc("e/fal", 0, 40 * BS, 8 * BS);			/* preallocate, size grows */
	falloc("e/fal", FALLOC_FL_KEEP_SIZE, 48 * BS, 8 * BS);
	falloc("e/fal", FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 3 * BS + 100, 5 * BS);
	falloc("e/fal", FALLOC_FL_ZERO_RANGE, 20 * BS - 50, 3 * BS + 900);
	falloc("e/fal", FALLOC_FL_ZERO_RANGE, 46 * BS, 6 * BS);	/* past EOF: size grows */
	rw_write_pat(FS, M, "e/fal", 42 * BS + 10, 2 * BS, 22);	/* into preallocated */
	/* moving blocks to other logical offsets would break their IV: Linux refuses */
	RW_EXPECT(uf2fs_fallocate(FS, rw_ino(FS, "e/fal"), FALLOC_FL_COLLAPSE_RANGE, 0, BS),
		  -EOPNOTSUPP);
	RW_EXPECT(uf2fs_fallocate(FS, rw_ino(FS, "e/fal"), FALLOC_FL_INSERT_RANGE, 0, BS),
		  -EOPNOTSUPP);

	rw_create(FS, M, "e/trunc", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "e/trunc", 0, 9 * BS, 31);
	RW_OK(uf2fs_sync(FS));
	rw_truncate(FS, M, "e/trunc", 5 * BS + 1234);	/* the tail of block 5 is zeroed */
	rw_truncate(FS, M, "e/trunc", 12 * BS);
	rw_write_pat(FS, M, "e/trunc", 10 * BS + 5, 300, 32);

	rw_create(FS, M, "e/rand", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "e/rand", 0, 128 * BS, 41);
	RW_OK(uf2fs_sync(FS));
	ipu = rw_stat_number(FS, "in-place (IPU)");
	for (int i = 0; i < 60; i++) {
		uint64_t off = rw_splitmix(&s) % (130 * BS);
		size_t len = 1 + rw_splitmix(&s) % (3 * BS);

		rw_write_pat(FS, M, "e/rand", off, len, 100 + i);
		if (i % 20 == 19)
			RW_OK(uf2fs_sync(FS));
	}
	/* a volume under 16 GiB takes IPU_FORCE: checkpoints overwrite ciphertext in place */
	if (rw_stat_number(FS, "in-place (IPU)") <= ipu)
		RW_FAIL("no in-place update of the encrypted file");
	rw_create(FS, M, "e/holes", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "e/holes", 0, 100, 51);
	rw_write_pat(FS, M, "e/holes", 300 * BS + 17, 5000, 52);
	rw_write_pat(FS, M, "e/holes", 1000 * BS - 3, 3, 53);
}

/* fsync'd writes with no checkpoint after them: roll-forward brings them back. */
static void crash_and_recover(void)
{
	uint64_t cps;

	rw_create(FS, M, "e/rec", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "e/rec", 0, 4 * BS, 61);
	RW_OK(uf2fs_sync(FS));
	cps = rw_stat_number(FS, "checkpoints");
	rw_write_pat(FS, M, "e/rec", 2 * BS + 99, 20 * BS + 777, 62);
	RW_OK(uf2fs_fsync(FS, rw_ino(FS, "e/rec"), false));
	rw_write_pat(FS, M, "e/trunc", 3, 200, 63);
	RW_OK(uf2fs_fsync(FS, rw_ino(FS, "e/trunc"), true));
	if (rw_stat_number(FS, "checkpoints") != cps)
		RW_FAIL("fsync wrote a checkpoint: nothing left to roll forward");
	uf2fs_test_crash(FS);
	FS = mount_rw();
	add_key();
	RW_VERIFY(FS, M, "after a crash and roll-forward");
}

/* Without the key, no data block of an encrypted file holds its plaintext. */
static void check_ciphertext(void)
{
	static const char *const files[] = { "e/big", "e/atom", "e/abort", "e/fal", "e/trunc",
					     "e/rand", "e/holes", "e/rec" };
	uint32_t inos[8];
	uint8_t *blk = malloc(BS);
	unsigned int checked = 0;
	int fd;

	FS = mount_rw();
	add_key();
	for (size_t f = 0; f < 8; f++)
		inos[f] = rw_ino(FS, files[f]);
	rw_unmount(FS);
	FS = rw_mount(IMG, true);
	fd = open(IMG, O_RDONLY);
	assert_true(fd >= 0);
	for (size_t f = 0; f < 8; f++) {
		struct mnode *n = model_get(M, files[f]);

		for (uint64_t b = 0; b * BS < n->size; b++) {
			size_t len = n->size - b * BS < BS ? n->size - b * BS : BS;
			uint32_t a = 0;

			RW_OK(uf2fs_test_block_addr(FS, inos[f], b, &a));
			if (!a || a == 0xffffffffu)	/* hole, or preallocated */
				continue;
			if (pread(fd, blk, BS, (off_t)a * BS) != BS)
				RW_FAIL("pread block %u", a);
			if (!memcmp(blk, n->data + b * BS, len))
				RW_FAIL("%s block %llu at %u holds the plaintext", files[f],
					(unsigned long long)b, a);
			checked++;
		}
	}
	close(fd);
	/* as fscrypt_file_open: no key, no contents */
	RW_EXPECT(uf2fs_read(FS, inos[0], blk, BS, 0), -ENOKEY);
	free(blk);
	if (checked < 400)
		RW_FAIL("only %u data blocks checked", checked);
	rw_unmount(FS);
}

/* A fresh image of mb MiB, mounted, with the key added and /e encrypted. */
static void setup(struct model *m, const char *name, unsigned int mb)
{
	struct uf2fs_fscrypt_policy pol = {
		.version = FSCRYPT_POLICY_V2,
		.contents_mode = FSCRYPT_MODE_AES_256_XTS,
		.filenames_mode = FSCRYPT_MODE_AES_256_CTS,
		.flags = FSCRYPT_POLICY_FLAGS_PAD_32,
	};
	uint32_t dir;

	model_init(m);
	M = m;
	rw_fill(KEY, sizeof(KEY), 4242);
	rw_img_path(IMG, sizeof(IMG), name);
	rw_mkfs(IMG, mb, FEATURES);
	FS = mount_rw();
	add_key();
	dir = rw_create(FS, M, "e", S_IFDIR | 0755, 0, NULL);
	memcpy(pol.key_spec, KEY_ID, 16);
	RW_OK(uf2fs_set_policy(FS, dir, &pol));
}

/* Unmount, fsck, mount with the key, check the model, unmount (fsck is the caller's). */
static void remount_verify(const char *when)
{
	rw_unmount(FS);
	RW_FSCK(IMG);
	FS = mount_rw();
	add_key();
	RW_VERIFY(FS, M, when);
	rw_unmount(FS);
}

static void t_crypto_rw(void **state)
{
	struct model m;

	(void)state;
	setup(&m, "crypto-rw", 128);

	fragment_and_gc();
	atomic_writes();
	fallocate_and_truncate();
	RW_VERIFY(FS, M, "before unmount");
	/* GC once more, now over the atomic, fallocated and truncated files too */
	RW_OK(uf2fs_sync(FS));
	for (int i = 0; i < 10; i++)
		if (uf2fs_gc(FS, true))
			break;
	crash_and_recover();
	remount_verify("remount with the key");
	check_ciphertext();
	RW_FSCK(IMG);
	model_free(&m);
}

/*
 * A nearly full image, every other encrypted file deleted: new encrypted
 * files go into the freed slots of used segments (SSR).
 */
static void t_crypto_ssr(void **state)
{
	struct statvfs st;
	uint64_t files, ssr;
	struct model m;
	char p[64];

	(void)state;
	setup(&m, "crypto-ssr", 64);
	RW_OK(uf2fs_statfs(FS, &st));
	files = st.f_bfree * 85 / 100 / 64;	/* 256 KiB each */
	for (uint64_t i = 0; i < files; i++) {
		snprintf(p, sizeof(p), "e/f%" PRIu64, i);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
		rw_write_pat(FS, M, p, 0, 256 << 10, 100 + i);
	}
	RW_OK(uf2fs_sync(FS));
	for (uint64_t i = 0; i < files; i += 2) {
		snprintf(p, sizeof(p), "f%" PRIu64, i);
		RW_OK(uf2fs_unlink(FS, rw_ino(FS, "e"), p, strlen(p)));
		snprintf(p, sizeof(p), "e/f%" PRIu64, i);
		model_del(M, p);
	}
	RW_OK(uf2fs_sync(FS));
	ssr = rw_stat_number(FS, "clean (LFS),");
	for (uint64_t i = 0; i < files / 2; i++) {
		snprintf(p, sizeof(p), "e/g%" PRIu64, i);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
		rw_write_pat(FS, M, p, 0, 200 << 10, 1000 + i);
		if (i % 8 == 7)
			RW_OK(uf2fs_sync(FS));
	}
	RW_OK(uf2fs_sync(FS));
	if (rw_stat_number(FS, "clean (LFS),") <= ssr)
		RW_FAIL("no SSR segment was used");
	remount_verify("remount after SSR");
	RW_FSCK(IMG);
	model_free(&m);
}

/*
 * fsync of a new file in an encrypted directory rolls forward, as Linux:
 * the inode's i_name holds the ciphertext name, and in a casefolded
 * directory the dirhash after it (recovery has no key to compute it). A
 * name whose ciphertext leaves no room for the hash checkpoints instead.
 */
static void newname_recovery(bool cf)
{
	struct uf2fs_fscrypt_policy pol = {
		.version = FSCRYPT_POLICY_V2,
		.contents_mode = FSCRYPT_MODE_AES_256_XTS,
		.filenames_mode = FSCRYPT_MODE_AES_256_CTS,
		.flags = FSCRYPT_POLICY_FLAGS_PAD_16,
	};
	char longname[260] = "e/", p[64];
	uint64_t cps;
	struct model m;
	uint32_t dir, ino;

	model_init(&m);
	M = &m;
	rw_fill(KEY, sizeof(KEY), 4343);
	rw_img_path(IMG, sizeof(IMG), cf ? "crypto-newname-cf" : "crypto-newname");
	rw_mkfs(IMG, 64, cf ? FEATURES ",casefold -C utf8" : FEATURES);
	FS = mount_rw();
	add_key();
	dir = rw_create(FS, M, "e", S_IFDIR | 0755, 0, NULL);
	if (cf)
		RW_OK(uf2fs_set_flags(FS, dir, FS_CASEFOLD_FL));
	memcpy(pol.key_spec, KEY_ID, 16);
	RW_OK(uf2fs_set_policy(FS, dir, &pol));
	rw_create(FS, M, "e/old", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "e/old", 0, 5000, 70);
	RW_OK(uf2fs_sync(FS));

	cps = rw_stat_number(FS, "checkpoints");
	for (int i = 0; i < 5; i++) {
		snprintf(p, sizeof(p), "e/New-File-%d", i);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
		rw_write_pat(FS, M, p, 0, 3000 + 5000 * i, 71 + i);
		RW_OK(uf2fs_fsync(FS, rw_ino(FS, p), false));
	}
	if (rw_stat_number(FS, "checkpoints") != cps)
		RW_FAIL("fsync of a new encrypted name wrote a checkpoint (%s)",
			cf ? "casefolded" : "not casefolded");
	/* 253 bytes: 255 of ciphertext (padded to 16, then capped), no room for the hash */
	memset(longname + 2, 'L', 253);
	rw_create(FS, M, longname, S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, longname, 0, 100, 80);
	RW_OK(uf2fs_fsync(FS, rw_ino(FS, longname), false));
	if (cf && rw_stat_number(FS, "checkpoints") == cps)
		RW_FAIL("a casefolded encrypted name too long for its hash rolled forward");
	cps = rw_stat_number(FS, "checkpoints");
	rw_create(FS, M, "e/after-long", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "e/after-long", 0, 9000, 81);
	RW_OK(uf2fs_fsync(FS, rw_ino(FS, "e/after-long"), false));
	if (rw_stat_number(FS, "checkpoints") != cps)
		RW_FAIL("fsync of e/after-long wrote a checkpoint");
	uf2fs_test_crash(FS);
	FS = mount_rw();
	add_key();
	RW_VERIFY(FS, M, cf ? "new encrypted casefolded names rolled forward" :
		  "new encrypted names rolled forward");
	if (cf) {
		RW_OK(uf2fs_lookup(FS, dir, "NEW-FILE-3", 10, &ino));
		if (ino != rw_ino(FS, "e/New-File-3"))
			RW_FAIL("NEW-FILE-3 finds inode %u, not New-File-3's", ino);
	}
	remount_verify("remount after roll-forward of new encrypted names");
	RW_FSCK(IMG);
	model_free(&m);
}

static void t_crypto_newname(void **state)
{
	(void)state;
	newname_recovery(false);
	newname_recovery(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_crypto_rw),
		cmocka_unit_test(t_crypto_ssr),
		cmocka_unit_test(t_crypto_newname),
	};
	int failures;

	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	rw_tmp_init("crypto-rw");
	failures = cmocka_run_group_tests(tests, NULL, NULL);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
