/* guest-helper: a small static tool for the compat guest (busybox lacks these).
 *
 * It runs inside the QEMU guest (tests/compat/qemu.sh copies it to /bin/gh) and
 * does the things a busybox userland cannot: deterministic file content,
 * xattrs and POSIX ACLs, inode flags, fallocate, sockets, f2fs ioctls, and the
 * manifest that tests/compat/verify-tree.py later checks uf2fs against.
 *
 *   gh gen PATH SIZE SEED KIND [OFFSET]   write SIZE bytes at OFFSET (default 0),
 *                                         creating PATH 0644 if needed. KIND:
 *                                         rand (incompressible), text (compressible),
 *                                         zero, runs (long byte runs).
 *   gh fsyncgen PATH SIZE SEED KIND [OFFSET]   gen, then fsync the file
 *   gh fsync PATH                         open + fsync (file or directory)
 *   gh mkfiles DIR N SEED                 N small files (names of varying length)
 *   gh setxattr PATH NAME VALUE           VALUE: text, or hex:..., or gen:SIZE:SEED
 *   gh acl PATH access|default            set a fixed POSIX ACL (VFS xattr format)
 *   gh flags PATH [+x|-x ...]             FS_IOC_{GET,SET}FLAGS; x in i a d A c m F
 *                                         (immutable append nodump noatime compr nocomp
 *                                         casefold)
 *   gh rename OLD NEW                     rename(2), nothing else (mv may refuse or
 *                                         copy where names match by case)
 *   gh utime PATH SEC NSEC                lutimes: atime = mtime = SEC.NSEC
 *   gh settimes ROOT BASE                 every entry under ROOT, bottom up: mtime =
 *                                         BASE + hash(path) (deterministic)
 *   gh mksock PATH                        bind an AF_UNIX socket there, then exit
 *   gh fallocate PATH OFF LEN [keep]      fallocate(0 or KEEP_SIZE)
 *   gh punch PATH OFF LEN                 PUNCH_HOLE|KEEP_SIZE
 *   gh collapse PATH OFF LEN              COLLAPSE_RANGE
 *   gh insert PATH OFF LEN                INSERT_RANGE
 *   gh cblocks PATH                       F2FS_IOC_GET_COMPRESS_BLOCKS
 *   gh release PATH                       F2FS_IOC_RELEASE_COMPRESS_BLOCKS
 *   gh verity PATH                        FS_IOC_ENABLE_VERITY (sha256, 4K)
 *   gh verity-enable PATH ALG [SALTHEX]   FS_IOC_ENABLE_VERITY: ALG sha256|sha512, 4K
 *   gh fscrypt ...                        keys, policies, the no-key view (see below)
 *   gh verity-measure PATH                FS_IOC_MEASURE_VERITY: prints ALG:HEX
 *   gh verity-sign-enable PATH SIGFILE    FS_IOC_ENABLE_VERITY (sha256, 4K) with a
 *                                         builtin signature: prints 0 or the errno
 *   gh verity-keyring-add CERT.der        add an X.509 certificate to the kernel's
 *                                         .fs-verity keyring (add_key "asymmetric")
 *   gh read-errno PATH                    read the whole file: prints 0 or the errno
 *   gh sha256 PATH                        print the file's sha256 (self-check)
 *   gh quota-get DEV u|g|p                every id's usage (quotactl Q_GETNEXTQUOTA):
 *                                         "user|group|project ID KiB INODES" lines
 *   gh setproj PATH ID [inherit]          FS_IOC_FSSETXATTR: project ID (and PROJINHERIT)
 *   gh manifest ROOT MANIFEST XATTRS INFO [SPARSEDIR]
 *                                         write the three manifest files. With
 *                                         SPARSEDIR, a big file that is mostly holes
 *                                         gets "sparse:N" instead of its sha256, and
 *                                         SPARSEDIR/N.map ("offset length" lines, from
 *                                         SEEK_DATA/SEEK_HOLE) and N.data (those
 *                                         bytes): hashing GiBs of zeros under TCG
 *                                         takes many minutes, on the host seconds.
 *
 * Manifest format (tab separated, one line per path, sorted by path bytes; the
 * root is "."; bytes < 0x21, 0x7f, '\\' and 0x80.. that are not valid UTF-8 in
 * paths and link targets are written as \xHH):
 *   path type mode uid gid size mtime_sec sha256|target|- nlink rdev ino mtime_nsec flags
 *   type: file dir symlink fifo chr blk sock; mode: permission bits, octal;
 *   rdev: MAJOR:MINOR for chr/blk, else -; flags: FS_IOC_GETFLAGS in hex for
 *   file/dir, else -.
 * XATTRS: path name hexvalue   (names sorted, for every entry)
 * INFO:   path ino st_blocks compress_blocks fiemap   (regular files only;
 *   fiemap = "inline", or the number of extents)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define F2FS_IOC_GET_COMPRESS_BLOCKS _IOR(0xf5, 17, uint64_t)
#define F2FS_IOC_RELEASE_COMPRESS_BLOCKS _IOR(0xf5, 18, uint64_t)

static void die(const char *what, const char *path)
{
	fprintf(stderr, "gh: %s %s: %s\n", what, path ? path : "", strerror(errno));
	exit(1);
}

/* ---- deterministic content ---- */

static uint64_t rng_state;

