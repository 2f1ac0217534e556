// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs get IMAGE PATH DEST`: extract a file or a whole tree, keeping what
 * tar --xattrs would keep: modes, owners (as root), nanosecond times, symlinks,
 * hard links, xattrs, device nodes, FIFOs, sockets, and holes. It extracts all
 * it can and reports each failure, so one bad inode does not lose a whole
 * image. Failing to set an xattr only warns: as non-root, trusted.* can never
 * be set, and that should not turn every extraction into a failure.
 *
 * Nothing is written through a symlink that the extraction itself created: a
 * non-directory replaces whatever is at its destination, and a directory must
 * be a real directory. A corrupt image with two entries of the same name thus
 * cannot redirect writes outside DEST.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"

#define GET_BUF_SIZE		(1u << 20)
/* Holes are found at this granularity: f2fs's block size. */
#define GET_HOLE_BLOCK		4096u
#define GET_SYMLINK_MAX		4096
/* Refresh the progress line at most 4 times a second on a tty, once off it. */
#define GET_PROGRESS_TTY_NS	250000000LL
#define GET_PROGRESS_LOG_NS	1000000000LL
#define GET_XATTR_KINDS		16

struct get_progress {
	bool enabled;		/* stderr is a tty, or -v */
	bool tty;
	bool verbose;
	bool line_shown;	/* a \r line is on the terminal */
	uint64_t files, dirs, symlinks, hardlinks, specials, bytes;
	int64_t start_ns, last_ns;
};

/* f2fs ino -> the path it was first extracted to, for link(2). */
struct get_link_map {
	struct get_link {
		uint32_t ino;
		char *path;
	} *slots;
	size_t nr, cap;
};

/* One (namespace, errno) pair of xattr failures: warned once, then counted. */
struct get_xattr_kind {
	char ns[16];
	int err;
};

struct get_ctx {
	struct uf2fs *fs;
	char *buf;
	bool as_root;
	struct get_link_map links;
	struct get_progress progress;
	struct get_xattr_kind xattr_kinds[GET_XATTR_KINDS];
	unsigned int nr_xattr_kinds;
	uint64_t xattr_suppressed;
	int status;
};

static void cmd_get_help(void)
{
	printf("Usage: uf2fs get [-v] [-o OPTIONS] IMAGE PATH DEST\n"
	       "\n"
	       "Extract PATH from an f2fs image to DEST. A directory is extracted\n"
	       "recursively as DEST itself (created if missing, merged if it exists); a\n"
	       "file goes into DEST when DEST is an existing directory, as with cp.\n"
	       "\n"
	       "Kept: modes, nanosecond times, symlinks, hard links, xattrs, device\n"
	       "nodes, FIFOs, sockets, holes; owners when run as root. Failures are\n"
	       "reported and skipped; the exit status is 1 if anything failed.\n"
	       "\n"
	       "  -v, --progress  show progress even when stderr is not a terminal, and\n"
	       "                  a summary at the end\n"
	       "  -o OPTIONS      library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help      show this help\n");
}

static int64_t get_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double get_mib(uint64_t bytes)
{
	return bytes / (1024.0 * 1024.0);
}

static double get_rate(const struct get_progress *p, int64_t now)
{
	double secs = (now - p->start_ns) / 1e9;

	return secs > 0 ? get_mib(p->bytes) / secs : 0;
}

static void get_clear_line(struct get_progress *p)
{
	if (p->line_shown)
		fputs("\r\033[K", stderr);
	p->line_shown = false;
}

static void get_show_progress(struct get_progress *p)
{
	int64_t now = get_now_ns();
	int64_t period = p->tty ? GET_PROGRESS_TTY_NS : GET_PROGRESS_LOG_NS;
	uint64_t entries = p->files + p->dirs + p->symlinks + p->hardlinks + p->specials;

	if (!p->enabled || now - p->last_ns < period)
		return;
	p->last_ns = now;
	fprintf(stderr, "%suf2fs: %llu entries, %.1f MiB, %.1f MiB/s%s",
		p->tty ? "\r" : "", (unsigned long long)entries,
		get_mib(p->bytes), get_rate(p, now), p->tty ? "\033[K" : "\n");
	p->line_shown = p->tty;
}

