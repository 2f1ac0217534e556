// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness over image bytes. A whole f2fs image is too large for a
 * fuzzer to mutate usefully, so an input is a list of patches applied to a
 * small real image (tests/fuzz/base.img.zst, made by mkfs.f2fs + sload.f2fs):
 *
 *   repeated: le32 block, le16 offset-in-block, u8 length, length bytes
 *
 * The patched image is mounted from memory and walked through the public
 * API: every directory, attribute, file, link target and xattr. An input that
 * starts with the Android sparse magic (3a ff 26 ed) is instead a whole sparse
 * image, mounted read-only as it is, so the sparse chunk parser (lib/dev/sparse.c)
 * and the reads through its index are fuzzed too, and its checksums are
 * verified as `uf2fs info --verify` does. An input that starts with "SIMG" is
 * a whole file after those 4 bytes, with any header: how damaged sparse
 * headers (a magic a bit off) reach the same code. Any crash,
 * sanitizer report or hang is a bug; errors are the expected outcome.
 *
 * Built with -DUF2FS_FUZZ_REPLAY, main() replays every file of the corpus
 * directories given on the command line: that is how `make check` runs it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "uf2fs/uf2fs.h"

#define WALK_MAX_ENTRIES	4000
#define WALK_MAX_DEPTH		16
#define READ_MAX		(256 * 1024)

static uint8_t *base;
static size_t base_size;

static int load_base(void)
{
	const char *path = getenv("UF2FS_FUZZ_BASE");
	FILE *f;
	long n;
	void *z;

	if (base)
		return 0;
	if (!path)
		path = UF2FS_FUZZ_BASE_DEFAULT;
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "fuzz: cannot open base image %s\n", path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	z = malloc(n);
	if (!z || fread(z, 1, n, f) != (size_t)n) {
		fclose(f);
		free(z);
		return -1;
	}
	fclose(f);
	base_size = ZSTD_getFrameContentSize(z, n);
	base = malloc(base_size);
	if (!base || ZSTD_isError(ZSTD_decompress(base, base_size, z, n))) {
		free(z);
		return -1;
	}
	free(z);
	return 0;
}

struct walk {
	struct uf2fs *fs;
	unsigned int entries;
	char *buf;
};

struct dent {
	uint32_t ino;
	unsigned int dtype;
	char name[256];
};

struct dlist {
	struct dent *v;
	unsigned int n, cap;
};

static int collect(void *arg, const char *name, size_t len, uint32_t ino, unsigned int dtype,
		   uint64_t next)
{
	struct dlist *l = arg;

	if (l->n >= 512)
		return 1;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
	}
	len = len > 255 ? 255 : len;
	memcpy(l->v[l->n].name, name, len);
	l->v[l->n].name[len] = 0;
	l->v[l->n].ino = ino;
	l->v[l->n].dtype = dtype;
	l->n++;
	return 0;
}

static void walk_xattrs(struct walk *w, uint32_t ino)
{
	char list[4096];
	ssize_t n = uf2fs_listxattr(w->fs, ino, list, sizeof(list));

	for (ssize_t off = 0; n > 0 && off < n; off += strlen(list + off) + 1) {
		if (!memchr(list + off, 0, n - off))
			break;
		uf2fs_getxattr(w->fs, ino, list + off, w->buf, 65536);
	}
	uf2fs_getxattr(w->fs, ino, "system.posix_acl_access", w->buf, 65536);
}

static void walk_inode(struct walk *w, uint32_t ino, int depth)
{
	struct uf2fs_attr a;
	struct dlist l = { 0 };

	if (++w->entries > WALK_MAX_ENTRIES || uf2fs_getattr(w->fs, ino, &a))
		return;
	walk_xattrs(w, ino);
	if (S_ISREG(a.mode)) {
		uf2fs_read(w->fs, ino, w->buf, READ_MAX, 0);
		if (a.size > READ_MAX)
			uf2fs_read(w->fs, ino, w->buf, 8192, a.size - 4096);
		return;
	}
	if (S_ISLNK(a.mode)) {
		uf2fs_readlink(w->fs, ino, w->buf, 4096);
		return;
	}
	if (!S_ISDIR(a.mode) || depth > WALK_MAX_DEPTH)
		return;
	uf2fs_readdir(w->fs, ino, 0, collect, &l);
	for (unsigned int i = 0; i < l.n; i++) {
		uint32_t child;

		if (!strcmp(l.v[i].name, ".") || !strcmp(l.v[i].name, ".."))
			continue;
		if (uf2fs_lookup(w->fs, ino, l.v[i].name, strlen(l.v[i].name), &child))
			continue;
		walk_inode(w, child, depth + 1);
	}
	free(l.v);
}