static uint64_t xorshift(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static void rng_seed(uint64_t seed)
{
	rng_state = seed * 0x9E3779B97F4A7C15ull + 0x1234567;
	if (!rng_state)
		rng_state = 1;
	for (int i = 0; i < 8; i++)
		xorshift();
}

static const char *words[] = {
	"flash", "friendly", "file", "system", "segment", "node", "checkpoint",
	"inode", "dentry", "extent", "cluster", "compress", "the ", "of ", "and ",
	"log-structured ", "\n", "block ", "data ", "zone ", "f2fs ", "nat ", "sit ",
};

/* Fill buf with len bytes of KIND; the stream depends only on seed and the
 * absolute position in the stream (callers fill sequentially). */
static void fill(char *buf, size_t len, const char *kind)
{
	size_t i = 0;
	if (!strcmp(kind, "zero")) {
		memset(buf, 0, len);
	} else if (!strcmp(kind, "rand")) {
		while (i < len) {
			uint64_t v = xorshift();
			for (int b = 0; b < 8 && i < len; b++, v >>= 8)
				buf[i++] = (char)v;
		}
	} else if (!strcmp(kind, "text")) {
		while (i < len) {
			const char *w = words[xorshift() % (sizeof words / sizeof *words)];
			for (; *w && i < len; w++)
				buf[i++] = *w;
		}
	} else if (!strcmp(kind, "runs")) {
		while (i < len) {
			uint64_t v = xorshift();
			size_t run = 64 + (v >> 8) % 4000;
			for (size_t r = 0; r < run && i < len; r++)
				buf[i++] = (char)v;
		}
	} else {
		fprintf(stderr, "gh: unknown kind %s\n", kind);
		exit(2);
	}
}

static int gen(const char *path, long long size, uint64_t seed, const char *kind, long long off,
	       int do_fsync)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		die("open", path);
	static char buf[1 << 16];
	rng_seed(seed);
	while (size > 0) {
		size_t n = size < (long long)sizeof buf ? (size_t)size : sizeof buf;
		fill(buf, n, kind);
		ssize_t w = pwrite(fd, buf, n, off);
		if (w != (ssize_t)n)
			die("pwrite", path);
		off += n;
		size -= n;
	}
	if (do_fsync && fsync(fd))
		die("fsync", path);
	close(fd);
	return 0;
}

/* ---- SHA-256 (FIPS 180-4) ---- */

struct sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t n;
};

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(struct sha256 *s, const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
	e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) +
			      K256[i] + w[i];
		uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
	s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

static void sha256_init(struct sha256 *s)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	memcpy(s->h, iv, sizeof iv);
	s->len = 0;
	s->n = 0;
}

static void sha256_update(struct sha256 *s, const uint8_t *p, size_t len)
{
	s->len += len;
	while (len) {
		if (s->n == 0 && len >= 64) {
			sha256_block(s, p);
			p += 64, len -= 64;
			continue;
		}
		size_t k = 64 - s->n < len ? 64 - s->n : len;
		memcpy(s->buf + s->n, p, k);
		s->n += k, p += k, len -= k;
		if (s->n == 64) {
			sha256_block(s, s->buf);
			s->n = 0;
		}
	}
}

static void sha256_final(struct sha256 *s, char hex[65])
{
	uint64_t bits = s->len * 8;
	uint8_t pad = 0x80, z = 0, lenb[8];
	sha256_update(s, &pad, 1);
	while (s->n != 56)
		sha256_update(s, &z, 1);
	for (int i = 0; i < 8; i++)
		lenb[i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(s, lenb, 8);
	for (int i = 0; i < 8; i++)
		sprintf(hex + 8 * i, "%08x", s->h[i]);
}

static int sha256_file(const char *path, char hex[65])
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	static uint8_t buf[1 << 16];
	struct sha256 s;
	sha256_init(&s);
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0) {
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		sha256_update(&s, buf, r);
	}
	close(fd);
	sha256_final(&s, hex);
	return 0;
}

/* ---- manifest ---- */