static void get_show_summary(struct get_progress *p)
{
	int64_t now = get_now_ns();

	get_clear_line(p);
	if (!p->verbose)
		return;
	fprintf(stderr, "uf2fs: extracted %llu files, %llu directories, %llu symlinks, "
		"%llu hard links, %llu special files; %.1f MiB in %.2f s (%.1f MiB/s)\n",
		(unsigned long long)p->files, (unsigned long long)p->dirs,
		(unsigned long long)p->symlinks, (unsigned long long)p->hardlinks,
		(unsigned long long)p->specials, get_mib(p->bytes),
		(now - p->start_ns) / 1e9, get_rate(p, now));
}

/* Messages interleave with the \r progress line; start them on a clean line. */
static void get_fail(struct get_ctx *ctx, const char *path, int err)
{
	get_clear_line(&ctx->progress);
	cli_path_error(path, err);
	ctx->status = CLI_EXIT_FAIL;
}

/* /// Hard links /// */

static size_t get_link_slot(const struct get_link_map *map, uint32_t ino)
{
	size_t i = (ino * 2654435761u) & (map->cap - 1);

	while (map->slots[i].path && map->slots[i].ino != ino)
		i = (i + 1) & (map->cap - 1);
	return i;
}

static const char *get_link_find(const struct get_link_map *map, uint32_t ino)
{
	return map->cap ? map->slots[get_link_slot(map, ino)].path : NULL;
}

static int get_link_grow(struct get_link_map *map)
{
	struct get_link_map bigger = { .cap = map->cap ? map->cap * 2 : 256 };
	size_t i;

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (i = 0; i < map->cap; i++)
		if (map->slots[i].path)
			bigger.slots[get_link_slot(&bigger, map->slots[i].ino)] = map->slots[i];
	bigger.nr = map->nr;
	free(map->slots);
	*map = bigger;
	return 0;
}

static int get_link_add(struct get_link_map *map, uint32_t ino, const char *path)
{
	struct get_link *slot;

	if ((map->nr + 1) * 2 > map->cap && get_link_grow(map))
		return -ENOMEM;
	slot = &map->slots[get_link_slot(map, ino)];
	slot->path = strdup(path);
	if (!slot->path)
		return -ENOMEM;
	slot->ino = ino;
	map->nr++;
	return 0;
}

static void get_link_free(struct get_link_map *map)
{
	size_t i;

	for (i = 0; i < map->cap; i++)
		free(map->slots[i].path);
	free(map->slots);
}

/* /// Metadata: owner, xattrs, mode, times /// */

static void get_xattr_warn(struct get_ctx *ctx, const char *dest, const char *name, int err)
{
	struct get_xattr_kind *kind;
	size_t nslen = strcspn(name, ".");
	unsigned int i;

	if (nslen >= sizeof(kind->ns))
		nslen = sizeof(kind->ns) - 1;
	for (i = 0; i < ctx->nr_xattr_kinds; i++) {
		kind = &ctx->xattr_kinds[i];
		if (kind->err != err || strlen(kind->ns) != nslen ||
		    strncmp(kind->ns, name, nslen))
			continue;
		ctx->xattr_suppressed++;
		return;
	}
	if (ctx->nr_xattr_kinds < GET_XATTR_KINDS) {
		kind = &ctx->xattr_kinds[ctx->nr_xattr_kinds++];
		memcpy(kind->ns, name, nslen);
		kind->ns[nslen] = '\0';
		kind->err = err;
	}
	get_clear_line(&ctx->progress);
	fprintf(stderr, "uf2fs: warning: %s: cannot set xattr %s: %s%s\n", dest, name,
		strerror(err), " (similar warnings are counted, not repeated)");
}

static int get_read_xattr(struct get_ctx *ctx, uint32_t ino, const char *name, char **value)
{
	ssize_t len;

	len = uf2fs_getxattr(ctx->fs, ino, name, NULL, 0);
	if (len < 0)
		return len;
	*value = malloc(len ? len : 1);
	if (!*value)
		return -ENOMEM;
	len = uf2fs_getxattr(ctx->fs, ino, name, *value, len);
	if (len < 0)
		free(*value);
	return len;
}

static void get_copy_xattr(struct get_ctx *ctx, uint32_t ino, const char *name,
			   const char *src, const char *dest)
{
	char *value = NULL;
	ssize_t len;

	len = get_read_xattr(ctx, ino, name, &value);
	if (len < 0) {
		get_clear_line(&ctx->progress);
		cli_error("%s: cannot read xattr %s: %s", src, name, strerror(-len));
		ctx->status = CLI_EXIT_FAIL;
		return;
	}
	if (lsetxattr(dest, name, value, len, 0) < 0)
		get_xattr_warn(ctx, dest, name, errno);
	free(value);
}

