// SPDX-License-Identifier: GPL-2.0
/*
 * Cache and space policies that change no bytes but must keep every byte:
 * drop-behind (dontcache) of data folios after reads and after writeback,
 * and discards deferred from the checkpoint to idle time or unmount, sent
 * while writers keep allocating.
 *
 * Each scenario checks the data (through the model of test_rw_common.h),
 * the counters of `uf2fs stats` that show the policy acted, and ends with
 * an unmount and fsck.f2fs.
 */
#include "test_rw_common.h"

#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#define MIB (1u << 20)

static struct uf2fs *mount_with(const char *img, bool ro, int dontcache, uint64_t cache)
{
	struct uf2fs_options o;

	uf2fs_default_options(&o);
	o.device = img;
	o.read_only = ro;
	o.dontcache = dontcache;
	o.cache_size = cache;
	o.background_gc = 0;
	return rw_mount_opts(&o);
}

/* A counter from `uf2fs stats`: the number after label on its line. */
static uint64_t stat_after(struct uf2fs *fs, const char *line_key, const char *label)
{
	static char buf[16384];
	const char *l, *p;

	uf2fs_format_stats(fs, buf, sizeof(buf));
	l = strstr(buf, line_key);
	if (!l)
		RW_FAIL("stats: no '%s' line in:\n%s", line_key, buf);
	p = strstr(l, label);
	if (!p)
		RW_FAIL("stats: no '%s' after '%s'", label, line_key);
	while (p > l && (p[-1] == ' '))
		p--;
	while (p > l && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtoull(p, NULL, 10);
}

static uint64_t cache_mib(struct uf2fs *fs)
{
	static char buf[16384];
	const char *l;

	uf2fs_format_stats(fs, buf, sizeof(buf));
	l = strstr(buf, "size ");
	if (!l)
		RW_FAIL("stats: no cache size");
	return strtoull(l + 5 + strspn(l + 5, " "), NULL, 10);
}

struct cmp {
	const uint8_t *want;
	uint64_t off;
	bool bad;
};

static int cmp_emit(void *arg, const struct iovec *iov, int cnt)
{
	struct cmp *c = arg;

	for (int i = 0; i < cnt; i++) {
		if (memcmp(iov[i].iov_base, c->want + c->off, iov[i].iov_len))
			c->bad = true;
		c->off += iov[i].iov_len;
	}
	return 0;
}

static void write_file(const char *img, struct model *m, const char *name, size_t size,
		       uint64_t seed, int dontcache)
{
	struct uf2fs *fs = mount_with(img, false, dontcache, 0);

	rw_create(fs, m, name, S_IFREG | 0644, 0, NULL);
	rw_write_pat(fs, m, name, 0, size, seed);
	RW_OK(uf2fs_sync(fs));
	if (dontcache > 0 && !stat_after(fs, "evictions", "drop-behind"))
		RW_FAIL("dontcache: writeback of whole folios dropped none");
	if (dontcache > 0 && cache_mib(fs) > 2)
		RW_FAIL("dontcache: %" PRIu64 " MiB still cached after writeback", cache_mib(fs));
	RW_VERIFY(fs, m, "after write");
	rw_unmount(fs);
}

/*
 * Reads as the FUSE kernel sends them after its readahead ramps up: 1 MiB
 * requests that straddle two 1 MiB folios. Each folio must be read from
 * the device once, not once per request, and be gone after the read.
 */
static void read_straddled(const char *img, struct model *m, const char *name, int dontcache)
{
	struct uf2fs *fs = mount_with(img, true, dontcache, 256 * MIB);
	struct mnode *n = model_get(m, name);
	uint32_t ino = rw_ino(fs, name);
	struct cmp c = { .want = n->data, .off = 0 };
	uint64_t off = 0;

	while (off < n->size) {
		size_t len = off ? MIB : 128 * 1024;
		ssize_t r;

		c.off = off;
		r = uf2fs_read_iov(fs, ino, len, off, cmp_emit, &c);
		if (r <= 0)
			RW_FAIL("read_iov at %" PRIu64 " = %zd", off, r);
		if (c.bad)
			RW_FAIL("dontcache %d: wrong bytes at %" PRIu64, dontcache, off);
		off += r;
	}
	uint64_t dropped = stat_after(fs, "evictions", "drop-behind");
	uint64_t cached = cache_mib(fs);

	if (dontcache > 0 && (dropped < n->size / MIB - 1 || cached > 2))
		RW_FAIL("dontcache on: %" PRIu64 " folios dropped, %" PRIu64 " MiB cached",
			dropped, cached);
	if (dontcache == 0 && (dropped || cached < n->size / MIB))
		RW_FAIL("dontcache off: %" PRIu64 " folios dropped, %" PRIu64 " MiB cached",
			dropped, cached);
	RW_VERIFY(fs, m, "after straddled reads");
	rw_unmount(fs);
}

static void t_dropbehind(void **state)
{
	char img[PATH_MAX];
	struct model m;

	snprintf(rw_context, sizeof(rw_context), "dropbehind");
	rw_img_path(img, sizeof(img), "dropbehind");
	rw_mkfs(img, 256, RW_FEATURES_DEFAULT);
	model_init(&m);
	write_file(img, &m, "big", 24 * MIB + 12345, 7, 1);
	read_straddled(img, &m, "big", 1);
	read_straddled(img, &m, "big", 0);
	RW_FSCK(img);
	model_free(&m);
}

/* A partly written folio stays after writeback: its next write needs it. */
static void t_dropbehind_partial(void **state)
{
	char img[PATH_MAX];
	struct model m;
	struct uf2fs *fs;

	snprintf(rw_context, sizeof(rw_context), "dropbehind_partial");
	rw_img_path(img, sizeof(img), "dropbehind_partial");
	rw_mkfs(img, 256, RW_FEATURES_DEFAULT);
	model_init(&m);
	fs = mount_with(img, false, 1, 0);
	rw_create(fs, &m, "log", S_IFREG | 0644, 0, NULL);
	for (int i = 0; i < 64; i++) {
		rw_write_pat(fs, &m, "log", (uint64_t)i * 40000, 40000, 100 + i);
		RW_OK(uf2fs_fsync(fs, rw_ino(fs, "log"), false));
	}
	RW_VERIFY(fs, &m, "appends with fsync");
	rw_unmount(fs);
	RW_FSCK(img);
	fs = mount_with(img, true, 1, 0);
	RW_VERIFY(fs, &m, "remount");
	rw_unmount(fs);
	model_free(&m);
}

/* Check the data, unmount, fsck, and check it again from a read-only remount. */
static void verify_remount(const char *img, struct uf2fs *fs, struct model *m, const char *when)
{
	RW_VERIFY(fs, m, when);
	rw_unmount(fs);
	RW_FSCK(img);
	fs = mount_with(img, true, 0, 0);
	RW_VERIFY(fs, m, "remount");
	rw_unmount(fs);
	model_free(m);
}

/*
 * Write-behind: a streaming writer under drop-behind keeps a few folios in
 * the cache, not cache_size/4 of dirty data, and every byte still lands.
 * An odd chunk size leaves partly written folios at every step.
 */
static void t_writebehind(void **state)
{
	const size_t chunk = 100000, total = 48 * MIB;
	char img[PATH_MAX];
	struct model m;
	struct uf2fs *fs;
	uint64_t peak = 0;

	snprintf(rw_context, sizeof(rw_context), "writebehind");
	rw_img_path(img, sizeof(img), "writebehind");
	rw_mkfs(img, 256, RW_FEATURES_DEFAULT);
	model_init(&m);
	fs = mount_with(img, false, 1, 256 * MIB);
	rw_create(fs, &m, "stream", S_IFREG | 0644, 0, NULL);
	for (size_t off = 0; off < total; off += chunk) {
		rw_write_pat(fs, &m, "stream", off, chunk, off);
		if (cache_mib(fs) > peak)
			peak = cache_mib(fs);
	}
	if (peak > 12)
		RW_FAIL("write-behind: the cache grew to %" PRIu64 " MiB for a 48 MiB stream", peak);
	verify_remount(img, fs, &m, "streamed");
}

/* One request of the unaligned stream, and the cache's size after it. */
static void write_request(struct uf2fs *fs, struct model *m, uint64_t off, uint64_t *peak)
{
	rw_write_pat(fs, m, "wbc", off, MIB, off);
	if (cache_mib(fs) > *peak)
		*peak = cache_mib(fs);
}

/*
 * The kernel's writeback under -o writeback_cache: 1 MiB requests that start
 * off the 1 MiB folio grid (after a short one) and arrive out of order from
 * several worker threads; the ones that cross a 4 MiB boundary can come a
 * dozen requests late. Every folio they make is written whole, so
 * write-behind drops it; none may reach back before its write, read its
 * head from the device and stay in the cache half dirty; and dirty data must
 * not wait for the late crossing requests.
 */
static void t_writebehind_unaligned(void **state)
{
	const uint64_t head = 128 * 1024, nr = 48, group = 16, wb = 4 * MIB;
	char img[PATH_MAX];
	struct model m;
	struct uf2fs *fs;
	uint64_t peak = 0, reads;

	snprintf(rw_context, sizeof(rw_context), "writebehind_unaligned");
	rw_img_path(img, sizeof(img), "writebehind_unaligned");
	rw_mkfs(img, 256, RW_FEATURES_DEFAULT);
	model_init(&m);
	{
		struct uf2fs_options o;

		/* the cache path itself: whole-block writes would go through */
		uf2fs_default_options(&o);
		o.device = img;
		o.read_only = false;
		o.dontcache = 1;
		o.write_through = 0;
		o.cache_size = 64 * MIB;
		o.background_gc = 0;
		fs = rw_mount_opts(&o);
	}
	rw_create(fs, &m, "wbc", S_IFREG | 0644, 0, NULL);
	rw_write_pat(fs, &m, "wbc", 0, head, 1);
	reads = stat_after(fs, "read  requests", ",");
	for (uint64_t g = 0; g < nr; g += group) {
		/* in each group, the requests that cross a 4 MiB boundary last */
		for (int late = 0; late < 2; late++) {
			for (uint64_t off = head + g * MIB; off < head + (g + group) * MIB;
			     off += MIB)
				if ((off / wb != (off + MIB) / wb) == late)
					write_request(fs, &m, off, &peak);
		}
	}
	reads = stat_after(fs, "read  requests", ",") - reads;
	RW_OK(uf2fs_sync(fs));
	if (peak > 8 || cache_mib(fs) > 2)
		RW_FAIL("unaligned writeback: cache peaked at %" PRIu64 " MiB, %" PRIu64
			" MiB after sync, for a 48 MiB stream", peak, cache_mib(fs));
	if (reads > 4)
		RW_FAIL("unaligned writeback: %" PRIu64 " device reads for a new file", reads);
	verify_remount(img, fs, &m, "unaligned stream");
}

static struct uf2fs *mount_ipu(const char *img, int ipu_policy)
{
	struct uf2fs_options o;

	uf2fs_default_options(&o);
	o.device = img;
	o.read_only = false;
	o.dontcache = 1;
	o.ipu_policy = ipu_policy;
	o.background_gc = 0;
	return rw_mount_opts(&o);
}

static uint64_t through_blocks(struct uf2fs *fs)
{
	return stat_after(fs, "blocks written", "of them written through");
}

/*
 * Write-through: under drop-behind, whole-block writes of 32 KiB or more
 * that no cached folio overlaps go from the caller's buffer to the device.
 * Checked: new blocks and overwrites (in place and out of place), a write
 * over a range a partial write left cached (must take the cache path, or
 * the cached bytes would go stale), an fsync'd write-through surviving a
 * crash by roll-forward, and the image after unmount (fsck).
 */
static void t_write_through(void **state)
{
	const int policies[] = { -1, 0x10 };
	char img[PATH_MAX];
	struct model m;
	struct uf2fs *fs;
	uint64_t t0, t1;

	snprintf(rw_context, sizeof(rw_context), "write_through");
	rw_img_path(img, sizeof(img), "write_through");
	rw_mkfs(img, 256, RW_FEATURES_DEFAULT);
	model_init(&m);
	for (int p = 0; p < 2; p++) {
		const char *name = p ? "lfs" : "ipu";
		uint32_t ino;

		fs = mount_ipu(img, policies[p]);
		ino = rw_create(fs, &m, name, S_IFREG | 0644, 0, NULL);
		rw_write_pat(fs, &m, name, 0, 4096, 1);	/* converts inline data */
		for (uint64_t off = 0; off < 8 * MIB; off += MIB)
			rw_write_pat(fs, &m, name, off, MIB, 10 + off / MIB);
		t0 = through_blocks(fs);
		if (t0 < 8 * MIB / 4096 - 256 || cache_mib(fs) > 1)
			RW_FAIL("%s: %" PRIu64 " blocks written through, %" PRIu64 " MiB cached",
				name, t0, cache_mib(fs));
		RW_OK(uf2fs_sync(fs));
		/* overwrites: in place under the default policy, else new blocks */
		rw_write_pat(fs, &m, name, 2 * MIB, 64 * 1024, 30);
		/* a partial write leaves a cached folio; a whole write over it must not bypass it */
		rw_write_pat(fs, &m, name, 3 * MIB + 5000, 3000, 31);
		t0 = through_blocks(fs);
		rw_write_pat(fs, &m, name, 3 * MIB, 128 * 1024, 32);
		t1 = through_blocks(fs);
		if (t1 != t0)
			RW_FAIL("%s: a write over a cached folio went through (%" PRIu64 " blocks)",
				name, t1 - t0);
		RW_VERIFY(fs, &m, "written through");
		/* fsync'd write-through data survives a crash by roll-forward */
		rw_write_pat(fs, &m, name, 8 * MIB, MIB, 33);
		rw_write_pat(fs, &m, name, 4 * MIB, 256 * 1024, 34);
		RW_OK(uf2fs_fsync(fs, ino, false));
		uf2fs_test_crash(fs);
		fs = mount_ipu(img, policies[p]);
		RW_VERIFY(fs, &m, "after a crash past an fsync");
		rw_unmount(fs);
		RW_FSCK(img);
	}
	fs = mount_with(img, true, 0, 0);
	RW_VERIFY(fs, &m, "read-only remount");
	rw_unmount(fs);
	model_free(&m);
}

/*
 * Write-through into a filesystem that fills up: the request ends short or
 * with ENOSPC, and no block it left pointed at holds what the freed space
 * held before (a deleted file's pattern, written first). In practice the
 * up-front space check refuses the last request whole, so this does not
 * reach f2fs_write_through's short-write path (an allocation failing after
 * that check passed); nothing here can make that happen on demand.
 */
static void t_write_through_full(void **state)
{
	uint8_t *buf = malloc(MIB);
	char img[PATH_MAX];
	struct model m;
	struct uf2fs *fs;
	uint32_t ino;
	uint64_t off;
	ssize_t w = 0;

	snprintf(rw_context, sizeof(rw_context), "write_through_full");
	rw_img_path(img, sizeof(img), "write_through_full");
	rw_mkfs(img, 64, RW_FEATURES_DEFAULT);
	model_init(&m);
	fs = mount_ipu(img, -1);
	rw_create(fs, &m, "old", S_IFREG | 0644, 0, NULL);
	rw_write_pat(fs, &m, "old", 0, 8 * MIB, 77);
	RW_OK(uf2fs_sync(fs));
	RW_OK(uf2fs_unlink(fs, uf2fs_root_ino(fs), "old", 3));
	model_del(&m, "old");
	RW_OK(uf2fs_sync(fs));
	ino = rw_create(fs, &m, "full", S_IFREG | 0644, 0, NULL);
	for (off = 0; off < 128 * MIB; off += (uint64_t)w) {
		rw_fill(buf, MIB, off + 1);
		w = uf2fs_write(fs, ino, buf, MIB, off);
		if (w > 0)
			mnode_write(model_get(&m, "full"), off, buf, (size_t)w);
		if (w != (ssize_t)MIB)
			break;
	}
	if (w != -ENOSPC && (w <= 0 || w >= (ssize_t)MIB || w % 4096))
		RW_FAIL("filling write at %" PRIu64 ": %zd, want a short write or ENOSPC", off, w);
	if (!through_blocks(fs))
		RW_FAIL("nothing was written through");
	free(buf);
	verify_remount(img, fs, &m, "filled by write-through");
}

/* Any data folio of order 1 or more was made (node folios are order 0). */
static bool large_folios_made(struct uf2fs *fs)
{
	static char buf[16384];
	const char *l, *e;

	uf2fs_format_stats(fs, buf, sizeof(buf));
	l = strstr(buf, "folios by order");
	if (!l)
		RW_FAIL("stats: no folio orders");
	e = strchr(l, '\n');
	for (const char *p = strchr(l + 16, ':'); p && p < e; p = strchr(p + 1, ':'))
		if (p[-1] != '0' || p[-2] != ' ')
			return true;
	return false;
}

static int expect_zero(void *arg, const struct iovec *iov, int cnt)
{
	for (int i = 0; i < cnt; i++)
		for (size_t j = 0; j < iov[i].iov_len; j++)
			if (((const uint8_t *)iov[i].iov_base)[j])
				*(bool *)arg = true;
	return 0;
}

/* Reads of a hole in an uncached file come from the shared zero region. */
static void t_hole_reads(void **state)
{
	struct uf2fs_attr a = { .size = 64ull << 30 };
	char img[PATH_MAX];
	struct model m;
	struct uf2fs *fs;
	bool nonzero = false;
	uint32_t ino;

	snprintf(rw_context, sizeof(rw_context), "hole_reads");
	rw_img_path(img, sizeof(img), "hole_reads");
	rw_mkfs(img, 256, RW_FEATURES_DEFAULT);
	model_init(&m);
	fs = mount_with(img, false, 1, 0);
	ino = rw_create(fs, &m, "sparse", S_IFREG | 0644, 0, NULL);
	RW_OK(uf2fs_setattr(fs, ino, &a, UF2FS_SET_SIZE, &a));
	rw_unmount(fs);
	fs = mount_with(img, true, 1, 0);
	for (uint64_t off = 0; off < (64ull << 30); off += 4ull << 30)
		if (uf2fs_read_iov(fs, ino, MIB, off + 12345, expect_zero, &nonzero) != MIB)
			RW_FAIL("hole read at %" PRIu64, off);
	if (nonzero)
		RW_FAIL("a hole read returned non-zero bytes");
	if (stat_after(fs, "hole blocks", "(zero") < 16 * 256 || large_folios_made(fs))
		RW_FAIL("hole reads went through folios");
	rw_unmount(fs);
	RW_FSCK(img);
	model_free(&m);
}

/* A fresh image of mb MiB, mounted read-write, with its model. */
static struct uf2fs *scenario_begin(const char *name, char *img, unsigned int mb,
				    struct model *m)
{
	snprintf(rw_context, sizeof(rw_context), "%s", name);
	rw_img_path(img, PATH_MAX, name);
	rw_mkfs(img, mb, RW_FEATURES_DEFAULT);
	model_init(m);
	return mount_with(img, false, -1, 0);
}

/* Verify, unmount, fsck, and verify again after a read-only remount. */
static void scenario_end(struct uf2fs *fs, const char *img, struct model *m)
{
	RW_VERIFY(fs, m, "before unmount");
	rw_unmount(fs);
	RW_FSCK(img);
	fs = mount_with(img, true, -1, 0);
	RW_VERIFY(fs, m, "remount");
	rw_unmount(fs);
	model_free(m);
}

/* Read len bytes at off of a file with uf2fs_read_iov (the FUSE path) and compare. */
static void read_iov_expect(struct uf2fs *fs, struct model *m, const char *name, uint32_t ino,
			    uint64_t off, size_t len)
{
	struct mnode *n = model_get(m, name);
	struct cmp c = { .want = n->data + off };
	ssize_t r = uf2fs_read_iov(fs, ino, len, off, cmp_emit, &c);

	if (r != (ssize_t)len)
		RW_FAIL("read_iov(%s, %zu at %" PRIu64 ") = %zd", name, len, off, r);
	if (c.bad)
		RW_FAIL("read_iov(%s, %zu at %" PRIu64 "): wrong bytes", name, len, off);
}

/*
 * A read of an uncached file maps its first run once: the hole check's
 * mapping fills the folios too. Whole 1 MiB folios under drop-behind leave
 * nothing cached, so each read of one pays that check; two map calls each
 * (16) would mean the fill mapped again. The hole check maps from the folio's
 * start: a read in a hole after data, and one from data into a hole, in
 * one folio, still read right.
 */
static void t_read_maps_once(void **state)
{
	char img[PATH_MAX];
	struct model m;
	struct uf2fs *fs;
	uint32_t seq, mixed;
	uint64_t maps;

	fs = scenario_begin("read_maps_once", img, 256, &m);
	rw_create(fs, &m, "seq", S_IFREG | 0644, 0, NULL);
	rw_write_pat(fs, &m, "seq", 0, 8 * MIB, 30);
	rw_create(fs, &m, "mixed", S_IFREG | 0644, 0, NULL);
	rw_write_pat(fs, &m, "mixed", 0, 6000, 31);
	rw_truncate(fs, &m, "mixed", 3 * MIB);
	rw_write_pat(fs, &m, "mixed", 2 * MIB + 100, 5000, 32);
	rw_unmount(fs);
	fs = mount_with(img, true, 1, 0);
	seq = rw_ino(fs, "seq");	/* a lookup maps the directory's blocks: not counted */
	mixed = rw_ino(fs, "mixed");
	maps = stat_after(fs, "map calls", "(");
	for (uint64_t off = 0; off < 8 * MIB; off += MIB)
		read_iov_expect(fs, &m, "seq", seq, off, MIB);
	maps = stat_after(fs, "map calls", "(") - maps;
	if (maps > 8 + 2)	/* one a read, and one where a run may break in a folio */
		RW_FAIL("%" PRIu64 " map calls for 8 reads of uncached folios", maps);
	read_iov_expect(fs, &m, "mixed", mixed, MIB / 2, 8192);
	if (stat_after(fs, "hole blocks", "(zero") != 2)
		RW_FAIL("a read in a hole after data in its folio was not answered as a hole");
	read_iov_expect(fs, &m, "mixed", mixed, 2 * MIB, 8192);
	read_iov_expect(fs, &m, "mixed", mixed, 0, 3 * MIB);
	rw_unmount(fs);
	RW_FSCK(img);
	model_free(&m);
}

static uint64_t image_mib(const char *img)
{
	struct stat st;

	if (stat(img, &st))
		RW_FAIL("stat %s: %s", img, strerror(errno));
	return (uint64_t)st.st_blocks * 512 / MIB;
}

/*
 * Freed segments are discarded at unmount (or in idle time), not at the
 * checkpoint that frees them; one reused before then is not punched.
 */
static void t_discard_deferred(void **state)
{
	char img[PATH_MAX];
	struct model m;
	struct uf2fs *fs;
	uint64_t full, after;

	snprintf(rw_context, sizeof(rw_context), "discard_deferred");
	rw_img_path(img, sizeof(img), "discard_deferred");
	rw_mkfs(img, 256, RW_FEATURES_DEFAULT);
	model_init(&m);
	fs = mount_with(img, false, -1, 0);
	rw_create(fs, &m, "a", S_IFREG | 0644, 0, NULL);
	rw_write_pat(fs, &m, "a", 0, 96 * MIB, 1);
	RW_OK(uf2fs_sync(fs));
	full = image_mib(img);
	RW_OK(uf2fs_unlink(fs, uf2fs_root_ino(fs), "a", 1));
	model_del(&m, "a");
	RW_OK(uf2fs_sync(fs));
	RW_OK(uf2fs_sync(fs));
	if (stat_after(fs, "flushes", "discards"))
		RW_FAIL("discards issued at the checkpoint, not deferred");
	/* new data may land in segments whose discard is still pending */
	rw_create(fs, &m, "b", S_IFREG | 0644, 0, NULL);
	rw_write_pat(fs, &m, "b", 0, 40 * MIB, 2);
	RW_OK(uf2fs_sync(fs));
	RW_VERIFY(fs, &m, "after rewrite");
	rw_unmount(fs);
	after = image_mib(img);
	if (full < 90 || after > full - 40)
		RW_FAIL("image holds %" PRIu64 " MiB with the file, %" PRIu64
			" MiB after delete + unmount: freed segments not discarded", full, after);
	RW_FSCK(img);
	fs = mount_with(img, true, -1, 0);
	RW_VERIFY(fs, &m, "remount");
	rw_unmount(fs);
	model_free(&m);
}

/*
 * A discard held in flight by the device hook (its segments are chosen,
 * the request is not sent yet) while the main thread writes. Only a broken
 * build waits out RACE_WAIT_S: the hook lets go as soon as what it waits
 * for has happened.
 */
#define RACE_WAIT_S	30

struct discard_race {
	struct uf2fs *fs;
	unsigned int max_segs;
	bool (*until)(struct discard_race *r);	/* the hook holds its discard until this */
	const char *stuck;			/* the failure when it never comes */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started;			/* the first discard reached the hook */
	bool finished;			/* the discarding thread is done */
	bool written;			/* set by the writer: ino, nblocks are final */
	uint32_t ino;
	uint64_t nblocks;
	unsigned int issued;		/* segments the thread discarded */
	char err[256];			/* found off the main thread; the main thread fails */
};

static void race_init(struct discard_race *r, struct uf2fs *fs, unsigned int max_segs,
		      bool (*until)(struct discard_race *r), const char *stuck)
{
	memset(r, 0, sizeof(*r));
	r->fs = fs;
	r->max_segs = max_segs;
	r->until = until;
	r->stuck = stuck;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
}

/* With r->lock held: wait (polling every 10 ms) until pred, or time out. */
static bool race_wait(struct discard_race *r, bool (*pred)(struct discard_race *r))
{
	struct timespec now, end;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += RACE_WAIT_S;
	while (!pred(r)) {
		struct timespec tick;

		clock_gettime(CLOCK_REALTIME, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			return false;
		tick = now;
		tick.tv_nsec += 10 * 1000 * 1000;
		if (tick.tv_nsec >= 1000000000L) {
			tick.tv_sec++;
			tick.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&r->cond, &r->lock, &tick);
	}
	return true;
}

static bool race_started(struct discard_race *r)
{
	return r->started || r->finished;
}

static bool race_written(struct discard_race *r)
{
	return r->written;
}

/* The counter of `uf2fs stats`, without cmocka: this runs off the main thread. */
static bool race_alloc_waited(struct discard_race *r)
{
	char buf[16384];
	const char *p;

	uf2fs_format_stats(r->fs, buf, sizeof(buf));
	p = strstr(buf, "allocation waits");
	if (!p)
		return false;
	while (p > buf && (p[-1] == ' ' || (p[-1] >= '0' && p[-1] <= '9')))
		p--;
	return strtoull(p, NULL, 10) > 0;
}

/* None of the writer's blocks may lie in the range about to be discarded. */
static void race_check_blocks(struct discard_race *r, uint32_t blk, uint64_t nr)
{
	for (uint64_t b = 0; b < r->nblocks; b++) {
		uint32_t addr;

		if (uf2fs_test_block_addr(r->fs, r->ino, b, &addr) == 0 && addr >= blk &&
		    addr < blk + nr) {
			snprintf(r->err, sizeof(r->err), "file block %" PRIu64 " was written to "
				 "%u, in the discard of %u+%" PRIu64 " still to come", b, addr,
				 blk, nr);
			return;
		}
	}
}

static void race_hook(void *arg, uint32_t blk, uint64_t nr)
{
	struct discard_race *r = arg;
	bool held;

	pthread_mutex_lock(&r->lock);
	if (r->started) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	r->started = true;
	pthread_cond_broadcast(&r->cond);
	held = race_wait(r, r->until);
	pthread_mutex_unlock(&r->lock);
	if (!held)
		snprintf(r->err, sizeof(r->err), "%s", r->stuck);
	else if (r->written)
		race_check_blocks(r, blk, nr);
}

static void *race_discarder(void *arg)
{
	struct discard_race *r = arg;
	unsigned int n = uf2fs_test_issue_discards(r->fs, r->max_segs);

	pthread_mutex_lock(&r->lock);
	r->issued = n;
	r->finished = true;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static bool race_finished(struct discard_race *r)
{
	bool done;

	pthread_mutex_lock(&r->lock);
	done = r->finished;
	pthread_mutex_unlock(&r->lock);
	return done;
}

static void race_start(struct discard_race *r, pthread_t *th)
{
	bool started;

	uf2fs_test_discard_hook(r->fs, race_hook, r);
	if (pthread_create(th, NULL, race_discarder, r))
		RW_FAIL("pthread_create");
	pthread_mutex_lock(&r->lock);
	started = race_wait(r, race_started) && r->started;
	pthread_mutex_unlock(&r->lock);
	if (!started)
		RW_FAIL("no discard was sent: nothing pending?");
}

static void race_end(struct discard_race *r, pthread_t th)
{
	pthread_join(th, NULL);
	uf2fs_test_discard_hook(r->fs, NULL, NULL);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	if (r->err[0])
		RW_FAIL("%s", r->err);
}

/* Delete a file, and checkpoint twice so that its segments await their discard. */
static void delete_for_discard(struct uf2fs *fs, struct model *m, const char *name)
{
	RW_OK(uf2fs_unlink(fs, uf2fs_root_ino(fs), name, strlen(name)));
	model_del(m, name);
	RW_OK(uf2fs_sync(fs));
	RW_OK(uf2fs_sync(fs));
}

/*
 * Writers allocate while a discard is in flight, and never into its
 * segments. The freed segments of "a" are the lowest free ones, where a
 * fresh mount allocates first: without the exclusion the writer's blocks
 * would land in the batch held by the hook and the discard would wipe
 * them. With the segment lock held across the discard, the writer could
 * not allocate at all until the hook gave up.
 */
static void t_discard_races_writer(void **state)
{
	const size_t size = 8 * MIB;
	struct discard_race r;
	char img[PATH_MAX];
	struct model m;
	struct uf2fs *fs;
	pthread_t th;
	uint32_t ino;

	fs = scenario_begin("discard_races_writer", img, 256, &m);
	rw_create(fs, &m, "keep", S_IFREG | 0644, 0, NULL);
	rw_write_pat(fs, &m, "keep", 0, MIB, 5);
	rw_create(fs, &m, "a", S_IFREG | 0644, 0, NULL);
	rw_write_pat(fs, &m, "a", 0, 48 * MIB, 6);
	rw_unmount(fs);
	fs = mount_with(img, false, -1, 0);
	delete_for_discard(fs, &m, "a");
	race_init(&r, fs, 4, race_written,
		  "the writer could not allocate while a discard was in flight");
	race_start(&r, &th);
	ino = rw_create(fs, &m, "b", S_IFREG | 0644, 0, NULL);
	rw_write_pat(fs, &m, "b", 0, size, 7);
	RW_OK(uf2fs_fsync(fs, ino, false));
	pthread_mutex_lock(&r.lock);
	r.ino = ino;
	r.nblocks = size / 4096;
	r.written = true;
	pthread_cond_broadcast(&r.cond);
	pthread_mutex_unlock(&r.lock);
	race_end(&r, th);
	if (r.issued != 4)
		RW_FAIL("%u segments discarded, asked for 4", r.issued);
	scenario_end(fs, img, &m);
}

/*
 * When every free segment is in the batch being discarded, an allocation
 * waits for the batch to end: no ENOSPC, no data in a segment still to be
 * discarded. Three rounds of write and delete leave every free segment of
 * the small image pending, and a batch holds them all.
 */
static void t_discard_alloc_waits(void **state)
{
	struct discard_race r;
	char img[PATH_MAX];
	struct model m;
	struct uf2fs *fs;
	pthread_t th;
	uint32_t ino;
	int i;

	fs = scenario_begin("discard_alloc_waits", img, 128, &m);
	for (i = 0; i < 3; i++) {
		rw_create(fs, &m, "x", S_IFREG | 0644, 0, NULL);
		rw_write_pat(fs, &m, "x", 0, 40 * MIB, 10 + i);
		RW_OK(uf2fs_sync(fs));
		delete_for_discard(fs, &m, "x");
	}
	race_init(&r, fs, 0, race_alloc_waited,
		  "no allocation waited for the discard of the last free segments");
	race_start(&r, &th);
	ino = rw_create(fs, &m, "b", S_IFREG | 0644, 0, NULL);
	for (i = 0; i < 8 && !race_finished(&r); i++) {
		rw_write_pat(fs, &m, "b", (uint64_t)i * 2 * MIB, 2 * MIB, 20 + i);
		RW_OK(uf2fs_fsync(fs, ino, false));
	}
	race_end(&r, th);
	if (!stat_after(fs, "flushes", "allocation waits"))
		RW_FAIL("no allocation waited for the discard");
	scenario_end(fs, img, &m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_dropbehind),
		cmocka_unit_test(t_dropbehind_partial),
		cmocka_unit_test(t_writebehind),
		cmocka_unit_test(t_writebehind_unaligned),
		cmocka_unit_test(t_write_through),
		cmocka_unit_test(t_write_through_full),
		cmocka_unit_test(t_hole_reads),
		cmocka_unit_test(t_read_maps_once),
		cmocka_unit_test(t_discard_deferred),
		cmocka_unit_test(t_discard_races_writer),
		cmocka_unit_test(t_discard_alloc_waits),
	};
	int failures;

	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	rw_tmp_init("cache-policy");
	failures = cmocka_run_group_tests(tests, NULL, NULL);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