/* Length of a valid UTF-8 sequence at p (max n bytes), or 0. */
static int utf8_len(const unsigned char *p, size_t n)
{
	int len;
	uint32_t cp;
	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		len = 2, cp = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		len = 3, cp = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if ((size_t)len > n)
		return 0;
	for (int i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static void put_escaped(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		int l = utf8_len(p + i, n - i);
		if (l > 1) {
			fwrite(p + i, 1, l, f);
			i += l;
		} else if (l == 1 && p[i] > 0x20 && p[i] != 0x7f && p[i] != '\\') {
			fputc(p[i++], f);
		} else {
			fprintf(f, "\\x%02x", p[i++]);
		}
	}
}

struct ent {
	char *name;
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static FILE *mf, *xf, *inf;
static const char *sparse_dir;
static int sparse_count;

/* Dump the data segments of a mostly-sparse file; returns its number. */
static int sparse_dump(const char *abs, off_t size)
{
	int fd = open(abs, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		die("open", abs);
	int n = ++sparse_count;
	char p[4096];
	snprintf(p, sizeof p, "%s/%d.map", sparse_dir, n);
	FILE *map = fopen(p, "w");
	snprintf(p, sizeof p, "%s/%d.data", sparse_dir, n);
	FILE *data = fopen(p, "w");
	if (!map || !data)
		die("fopen", p);
	fprintf(map, "size %lld\n", (long long)size);
	static char buf[1 << 16];
	off_t pos = 0;
	while (pos < size) {
		off_t d = lseek(fd, pos, SEEK_DATA);
		if (d < 0 && errno == ENXIO)
			break;
		if (d < 0)
			die("SEEK_DATA", abs);
		off_t h = lseek(fd, d, SEEK_HOLE);
		if (h < 0)
			die("SEEK_HOLE", abs);
		if (h > size)
			h = size;
		fprintf(map, "%lld %lld\n", (long long)d, (long long)(h - d));
		for (off_t o = d; o < h;) {
			size_t want = h - o < (off_t)sizeof buf ? (size_t)(h - o) : sizeof buf;
			ssize_t r = pread(fd, buf, want, o);
			if (r <= 0)
				die("pread", abs);
			fwrite(buf, 1, r, data);
			o += r;
		}
		pos = h;
	}
	fclose(map), fclose(data), close(fd);
	return n;
}

static void emit(const char *abs, const char *rel)
{
	struct stat st;
	if (lstat(abs, &st))
		die("lstat", abs);
	const char *type = S_ISREG(st.st_mode)	  ? "file"
			   : S_ISDIR(st.st_mode)  ? "dir"
			   : S_ISLNK(st.st_mode)  ? "symlink"
			   : S_ISFIFO(st.st_mode) ? "fifo"
			   : S_ISCHR(st.st_mode)  ? "chr"
			   : S_ISBLK(st.st_mode)  ? "blk"
			   : S_ISSOCK(st.st_mode) ? "sock"
						  : "?";
	put_escaped(mf, rel, strlen(rel));
	fprintf(mf, "\t%s\t%04o\t%u\t%u\t%lld\t%lld\t", type, (unsigned)(st.st_mode & 07777),
		(unsigned)st.st_uid, (unsigned)st.st_gid, (long long)st.st_size,
		(long long)st.st_mtim.tv_sec);
	if (S_ISREG(st.st_mode) && sparse_dir && st.st_size >= (16 << 20) &&
	    (long long)st.st_blocks * 512 < st.st_size / 8) {
		fprintf(mf, "sparse:%d", sparse_dump(abs, st.st_size));
	} else if (S_ISREG(st.st_mode)) {
		char hex[65];
		if (sha256_file(abs, hex))
			die("read", abs);
		fputs(hex, mf);
	} else if (S_ISLNK(st.st_mode)) {
		char t[8192];
		ssize_t n = readlink(abs, t, sizeof t);
		if (n < 0)
			die("readlink", abs);
		put_escaped(mf, t, n);
	} else {
		fputc('-', mf);
	}
	fprintf(mf, "\t%lu\t", (unsigned long)st.st_nlink);
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		fprintf(mf, "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	else
		fputc('-', mf);
	fprintf(mf, "\t%llu\t%ld\t", (unsigned long long)st.st_ino, (long)st.st_mtim.tv_nsec);

	int fd = -1;
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		fd = open(abs, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	int fl = 0;
	if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &fl) == 0)
		fprintf(mf, "%x\n", (unsigned)fl);
	else
		fputs("-\n", mf);

	if (fd >= 0 && S_ISREG(st.st_mode)) {
		uint64_t cb = 0;
		int have_cb = ioctl(fd, F2FS_IOC_GET_COMPRESS_BLOCKS, &cb) == 0;
		char fm[64] = "-";
		struct {
			struct fiemap fm;
			struct fiemap_extent ext[64];
		} q;
		uint64_t start = 0;
		long extents = 0;
		int inl = 0;
		for (;;) {
			memset(&q, 0, sizeof q);
			q.fm.fm_start = start;
			q.fm.fm_length = ~0ull - start;
			q.fm.fm_extent_count = 64;
			if (ioctl(fd, FS_IOC_FIEMAP, &q.fm)) {
				extents = -1;
				break;
			}
			if (!q.fm.fm_mapped_extents)
				break;
			struct fiemap_extent *last = &q.fm.fm_extents[q.fm.fm_mapped_extents - 1];
			for (unsigned i = 0; i < q.fm.fm_mapped_extents; i++)
				if (q.fm.fm_extents[i].fe_flags & FIEMAP_EXTENT_DATA_INLINE)
					inl = 1;
			extents += q.fm.fm_mapped_extents;
			if (last->fe_flags & FIEMAP_EXTENT_LAST)
				break;
			start = last->fe_logical + last->fe_length;
		}
		if (inl)
			strcpy(fm, "inline");
		else if (extents >= 0)
			snprintf(fm, sizeof fm, "%ld", extents);
		put_escaped(inf, rel, strlen(rel));
		fprintf(inf, "\t%llu\t%lld\t", (unsigned long long)st.st_ino, (long long)st.st_blocks);
		if (have_cb)
			fprintf(inf, "%llu", (unsigned long long)cb);
		else
			fputc('-', inf);
		fprintf(inf, "\t%s\n", fm);
	}
	if (fd >= 0)
		close(fd);

	char names[65536];
	ssize_t n = llistxattr(abs, names, sizeof names);
	if (n < 0)
		die("listxattr", abs);
	char *list[1024];
	int cnt = 0;
	for (char *p = names; p < names + n && cnt < 1024; p += strlen(p) + 1)
		list[cnt++] = p;
	qsort(list, cnt, sizeof *list, cmp_names);
	for (int i = 0; i < cnt; i++) {
		static unsigned char val[65536];
		ssize_t v = lgetxattr(abs, list[i], val, sizeof val);
		if (v < 0)
			die("getxattr", list[i]);
		put_escaped(xf, rel, strlen(rel));
		fprintf(xf, "\t%s\t", list[i]);
		for (ssize_t k = 0; k < v; k++)
			fprintf(xf, "%02x", val[k]);
		fputc('\n', xf);
	}
}

/* Collect every path below root, sort by bytes, then emit: sorted order is the
 * manifest's order, so it is a pure function of the tree. */
static char **paths;
static size_t npaths, cap;

static void collect(const char *abs, const char *rel)
{
	DIR *d = opendir(abs);
	if (!d)
		die("opendir", abs);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *r;
		if (!strcmp(rel, "."))
			r = strdup(de->d_name);
		else if (asprintf(&r, "%s/%s", rel, de->d_name) < 0)
			exit(1);
		if (npaths == cap) {
			cap = cap ? cap * 2 : 1024;
			paths = realloc(paths, cap * sizeof *paths);
		}
		paths[npaths++] = r;
		char *a;
		if (asprintf(&a, "%s/%s", abs, de->d_name) < 0)
			exit(1);
		struct stat st;
		if (lstat(a, &st))
			die("lstat", a);
		if (S_ISDIR(st.st_mode))
			collect(a, r);
		free(a);
	}
	closedir(d);
}

static int manifest(const char *root, const char *m, const char *x, const char *i, const char *sp)
{
	sparse_dir = sp;
	if (sp)
		mkdir(sp, 0755);
	mf = fopen(m, "w"), xf = fopen(x, "w"), inf = fopen(i, "w");
	if (!mf || !xf || !inf)
		die("fopen", m);
	collect(root, ".");
	qsort(paths, npaths, sizeof *paths, cmp_names);
	emit(root, ".");
	for (size_t k = 0; k < npaths; k++) {
		char *a;
		if (asprintf(&a, "%s/%s", root, paths[k]) < 0)
			exit(1);
		emit(a, paths[k]);
		free(a);
	}
	fclose(mf), fclose(xf), fclose(inf);
	return 0;
}

/* ---- times ---- */

static uint64_t fnv(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static void set_time(const char *abs, long long sec, long nsec)
{
	struct timespec ts[2] = { { sec, nsec }, { sec, nsec } };
	if (utimensat(AT_FDCWD, abs, ts, AT_SYMLINK_NOFOLLOW))
		die("utimensat", abs);
}

static void settimes(const char *abs, const char *rel, long long base)
{
	struct stat st;
	if (lstat(abs, &st))
		die("lstat", abs);
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(abs);
		if (!d)
			die("opendir", abs);
		struct dirent *de;
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char *a, *r;
			if (asprintf(&a, "%s/%s", abs, de->d_name) < 0 ||
			    asprintf(&r, "%s/%s", rel, de->d_name) < 0)
				exit(1);
			settimes(a, r, base);
			free(a), free(r);
		}
		closedir(d);
	}
	uint64_t h = fnv(rel);
	set_time(abs, base + (long long)(h % 100000000), (long)((h >> 32) % 1000000000));
}

/* ---- ACL: the VFS xattr format of POSIX ACLs ---- */

struct acl_entry {
	uint16_t tag, perm;
	uint32_t id;
};

static int set_acl(const char *path, const char *which)
{
	struct {
		uint32_t version;
		struct acl_entry e[6];
	} a = { 2,
		{ { 0x01, 7, ~0u },   /* USER_OBJ  rwx */
		  { 0x02, 5, 1000 },  /* USER 1000 r-x */
		  { 0x04, 5, ~0u },   /* GROUP_OBJ r-x */
		  { 0x08, 4, 100 },   /* GROUP 100 r-- */
		  { 0x10, 5, ~0u },   /* MASK      r-x */
		  { 0x20, 4, ~0u } } }; /* OTHER   r-- */
	const char *name = !strcmp(which, "default") ? "system.posix_acl_default"
						     : "system.posix_acl_access";
	if (lsetxattr(path, name, &a, sizeof a, 0))
		die("setxattr acl", path);
	return 0;
}

static int do_setxattr(const char *path, const char *name, const char *v)
{
	char *buf;
	size_t len;
	if (!strncmp(v, "hex:", 4)) {
		len = strlen(v + 4) / 2;
		buf = malloc(len + 1);
		for (size_t i = 0; i < len; i++) {
			unsigned b;
			sscanf(v + 4 + 2 * i, "%2x", &b);
			buf[i] = (char)b;
		}
	} else if (!strncmp(v, "gen:", 4)) {
		unsigned long long seed;
		len = strtoul(v + 4, NULL, 0);
		seed = strtoull(strchr(v + 4, ':') + 1, NULL, 0);
		buf = malloc(len + 1);
		rng_seed(seed);
		fill(buf, len, "text");
	} else {
		buf = strdup(v);
		len = strlen(v);
	}
	if (lsetxattr(path, name, buf, len, 0))
		die("setxattr", name);
	free(buf);
	return 0;
}

static int flags(int argc, char **argv)
{
	int fd = open(argv[2], O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		die("open", argv[2]);
	int fl = 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &fl))
		die("getflags", argv[2]);
	for (int i = 3; i < argc; i++) {
		int bit = 0;
		switch (argv[i][1]) {
		case 'i': bit = FS_IMMUTABLE_FL; break;
		case 'a': bit = FS_APPEND_FL; break;
		case 'd': bit = FS_NODUMP_FL; break;
		case 'A': bit = FS_NOATIME_FL; break;
		case 'c': bit = FS_COMPR_FL; break;
		case 'm': bit = FS_NOCOMP_FL; break;
		case 'F': bit = FS_CASEFOLD_FL; break;
		default: fprintf(stderr, "gh: unknown flag %s\n", argv[i]); exit(2);
		}
		if (argv[i][0] == '+')
			fl |= bit;
		else
			fl &= ~bit;
	}
	if (argc > 3 && ioctl(fd, FS_IOC_SETFLAGS, &fl))
		die("setflags", argv[2]);
	printf("%x\n", (unsigned)fl);
	close(fd);
	return 0;
}