static void get_copy_xattrs(struct get_ctx *ctx, uint32_t ino, const char *src,
			    const char *dest)
{
	char *list, *name;
	ssize_t len;

	len = uf2fs_listxattr(ctx->fs, ino, NULL, 0);
	if (len <= 0) {
		if (len < 0)
			get_fail(ctx, src, len);
		return;
	}
	list = malloc(len);
	if (!list) {
		get_fail(ctx, src, -ENOMEM);
		return;
	}
	len = uf2fs_listxattr(ctx->fs, ino, list, len);
	if (len < 0)
		get_fail(ctx, src, len);
	for (name = list; len > 0 && name < list + len; name += strlen(name) + 1)
		get_copy_xattr(ctx, ino, name, src, dest);
	free(list);
}

/*
 * Order matters: chown clears setuid bits and security.capability, so it goes
 * first; xattrs go before chmod so that a non-root user can still set user.*
 * on what becomes a read-only file; times go last since each step bumps ctime
 * and some bump mtime.
 */
static void get_set_metadata(struct get_ctx *ctx, const struct uf2fs_attr *attr,
			     const char *src, const char *dest)
{
	struct timespec times[2] = { attr->atime, attr->mtime };
	bool is_link = S_ISLNK(attr->mode);

	if (ctx->as_root && lchown(dest, attr->uid, attr->gid) < 0)
		get_fail(ctx, dest, -errno);
	get_copy_xattrs(ctx, attr->ino, src, dest);
	if (!is_link && chmod(dest, attr->mode & 07777) < 0)
		get_fail(ctx, dest, -errno);
	if (utimensat(AT_FDCWD, dest, times, AT_SYMLINK_NOFOLLOW) < 0)
		get_fail(ctx, dest, -errno);
}

/* /// Files /// */

static bool get_is_zero(const char *p, size_t len)
{
	static const char zero[GET_HOLE_BLOCK];

	return !memcmp(p, zero, len);
}

static int get_pwrite_all(int fd, const char *p, size_t len, off_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

/* Write the non-zero blocks of buf; all-zero ones stay holes. */
static int get_write_sparse(int fd, const char *buf, size_t len, off_t off)
{
	size_t pos = 0, run;
	int ret;

	while (pos < len) {
		size_t blk = len - pos < GET_HOLE_BLOCK ? len - pos : GET_HOLE_BLOCK;

		if (get_is_zero(buf + pos, blk)) {
			pos += blk;
			continue;
		}
		for (run = blk; pos + run < len; run += blk) {
			blk = len - pos - run < GET_HOLE_BLOCK ? len - pos - run : GET_HOLE_BLOCK;
			if (get_is_zero(buf + pos + run, blk))
				break;
		}
		ret = get_pwrite_all(fd, buf + pos, run, off + pos);
		if (ret < 0)
			return ret;
		pos += run;
	}
	return 0;
}

/* Returns 0, or a negative errno and *on_dest telling which side failed. */
static int get_copy_data(struct get_ctx *ctx, uint32_t ino, int fd, bool *on_dest)
{
	uint64_t off = 0;
	ssize_t n;
	int ret;

	for (;;) {
		n = uf2fs_read(ctx->fs, ino, ctx->buf, GET_BUF_SIZE, off);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		ret = get_write_sparse(fd, ctx->buf, n, off);
		if (ret < 0) {
			*on_dest = true;
			return ret;
		}
		off += n;
		ctx->progress.bytes += n;
		get_show_progress(&ctx->progress);
	}
	/* Extends over trailing holes, which were never written. */
	*on_dest = true;
	return ftruncate(fd, off) < 0 ? -errno : 0;
}

/* Make room for a non-directory: never write through what is already there. */
static int get_replace(const char *dest)
{
	if (unlink(dest) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int get_file(struct get_ctx *ctx, const struct uf2fs_attr *attr, const char *src,
		    const char *dest)
{
	bool on_dest = false;
	int fd, ret;

	ret = get_replace(dest);
	if (ret < 0)
		goto fail_dest;
	fd = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		goto fail_dest;
	}
	ret = get_copy_data(ctx, attr->ino, fd, &on_dest);
	if (close(fd) < 0 && ret == 0) {
		ret = -errno;
		on_dest = true;
	}
	if (ret < 0) {
		get_fail(ctx, on_dest ? dest : src, ret);
		return ret;
	}
	return 0;
fail_dest:
	get_fail(ctx, dest, ret);
	return ret;
}

static int get_symlink(struct get_ctx *ctx, const struct uf2fs_attr *attr, const char *src,
		       const char *dest)
{
	char target[GET_SYMLINK_MAX + 1];
	ssize_t len;
	int ret;

	len = uf2fs_readlink(ctx->fs, attr->ino, target, GET_SYMLINK_MAX);
	if (len < 0) {
		get_fail(ctx, src, len);
		return len;
	}
	target[len] = '\0';
	ret = get_replace(dest);
	if (ret == 0 && symlink(target, dest) < 0)
		ret = -errno;
	if (ret < 0)
		get_fail(ctx, dest, ret);
	return ret;
}

static int get_special(struct get_ctx *ctx, const struct uf2fs_attr *attr, const char *dest)
{
	int ret;

	ret = get_replace(dest);
	if (ret == 0 && mknod(dest, (attr->mode & S_IFMT) | 0600, attr->rdev) < 0)
		ret = -errno;
	if (ret < 0)
		get_fail(ctx, dest, ret);
	return ret;
}

/* A second name of an inode already extracted becomes a hard link to it. */
static int get_hardlink(struct get_ctx *ctx, const char *first, const char *dest)
{
	int ret;

	ret = get_replace(dest);
	if (ret == 0 && link(first, dest) < 0)
		ret = -errno;
	if (ret < 0)
		get_fail(ctx, dest, ret);
	else
		ctx->progress.hardlinks++;
	return ret;
}

/* /// Directories /// */

struct get_dirent {
	char *name;
	uint32_t ino;
};

struct get_dirents {
	struct get_dirent *v;
	size_t n, cap;
	int err;
};

static int get_fill(void *arg, const char *name, size_t len, uint32_t ino, unsigned int dtype,
		    uint64_t next_pos)
{
	struct get_dirents *d = arg;

	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return 0;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 32;
		struct get_dirent *v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			goto nomem;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n].name = strndup(name, len);
	if (!d->v[d->n].name)
		goto nomem;
	d->v[d->n++].ino = ino;
	return 0;
nomem:
	d->err = -ENOMEM;
	return 1;
}

static void get_free_dirents(struct get_dirents *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->v[i].name);
	free(d->v);
}