struct patch_undo {
	size_t off;
	uint8_t old[255];
	uint8_t len;
};

static void mount_and_walk(const void *image, size_t size)
{
	struct uf2fs_options o;
	struct uf2fs *fs;
	struct statvfs st;

	uf2fs_default_options(&o);
	o.backend = UF2FS_BACKEND_RAM;
	o.ram_image = image;
	o.ram_size = size;
	o.quiet = true;
	o.cache_size = 8 << 20;
	if (!uf2fs_mount(&o, &fs)) {
		struct walk w = { fs, 0, malloc(READ_MAX + 65536) };

		uf2fs_statfs(fs, &st);
		walk_inode(&w, uf2fs_root_ino(fs), 0);
		free(w.buf);
		uf2fs_unmount(fs);
	}
}

/* uf2fs_verify_sparse takes a path: the bytes go through a memfd. */
static void verify_sparse(const void *image, size_t size)
{
	int fd = memfd_create("fuzz-simg", MFD_CLOEXEC);
	char path[64], msg[256];

	if (fd < 0)
		return;
	if (write(fd, image, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		uf2fs_verify_sparse(path, msg, sizeof(msg));
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct patch_undo undo[64];
	unsigned int nundo = 0;

	if (load_base())
		abort();
	if (size >= 4 && !memcmp(data, "SIMG", 4)) {
		data += 4;
		size -= 4;
		verify_sparse(data, size);
		mount_and_walk(data, size);
		return 0;
	}
	if (size >= 4 && !memcmp(data, "\x3a\xff\x26\xed", 4)) {
		verify_sparse(data, size);
		mount_and_walk(data, size);	/* read-only by default */
		return 0;
	}
	while (size >= 7 && nundo < 64) {
		uint32_t blk = data[0] | data[1] << 8 | data[2] << 16 | (uint32_t)data[3] << 24;
		uint16_t off = (data[4] | data[5] << 8) % 4096;
		uint8_t len = data[6];
		size_t at = ((size_t)blk % (base_size / 4096)) * 4096 + off;

		data += 7;
		size -= 7;
		if (len > size)
			len = size;
		if (at + len > base_size)
			len = base_size - at;
		undo[nundo].off = at;
		undo[nundo].len = len;
		memcpy(undo[nundo++].old, base + at, len);
		memcpy(base + at, data, len);
		data += len;
		size -= len;
	}
	mount_and_walk(base, base_size);
	while (nundo--)
		memcpy(base + undo[nundo].off, undo[nundo].old, undo[nundo].len);
	return 0;
}

#ifdef UF2FS_FUZZ_REPLAY
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n ? n : 1);
	if (fread(buf, 1, n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int count = 0;

	/* the unpatched base must mount: otherwise every replay proves nothing */
	if (load_base())
		return 1;
	struct uf2fs_options o;
	struct uf2fs *fs;

	uf2fs_default_options(&o);
	o.backend = UF2FS_BACKEND_RAM;
	o.ram_image = base;
	o.ram_size = base_size;
	if (uf2fs_mount(&o, &fs)) {
		fprintf(stderr, "fuzz: the base image does not mount\n");
		return 1;
	}
	uf2fs_unmount(fs);
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (!d) {
			if (!replay_file(argv[i]))
				count++;
			continue;
		}
		while ((e = readdir(d))) {
			char p[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", argv[i], e->d_name);
			if (!replay_file(p))
				count++;
		}
		closedir(d);
	}
	printf("replayed %u inputs without a crash\n", count);
	return count ? 0 : 1;
}
#endif