static int mkfiles(const char *dir, long n, uint64_t seed)
{
	char path[4096], buf[512];
	for (long i = 0; i < n; i++) {
		/* names from 1 to ~60 bytes, so dentries take 1..8 slots */
		int pad = (int)((i * 7919) % 56);
		snprintf(path, sizeof path, "%s/e%05ld-%.*s", dir, i, pad,
			 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			die("create", path);
		rng_seed(seed + i);
		size_t len = i % 5 == 0 ? 0 : 1 + (size_t)(xorshift() % 200);
		fill(buf, len, "text");
		if (write(fd, buf, len) != (ssize_t)len)
			die("write", path);
		close(fd);
	}
	return 0;
}

static int simple_ioctl_u64(const char *path, unsigned long req, const char *what, int rw)
{
	int fd = open(path, rw ? O_RDWR : O_RDONLY);
	if (fd < 0)
		die("open", path);
	uint64_t v = 0;
	if (ioctl(fd, req, &v))
		die(what, path);
	printf("%llu\n", (unsigned long long)v);
	close(fd);
	return 0;
}

/* /// quota-get: Linux's own usage per id, for tests/compat/quota.sh /// */

#include <sys/quota.h>
#ifndef Q_GETNEXTQUOTA
#define Q_GETNEXTQUOTA 0x800009
#endif

struct gh_nextdqblk {		/* the kernel's struct if_nextdqblk */
	uint64_t bhard, bsoft, curspace, ihard, isoft, curinodes, btime, itime;
	uint32_t valid, id;
};

static int quota_get(const char *dev, const char *t)
{
	static const char *const names[3] = { "user", "group", "project" };
	int type = t[0] == 'g' ? 1 : t[0] == 'p' ? 2 : 0;
	struct gh_nextdqblk d;
	unsigned int id = 0;

	for (;;) {
		memset(&d, 0, sizeof(d));
		if (quotactl(QCMD(Q_GETNEXTQUOTA, type), dev, (int)id, (caddr_t)&d)) {
			if (errno == ENOENT)
				return 0;
			die("quotactl(Q_GETNEXTQUOTA)", dev);
		}
		if (d.curspace || d.curinodes)
			printf("%s %u %llu %llu\n", names[type], d.id,
			       (unsigned long long)(d.curspace + 1023) / 1024,
			       (unsigned long long)d.curinodes);
		if (d.id == UINT32_MAX)
			return 0;
		id = d.id + 1;
	}
}

static int setproj(const char *path, unsigned int id, int inherit)
{
	struct fsxattr fa;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || ioctl(fd, FS_IOC_FSGETXATTR, &fa))
		die("FS_IOC_FSGETXATTR", path);
	fa.fsx_projid = id;
	if (inherit)
		fa.fsx_xflags |= FS_XFLAG_PROJINHERIT;
	if (ioctl(fd, FS_IOC_FSSETXATTR, &fa))
		die("FS_IOC_FSSETXATTR", path);
	close(fd);
	return 0;
}