static int get_node(struct get_ctx *ctx, uint32_t ino, const char *src, const char *dest);

static char *get_join(const char *dir, const char *name)
{
	size_t len = strlen(dir);
	char *out;

	if (asprintf(&out, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name) < 0)
		return NULL;
	return out;
}

static void get_children(struct get_ctx *ctx, uint32_t ino, const char *src, const char *dest)
{
	struct get_dirents d = { 0 };
	char *csrc, *cdest;
	size_t i;
	int ret;

	/* Names first, then descend: no library walk stays open across a subtree. */
	ret = uf2fs_readdir(ctx->fs, ino, 0, get_fill, &d);
	if (ret == 0)
		ret = d.err;
	if (ret < 0)
		get_fail(ctx, src, ret);
	for (i = 0; i < d.n; i++) {
		csrc = get_join(src, d.v[i].name);
		cdest = get_join(dest, d.v[i].name);
		if (csrc && cdest)
			get_node(ctx, d.v[i].ino, csrc, cdest);
		else
			get_fail(ctx, src, -ENOMEM);
		free(csrc);
		free(cdest);
	}
	get_free_dirents(&d);
}

/* mkdir, or reuse an existing real directory (never a symlink to one). */
static int get_mkdir(const char *dest, bool follow)
{
	struct stat st;
	int ret;

	if (mkdir(dest, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	ret = follow ? stat(dest, &st) : lstat(dest, &st);
	if (ret < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* The directory's own mode and times go on after its contents. */
static int get_dir(struct get_ctx *ctx, const struct uf2fs_attr *attr, const char *src,
		   const char *dest, bool top)
{
	int ret;

	ret = get_mkdir(dest, top);
	if (ret < 0) {
		get_fail(ctx, dest, ret);
		return ret;
	}
	ctx->progress.dirs++;
	get_children(ctx, attr->ino, src, dest);
	return 0;
}

/* Returns 1 when dest became a hard link, whose inode already has its metadata. */
static int get_nondir(struct get_ctx *ctx, const struct uf2fs_attr *attr, const char *src,
		      const char *dest)
{
	const char *first = NULL;
	int ret;

	if (attr->nlink > 1)
		first = get_link_find(&ctx->links, attr->ino);
	if (first)
		return get_hardlink(ctx, first, dest) ?: 1;
	if (S_ISREG(attr->mode)) {
		ret = get_file(ctx, attr, src, dest);
		ctx->progress.files++;
	} else if (S_ISLNK(attr->mode)) {
		ret = get_symlink(ctx, attr, src, dest);
		ctx->progress.symlinks++;
	} else {
		ret = get_special(ctx, attr, dest);
		ctx->progress.specials++;
	}
	if (ret == 0 && attr->nlink > 1 && get_link_add(&ctx->links, attr->ino, dest) < 0)
		get_fail(ctx, dest, -ENOMEM);
	return ret;
}

static int get_node_at(struct get_ctx *ctx, uint32_t ino, const char *src, const char *dest,
		       bool top)
{
	struct uf2fs_attr attr;
	int ret;

	ret = uf2fs_getattr(ctx->fs, ino, &attr);
	if (ret < 0) {
		get_fail(ctx, src, ret);
		return ret;
	}
	if (S_ISDIR(attr.mode))
		ret = get_dir(ctx, &attr, src, dest, top);
	else
		ret = get_nondir(ctx, &attr, src, dest);
	if (ret == 0)
		get_set_metadata(ctx, &attr, src, dest);
	get_show_progress(&ctx->progress);
	return ret;
}

static int get_node(struct get_ctx *ctx, uint32_t ino, const char *src, const char *dest)
{
	return get_node_at(ctx, ino, src, dest, false);
}

/* /// Command /// */

/* cp semantics: a non-directory PATH into an existing directory DEST. */
static char *get_dest_path(struct get_ctx *ctx, uint32_t ino, const char *path,
			   const char *dest)
{
	struct uf2fs_attr attr;
	const char *base;
	struct stat st;
	size_t len;
	char *out;

	if (uf2fs_getattr(ctx->fs, ino, &attr) < 0 || S_ISDIR(attr.mode) ||
	    stat(dest, &st) < 0 || !S_ISDIR(st.st_mode))
		return strdup(dest);
	len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	base = memrchr(path, '/', len);
	base = base ? base + 1 : path;
	if (asprintf(&out, "%s/%.*s", dest, (int)(path + len - base), base) < 0)
		return NULL;
	return out;
}

static int get_run(struct get_ctx *ctx, const char *path, const char *dest)
{
	char *target;
	uint32_t ino;
	int ret;

	ret = cli_resolve(ctx->fs, path, false, &ino);
	if (ret < 0) {
		cli_path_error(path, ret);
		return CLI_EXIT_FAIL;
	}
	target = get_dest_path(ctx, ino, path, dest);
	if (!target) {
		cli_path_error(dest, -ENOMEM);
		return CLI_EXIT_FAIL;
	}
	/* The first line after one period: a quick extraction shows none. */
	ctx->progress.start_ns = get_now_ns();
	ctx->progress.last_ns = ctx->progress.start_ns;
	get_node_at(ctx, ino, path, target, true);
	free(target);
	if (ctx->xattr_suppressed) {
		get_clear_line(&ctx->progress);
		cli_error("warning: %llu more xattrs could not be set",
			  (unsigned long long)ctx->xattr_suppressed);
	}
	get_show_summary(&ctx->progress);
	return ctx->status;
}

int cmd_get(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "progress", no_argument, NULL, 'v' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct get_ctx ctx = { .status = CLI_EXIT_OK };
	struct uf2fs_options opts;
	int c, ret;

	uf2fs_default_options(&opts);
	while ((c = getopt_long(argc, argv, "hvo:", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_get_help();
			return CLI_EXIT_OK;
		}
		if (c == 'v') {
			ctx.progress.verbose = true;
			continue;
		}
		ret = cli_common_option("get", c, optarg, &opts);
		if (ret)
			return ret;
	}
	if (argc - optind < 3)
		return cli_usage_error("get", "missing operand (IMAGE PATH DEST)");
	if (argc - optind > 3)
		return cli_usage_error("get", "too many arguments");
	ctx.progress.tty = isatty(STDERR_FILENO);
	ctx.progress.enabled = ctx.progress.tty || ctx.progress.verbose;
	ctx.as_root = geteuid() == 0;
	ctx.buf = malloc(GET_BUF_SIZE);
	if (!ctx.buf) {
		cli_error("%s", strerror(ENOMEM));
		return CLI_EXIT_FAIL;
	}
	if (cli_mount_image(argv[optind], &opts, &ctx.fs)) {
		free(ctx.buf);
		return CLI_EXIT_FAIL;
	}
	ret = get_run(&ctx, argv[optind + 1], argv[optind + 2]);
	uf2fs_unmount(ctx.fs);
	get_link_free(&ctx.links);
	free(ctx.buf);
	return ret;
}