/// fs-verity with a choice of hash and salt (tests/compat/verity.sh) ///

static int verity_enable_cmd(const char *path, const char *alg, const char *salt_hex)
{
	struct fsverity_enable_arg a = { .version = 1, .block_size = 4096 };
	uint8_t salt[32];
	size_t n = salt_hex ? strlen(salt_hex) / 2 : 0;

	a.hash_algorithm = !strcmp(alg, "sha512") ? FS_VERITY_HASH_ALG_SHA512
						  : FS_VERITY_HASH_ALG_SHA256;
	if (n > sizeof(salt))
		n = sizeof(salt);
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(salt_hex + 2 * i, "%2x", &v) != 1)
			die("salt", salt_hex);
		salt[i] = (uint8_t)v;
	}
	a.salt_size = (uint32_t)n;
	a.salt_ptr = (uintptr_t)salt;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || ioctl(fd, FS_IOC_ENABLE_VERITY, &a))
		die("enable_verity", path);
	close(fd);
	return 0;
}

static int verity_measure_cmd(const char *path)
{
	struct {
		struct fsverity_digest d;
		uint8_t buf[64];
	} m = { .d.digest_size = 64 };
	int fd = open(path, O_RDONLY);

	if (fd < 0 || ioctl(fd, FS_IOC_MEASURE_VERITY, &m))
		die("measure_verity", path);
	close(fd);
	printf("%s:", m.d.digest_algorithm == FS_VERITY_HASH_ALG_SHA512 ? "sha512" : "sha256");
	for (unsigned int i = 0; i < m.d.digest_size; i++)
		printf("%02x", m.buf[i]);
	printf("\n");
	return 0;
}

/* The whole content of a small file (at most 64 KiB), or die. */
static size_t slurp(const char *path, uint8_t *buf, size_t max)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, max);

	if (n < 0)
		die("read", path);
	close(fd);
	return (size_t)n;
}

static int verity_sign_enable_cmd(const char *path, const char *sigfile)
{
	static uint8_t sig[65536];
	struct fsverity_enable_arg a = { .version = 1, .block_size = 4096,
					 .hash_algorithm = FS_VERITY_HASH_ALG_SHA256 };
	int fd = open(path, O_RDONLY);

	a.sig_size = (uint32_t)slurp(sigfile, sig, sizeof(sig));
	a.sig_ptr = (uintptr_t)sig;
	if (fd < 0)
		die("open", path);
	printf("%d\n", ioctl(fd, FS_IOC_ENABLE_VERITY, &a) ? errno : 0);
	close(fd);
	return 0;
}

/* The id of the keyring fs/verity made (/proc/keys: "ID ... keyring .fs-verity: ..."). */
static long fsverity_keyring_id(void)
{
	char line[512];
	FILE *f = fopen("/proc/keys", "r");
	long id = -1;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, " keyring ") && strstr(line, ".fs-verity:"))
			id = strtol(line, NULL, 16);
	if (f)
		fclose(f);
	return id;
}

static int verity_keyring_add_cmd(const char *der)
{
	static uint8_t cert[65536];
	size_t n = slurp(der, cert, sizeof(cert));
	long ring = fsverity_keyring_id();

	if (ring < 0)
		die("no .fs-verity keyring in /proc/keys", der);
	if (syscall(SYS_add_key, "asymmetric", "", cert, n, ring) < 0)
		die("add_key", der);
	return 0;
}

static int read_errno_cmd(const char *path)
{
	static uint8_t buf[65536];
	int fd = open(path, O_RDONLY), err = 0;
	ssize_t n;

	if (fd < 0) {
		printf("%d\n", errno);
		return 0;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err = errno;
	close(fd);
	printf("%d\n", err);
	return 0;
}

/* ---- fscrypt: keys, policies and the no-key view ----
 *
 *   gh fscrypt add_key MNT HEXKEY [DESC]  FS_IOC_ADD_ENCRYPTION_KEY: a v2 key (prints
 *                                         its identifier), or with DESC (16 hex) a
 *                                         v1 key by descriptor
 *   gh fscrypt remove_key MNT KEYSPEC     FS_IOC_REMOVE_ENCRYPTION_KEY (prints the
 *                                         status flags); KEYSPEC: 32 hex = v2
 *                                         identifier, 16 hex = v1 descriptor
 *   gh fscrypt key_status MNT KEYSPEC     prints Absent, Present or
 *                                         Incompletely_removed
 *   gh fscrypt set_policy DIR KEYSPEC CONTENTS FILENAMES PAD [FLAG...]
 *                                         v1 or v2 by KEYSPEC's length; modes as
 *                                         fscryptctl names them (AES-256-XTS ...);
 *                                         PAD 4 8 16 32; FLAG direct_key,
 *                                         iv_ino_lblk_64, iv_ino_lblk_32
 *   gh fscrypt get_policy PATH            "v2 AES-256-XTS AES-256-CTS pad32 FLAGS KEYSPEC"
 *                                         (FLAGS: the flag names joined by +, or -)
 *   gh fscrypt nokey_list ROOT OUT        the tree as a no-key user sees it, one line
 *                                         per path, sorted: path type mode size
 *                                         target|- nlink ino open; open is ok or the
 *                                         errno name of open(O_RDONLY) for files
 *                                         (ENOKEY without the key), - otherwise
 */
#include <linux/fscrypt.h>

static const struct { int mode; const char *name; } fsc_modes[] = {
	{ 1, "AES-256-XTS" }, { 4, "AES-256-CTS" }, { 5, "AES-128-CBC" },
	{ 6, "AES-128-CTS" }, { 9, "Adiantum" }, { 10, "AES-256-HCTR2" },
};
static const struct { int flag; const char *name; } fsc_flags[] = {
	{ 0x04, "direct_key" }, { 0x08, "iv_ino_lblk_64" }, { 0x10, "iv_ino_lblk_32" },
};

static int fsc_mode(const char *name)
{
	for (size_t i = 0; i < sizeof fsc_modes / sizeof *fsc_modes; i++)
		if (!strcasecmp(name, fsc_modes[i].name))
			return fsc_modes[i].mode;
	fprintf(stderr, "gh: unknown fscrypt mode %s\n", name);
	exit(2);
}

static const char *fsc_mode_name(int mode)
{
	for (size_t i = 0; i < sizeof fsc_modes / sizeof *fsc_modes; i++)
		if (fsc_modes[i].mode == mode)
			return fsc_modes[i].name;
	return "?";
}

static void fsc_hex(const char *hex, uint8_t *out, size_t n)
{
	if (strlen(hex) != 2 * n) {
		fprintf(stderr, "gh: want %zu hex digits, got '%s'\n", 2 * n, hex);
		exit(2);
	}
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
			fprintf(stderr, "gh: bad hex '%s'\n", hex);
			exit(2);
		}
		out[i] = (uint8_t)v;
	}
}

static void fsc_print_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

/* KEYSPEC -> key_spec; returns the policy version it implies. */
static int fsc_keyspec(const char *spec, struct fscrypt_key_specifier *ks)
{
	memset(ks, 0, sizeof *ks);
	if (strlen(spec) == 2 * FSCRYPT_KEY_DESCRIPTOR_SIZE) {
		ks->type = FSCRYPT_KEY_SPEC_TYPE_DESCRIPTOR;
		fsc_hex(spec, ks->u.descriptor, FSCRYPT_KEY_DESCRIPTOR_SIZE);
		return 1;
	}
	ks->type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER;
	fsc_hex(spec, ks->u.identifier, FSCRYPT_KEY_IDENTIFIER_SIZE);
	return 2;
}

static int fsc_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open", path);
	return fd;
}

static int fsc_add_key(int argc, char **argv)
{
	size_t klen = strlen(argv[3]) / 2;
	struct fscrypt_add_key_arg *a = calloc(1, sizeof *a + FSCRYPT_MAX_KEY_SIZE);
	if (!a || klen > FSCRYPT_MAX_KEY_SIZE)
		return 2;
	fsc_hex(argv[3], a->raw, klen);
	a->raw_size = (uint32_t)klen;
	if (argc > 4) {
		a->key_spec.type = FSCRYPT_KEY_SPEC_TYPE_DESCRIPTOR;
		fsc_hex(argv[4], a->key_spec.u.descriptor, FSCRYPT_KEY_DESCRIPTOR_SIZE);
	} else {
		a->key_spec.type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER;
	}
	int fd = fsc_open(argv[2]);
	if (ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, a))
		die("FS_IOC_ADD_ENCRYPTION_KEY", argv[2]);
	if (argc > 4)
		printf("%s\n", argv[4]);
	else
		fsc_print_hex(a->key_spec.u.identifier, FSCRYPT_KEY_IDENTIFIER_SIZE), printf("\n");
	close(fd);
	free(a);
	return 0;
}

static int fsc_remove_key(const char *mnt, const char *spec)
{
	struct fscrypt_remove_key_arg a = { 0 };
	fsc_keyspec(spec, &a.key_spec);
	int fd = fsc_open(mnt);
	if (ioctl(fd, FS_IOC_REMOVE_ENCRYPTION_KEY, &a))
		die("FS_IOC_REMOVE_ENCRYPTION_KEY", mnt);
	printf("0x%x\n", a.removal_status_flags);
	close(fd);
	return 0;
}

static int fsc_key_status(const char *mnt, const char *spec)
{
	struct fscrypt_get_key_status_arg a = { 0 };
	fsc_keyspec(spec, &a.key_spec);
	int fd = fsc_open(mnt);
	if (ioctl(fd, FS_IOC_GET_ENCRYPTION_KEY_STATUS, &a))
		die("FS_IOC_GET_ENCRYPTION_KEY_STATUS", mnt);
	printf("%s\n", a.status == FSCRYPT_KEY_STATUS_PRESENT ? "Present"
		       : a.status == FSCRYPT_KEY_STATUS_ABSENT ? "Absent"
							       : "Incompletely_removed");
	close(fd);
	return 0;
}

static int fsc_set_policy(int argc, char **argv)
{
	struct fscrypt_key_specifier ks;
	int ver = fsc_keyspec(argv[3], &ks);
	int pad = atoi(argv[6]);
	uint8_t flags = pad == 4 ? 0 : pad == 8 ? 1 : pad == 16 ? 2 : pad == 32 ? 3 : 0xff;
	if (flags == 0xff) {
		fprintf(stderr, "gh: padding %s is not 4, 8, 16 or 32\n", argv[6]);
		return 2;
	}
	for (int i = 7; i < argc; i++) {
		size_t k;
		for (k = 0; k < sizeof fsc_flags / sizeof *fsc_flags; k++)
			if (!strcmp(argv[i], fsc_flags[k].name))
				break;
		if (k == sizeof fsc_flags / sizeof *fsc_flags) {
			fprintf(stderr, "gh: unknown policy flag %s\n", argv[i]);
			return 2;
		}
		flags |= fsc_flags[k].flag;
	}
	union {
		struct fscrypt_policy_v1 v1;
		struct fscrypt_policy_v2 v2;
	} p;
	memset(&p, 0, sizeof p);
	if (ver == 1) {
		p.v1.version = FSCRYPT_POLICY_V1;
		p.v1.contents_encryption_mode = (uint8_t)fsc_mode(argv[4]);
		p.v1.filenames_encryption_mode = (uint8_t)fsc_mode(argv[5]);
		p.v1.flags = flags;
		memcpy(p.v1.master_key_descriptor, ks.u.descriptor, FSCRYPT_KEY_DESCRIPTOR_SIZE);
	} else {
		p.v2.version = FSCRYPT_POLICY_V2;
		p.v2.contents_encryption_mode = (uint8_t)fsc_mode(argv[4]);
		p.v2.filenames_encryption_mode = (uint8_t)fsc_mode(argv[5]);
		p.v2.flags = flags;
		memcpy(p.v2.master_key_identifier, ks.u.identifier, FSCRYPT_KEY_IDENTIFIER_SIZE);
	}
	int fd = fsc_open(argv[2]);
	if (ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, &p))
		die("FS_IOC_SET_ENCRYPTION_POLICY", argv[2]);
	close(fd);
	return 0;
}

static int fsc_get_policy(const char *path)
{
	struct fscrypt_get_policy_ex_arg a = { .policy_size = sizeof a.policy };
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		die("open", path);
	if (ioctl(fd, FS_IOC_GET_ENCRYPTION_POLICY_EX, &a))
		die("FS_IOC_GET_ENCRYPTION_POLICY_EX", path);
	close(fd);
	int v2 = a.policy.version == FSCRYPT_POLICY_V2;
	uint8_t cm = v2 ? a.policy.v2.contents_encryption_mode : a.policy.v1.contents_encryption_mode;
	uint8_t fm = v2 ? a.policy.v2.filenames_encryption_mode
			: a.policy.v1.filenames_encryption_mode;
	uint8_t fl = v2 ? a.policy.v2.flags : a.policy.v1.flags;
	printf("v%d %s %s pad%d ", v2 ? 2 : 1, fsc_mode_name(cm), fsc_mode_name(fm), 4 << (fl & 3));
	int any = 0;
	for (size_t k = 0; k < sizeof fsc_flags / sizeof *fsc_flags; k++)
		if (fl & fsc_flags[k].flag)
			printf("%s%s", any++ ? "+" : "", fsc_flags[k].name);
	printf("%s ", any ? "" : "-");
	if (v2)
		fsc_print_hex(a.policy.v2.master_key_identifier, FSCRYPT_KEY_IDENTIFIER_SIZE);
	else
		fsc_print_hex(a.policy.v1.master_key_descriptor, FSCRYPT_KEY_DESCRIPTOR_SIZE);
	printf("\n");
	return 0;
}

static void fsc_nokey_line(FILE *f, const char *abs, const char *rel)
{
	struct stat st;
	if (lstat(abs, &st))
		die("lstat", abs);
	const char *type = S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir"
			   : S_ISLNK(st.st_mode) ? "symlink" : "other";
	put_escaped(f, rel, strlen(rel));
	fprintf(f, "\t%s\t%04o\t%lld\t", type, (unsigned)(st.st_mode & 07777),
		(long long)st.st_size);
	if (S_ISLNK(st.st_mode)) {
		char t[8192];
		ssize_t n = readlink(abs, t, sizeof t);
		if (n < 0)
			fprintf(f, "<%s>", strerrorname_np(errno));
		else
			put_escaped(f, t, n);
	} else {
		fputc('-', f);
	}
	fprintf(f, "\t%lu\t%llu\t", (unsigned long)st.st_nlink, (unsigned long long)st.st_ino);
	if (S_ISREG(st.st_mode)) {
		int fd = open(abs, O_RDONLY | O_NOFOLLOW);
		fputs(fd >= 0 ? "ok" : strerrorname_np(errno), f);
		if (fd >= 0)
			close(fd);
	} else {
		fputc('-', f);
	}
	fputc('\n', f);
}

static int fsc_nokey_list(const char *root, const char *out)
{
	FILE *f = fopen(out, "w");
	if (!f)
		die("fopen", out);
	collect(root, ".");
	qsort(paths, npaths, sizeof *paths, cmp_names);
	fsc_nokey_line(f, root, ".");
	for (size_t k = 0; k < npaths; k++) {
		char *a;
		if (asprintf(&a, "%s/%s", root, paths[k]) < 0)
			exit(1);
		fsc_nokey_line(f, a, paths[k]);
		free(a);
	}
	return fclose(f) ? 1 : 0;
}

static int fscrypt_main(int argc, char **argv)
{
	const char *sub = argv[1];
	if (!strcmp(sub, "add_key") && (argc == 4 || argc == 5))
		return fsc_add_key(argc, argv);
	if (!strcmp(sub, "remove_key") && argc == 4)
		return fsc_remove_key(argv[2], argv[3]);
	if (!strcmp(sub, "key_status") && argc == 4)
		return fsc_key_status(argv[2], argv[3]);
	if (!strcmp(sub, "set_policy") && argc >= 7)
		return fsc_set_policy(argc, argv);
	if (!strcmp(sub, "get_policy") && argc == 3)
		return fsc_get_policy(argv[2]);
	if (!strcmp(sub, "nokey_list") && argc == 4)
		return fsc_nokey_list(argv[2], argv[3]);
	fprintf(stderr, "gh: bad fscrypt command %s\n", sub);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: see tests/compat/guest-helper.c\n");
		return 2;
	}
	const char *cmd = argv[1], *p = argv[2];
	if ((!strcmp(cmd, "gen") || !strcmp(cmd, "fsyncgen")) && argc >= 6)
		return gen(p, atoll(argv[3]), strtoull(argv[4], 0, 0), argv[5],
			   argc > 6 ? atoll(argv[6]) : 0, cmd[0] == 'f');
	if (!strcmp(cmd, "rename") && argc == 4) {
		if (rename(p, argv[3]))
			die("rename", p);
		return 0;
	}
	if (!strcmp(cmd, "fsync")) {
		int fd = open(p, O_RDONLY);
		if (fd < 0 || fsync(fd))
			die("fsync", p);
		return 0;
	}
	if (!strcmp(cmd, "mkfiles") && argc == 5)
		return mkfiles(p, atol(argv[3]), strtoull(argv[4], 0, 0));
	if (!strcmp(cmd, "setxattr") && argc == 5)
		return do_setxattr(p, argv[3], argv[4]);
	if (!strcmp(cmd, "acl") && argc == 4)
		return set_acl(p, argv[3]);
	if (!strcmp(cmd, "flags"))
		return flags(argc, argv);
	if (!strcmp(cmd, "utime") && argc == 5) {
		set_time(p, atoll(argv[3]), atol(argv[4]));
		return 0;
	}
	if (!strcmp(cmd, "settimes") && argc == 4) {
		settimes(p, ".", atoll(argv[3]));
		return 0;
	}
	if (!strcmp(cmd, "mksock")) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		snprintf(a.sun_path, sizeof a.sun_path, "%s", p);
		if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a))
			die("bind", p);
		return 0;
	}
	if ((!strcmp(cmd, "fallocate") && argc >= 5) || (!strcmp(cmd, "punch") && argc == 5)) {
		int mode = cmd[0] == 'p' ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
			   : argc > 5    ? FALLOC_FL_KEEP_SIZE
					 : 0;
		int fd = open(p, O_RDWR | O_CREAT, 0644);
		if (fd < 0 || fallocate(fd, mode, atoll(argv[3]), atoll(argv[4])))
			die(cmd, p);
		return 0;
	}
	if ((!strcmp(cmd, "collapse") || !strcmp(cmd, "insert")) && argc == 5) {
		int mode = cmd[0] == 'c' ? FALLOC_FL_COLLAPSE_RANGE : FALLOC_FL_INSERT_RANGE;
		int fd = open(p, O_RDWR);
		if (fd < 0 || fallocate(fd, mode, atoll(argv[3]), atoll(argv[4])))
			die(cmd, p);
		close(fd);
		return 0;
	}
	if (!strcmp(cmd, "setproj") && argc >= 4)
		return setproj(p, (unsigned int)atol(argv[3]), argc > 4);
	if (!strcmp(cmd, "quota-get") && argc == 4)
		return quota_get(p, argv[3]);
	if (!strcmp(cmd, "cblocks"))
		return simple_ioctl_u64(p, F2FS_IOC_GET_COMPRESS_BLOCKS, "get_compress_blocks", 0);
	if (!strcmp(cmd, "release"))
		return simple_ioctl_u64(p, F2FS_IOC_RELEASE_COMPRESS_BLOCKS, "release_compress", 1);
	if (!strcmp(cmd, "verity")) {
		struct fsverity_enable_arg a = { .version = 1,
						 .hash_algorithm = FS_VERITY_HASH_ALG_SHA256,
						 .block_size = 4096 };
		int fd = open(p, O_RDONLY);
		if (fd < 0 || ioctl(fd, FS_IOC_ENABLE_VERITY, &a))
			die("enable_verity", p);
		return 0;
	}
	if (!strcmp(cmd, "verity-enable") && (argc == 4 || argc == 5))
		return verity_enable_cmd(p, argv[3], argc == 5 ? argv[4] : NULL);
	if (!strcmp(cmd, "verity-measure"))
		return verity_measure_cmd(p);
	if (!strcmp(cmd, "verity-sign-enable") && argc == 4)
		return verity_sign_enable_cmd(p, argv[3]);
	if (!strcmp(cmd, "verity-keyring-add"))
		return verity_keyring_add_cmd(p);
	if (!strcmp(cmd, "read-errno"))
		return read_errno_cmd(p);
	if (!strcmp(cmd, "sha256")) {
		char hex[65];
		if (sha256_file(p, hex))
			die("read", p);
		printf("%s\n", hex);
		return 0;
	}
	if (!strcmp(cmd, "fscrypt"))
		return fscrypt_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "manifest") && (argc == 6 || argc == 7))
		return manifest(p, argv[3], argv[4], argv[5], argc == 7 ? argv[6] : NULL);
	fprintf(stderr, "gh: bad command %s\n", cmd);
	return 2;
}
