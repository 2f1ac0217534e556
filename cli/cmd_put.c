// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs put IMAGE SRC... DEST`: copy host files or trees into an image, as
 * `cp -a` would: regular files (holes stay holes), directories, symlinks
 * (copied, never followed), hard links (once per inode, then linked), FIFOs,
 * sockets and, as root, device nodes; modes, nanosecond atimes and mtimes,
 * xattrs, and, as root, owners. Like cp, DEST is a directory to copy into
 * when it exists as one, else the new name; several SRCs need a directory.
 * "SRC/." copies the contents of SRC into DEST itself.
 *
 * An existing non-directory at a destination is replaced (unlinked first,
 * as cp --remove-destination does, so other hard links to it keep their
 * data); an existing directory is merged into. It copies all it can and
 * reports each failure; a failure to set an xattr (a namespace the image
 * does not take) only warns, as with cp -a. The image is checkpointed at the
 * end; the exit status is 1 if anything failed.
 *
 * Everything below the destination is addressed by the inode numbers put
 * itself created, never by re-resolving paths in the image.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"

#define PUT_BUF_SIZE		(1u << 20)
#define PUT_SYMLINK_MAX		4096

/* Host (dev, ino) of a multiply linked file -> the image inode made for it. */
struct put_link_map {
	struct put_link {
		dev_t dev;
		ino_t ino;
		uint32_t f2fs_ino;	/* 0: empty slot */
	} *slots;
	size_t nr, cap;
};

struct put_ctx {
	struct uf2fs *fs;
	char *buf;
	bool as_root;
	bool verbose;
	struct put_link_map links;
	uint64_t xattr_warnings;
	int status;
};

static void cmd_put_help(void)
{
	printf("Usage: uf2fs put [-v] [-o OPTIONS] IMAGE SRC... DEST\n"
	       "\n"
	       "Copy host files or directory trees into an f2fs image, like cp -a: modes,\n"
	       "times, symlinks, hard links, xattrs, holes, FIFOs and sockets; owners and\n"
	       "device nodes when run as root. DEST is a directory to copy into if it\n"
	       "exists as one, else the new name. Existing files are replaced, existing\n"
	       "directories merged.\n"
	       "\n"
	       "  -v, --verbose   print each file as it is copied\n"
	       "  -o OPTIONS      library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help      show this help\n");
}

static void put_fail(struct put_ctx *ctx, const char *what, const char *path, int err)
{
	cli_error("%s '%s': %s", what, path, strerror(err < 0 ? -err : err));
	ctx->status = CLI_EXIT_FAIL;
}

/* /// Hard links /// */

static size_t put_link_slot(const struct put_link_map *map, dev_t dev, ino_t ino)
{
	size_t i = ((uint64_t)ino * 0x9e3779b97f4a7c15ull ^ dev) & (map->cap - 1);

	while (map->slots[i].f2fs_ino &&
	       (map->slots[i].ino != ino || map->slots[i].dev != dev))
		i = (i + 1) & (map->cap - 1);
	return i;
}

static uint32_t put_link_find(const struct put_link_map *map, const struct stat *st)
{
	return map->cap ? map->slots[put_link_slot(map, st->st_dev, st->st_ino)].f2fs_ino : 0;
}

static int put_link_add(struct put_link_map *map, const struct stat *st, uint32_t f2fs_ino)
{
	struct put_link_map bigger;
	struct put_link *slot;
	size_t i;

	if ((map->nr + 1) * 2 > map->cap) {
		bigger.cap = map->cap ? map->cap * 2 : 256;
		bigger.nr = map->nr;
		bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
		if (!bigger.slots)
			return -ENOMEM;
		for (i = 0; i < map->cap; i++) {
			slot = &map->slots[i];
			if (slot->f2fs_ino)
				bigger.slots[put_link_slot(&bigger, slot->dev, slot->ino)] = *slot;
		}
		free(map->slots);
		*map = bigger;
	}
	slot = &map->slots[put_link_slot(map, st->st_dev, st->st_ino)];
	slot->dev = st->st_dev;
	slot->ino = st->st_ino;
	slot->f2fs_ino = f2fs_ino;
	map->nr++;
	return 0;
}

/* /// Metadata: xattrs, then mode, owner and times in one setattr /// */

/* Warned, not failed: cp -a does not fail on an xattr the target refuses. */
static void put_copy_xattr(struct put_ctx *ctx, const char *src, uint32_t ino,
			   const char *name, const char *dest)
{
	ssize_t len;
	char *value;
	int ret;

	len = lgetxattr(src, name, NULL, 0);
	value = len >= 0 ? malloc(len ? len : 1) : NULL;
	if (value)
		len = lgetxattr(src, name, value, len);
	if (len < 0 || !value) {
		put_fail(ctx, "cannot read xattrs of", src, len < 0 ? -errno : -ENOMEM);
		free(value);
		return;
	}
	ret = uf2fs_setxattr(ctx->fs, ino, name, value, len, 0);
	if (ret < 0 && ctx->xattr_warnings++ < 10)
		cli_error("warning: '%s': cannot set xattr %s: %s", dest, name, strerror(-ret));
	free(value);
}

static void put_copy_xattrs(struct put_ctx *ctx, const char *src, uint32_t ino,
			    const char *dest)
{
	ssize_t len = llistxattr(src, NULL, 0);
	char *list, *name;

	if (len <= 0) {
		/* A host filesystem without xattrs has nothing to copy. */
		if (len < 0 && errno != ENOTSUP)
			put_fail(ctx, "cannot list xattrs of", src, -errno);
		return;
	}
	list = malloc(len);
	if (!list) {
		put_fail(ctx, "cannot list xattrs of", src, -ENOMEM);
		return;
	}
	len = llistxattr(src, list, len);
	if (len < 0)
		put_fail(ctx, "cannot list xattrs of", src, -errno);
	for (name = list; len > 0 && name < list + len; name += strlen(name) + 1)
		put_copy_xattr(ctx, src, ino, name, dest);
	free(list);
}

/*
 * One setattr after the content: the mode exactly (the library may have
 * added a setgid bit from the parent), the owner as root (the same reason),
 * and the times last, since writing the content and children moved them.
 */
static void put_set_metadata(struct put_ctx *ctx, const char *src, const struct stat *st,
			     uint32_t ino, const char *dest)
{
	struct uf2fs_attr attr = {
		.mode = st->st_mode,
		.uid = st->st_uid,
		.gid = st->st_gid,
		.atime = st->st_atim,
		.mtime = st->st_mtim,
	}, out;
	unsigned int valid = UF2FS_SET_ATIME | UF2FS_SET_MTIME;
	int ret;

	put_copy_xattrs(ctx, src, ino, dest);
	if (!S_ISLNK(st->st_mode))
		valid |= UF2FS_SET_MODE;
	if (ctx->as_root)
		valid |= UF2FS_SET_UID | UF2FS_SET_GID;
	ret = uf2fs_setattr(ctx->fs, ino, &attr, valid, &out);
	if (ret < 0)
		put_fail(ctx, "cannot set attributes of", dest, ret);
}

/* /// Regular files /// */

static int put_data_run(struct put_ctx *ctx, int fd, uint32_t ino, off_t off, off_t end,
			bool *on_src)
{
	ssize_t n, w;

	while (off < end) {
		n = pread(fd, ctx->buf, end - off < PUT_BUF_SIZE ? end - off : PUT_BUF_SIZE, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*on_src = true;
			return n < 0 ? -errno : 0;	/* the file shrank: keep what there is */
		}
		w = uf2fs_write(ctx->fs, ino, ctx->buf, n, off);
		if (w < 0)
			return w;
		off += w;
	}
	return 0;
}

/*
 * Only the host file's data runs are written (SEEK_DATA/SEEK_HOLE, or the
 * whole file where the host cannot tell); the size is set at the end, so
 * holes, trailing ones included, stay unallocated in the image.
 */
static int put_file_data(struct put_ctx *ctx, int fd, const struct stat *st, uint32_t ino,
			 bool *on_src)
{
	struct uf2fs_attr attr = { .size = st->st_size }, out;
	off_t data = 0, hole;
	int ret;

	while (data < st->st_size) {
		data = lseek(fd, data, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		hole = data < 0 ? st->st_size : lseek(fd, data, SEEK_HOLE);
		if (data < 0 || hole < 0) {
			/* No SEEK_DATA on this filesystem: copy it all. */
			data = 0;
			hole = st->st_size;
		}
		ret = put_data_run(ctx, fd, ino, data, hole, on_src);
		if (ret < 0)
			return ret;
		data = hole;
	}
	return uf2fs_setattr(ctx->fs, ino, &attr, UF2FS_SET_SIZE, &out);
}

static int put_file(struct put_ctx *ctx, const char *src, const struct stat *st,
		    uint32_t ino, const char *dest)
{
	bool on_src = false;
	int fd, ret;

	fd = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		put_fail(ctx, "cannot open", src, -errno);
		return -1;
	}
	ret = put_file_data(ctx, fd, st, ino, &on_src);
	close(fd);
	if (ret < 0)
		put_fail(ctx, on_src ? "error reading" : "error writing", on_src ? src : dest,
			 ret);
	return ret;
}

/* /// Creating one entry /// */

struct put_target {
	uint32_t dir;
	const char *name;
	const char *path;	/* DEST path for messages */
};

/*
 * Clear the way for a new entry: a non-directory replaces whatever
 * non-directory is there; a directory merges into a directory (*existing).
 */
static int put_prepare(struct put_ctx *ctx, const struct put_target *t, const char *src,
		       const struct stat *st, uint32_t *existing)
{
	size_t len = strlen(t->name);
	struct uf2fs_attr attr;
	uint32_t ino;
	int ret;

	*existing = 0;
	ret = uf2fs_lookup(ctx->fs, t->dir, t->name, len, &ino);
	if (ret == -ENOENT)
		return 0;
	if (ret == 0)
		ret = uf2fs_getattr(ctx->fs, ino, &attr);
	if (ret < 0) {
		put_fail(ctx, "cannot stat", t->path, ret);
		return ret;
	}
	if (S_ISDIR(st->st_mode) && S_ISDIR(attr.mode)) {
		*existing = ino;
		return 0;
	}
	if (S_ISDIR(st->st_mode) || S_ISDIR(attr.mode)) {
		cli_error(S_ISDIR(attr.mode) ?
			  "cannot overwrite directory '%s' with non-directory '%s'" :
			  "cannot overwrite non-directory '%s' with directory '%s'", t->path, src);
		ctx->status = CLI_EXIT_FAIL;
		return -EEXIST;
	}
	ret = uf2fs_unlink(ctx->fs, t->dir, t->name, len);
	if (ret < 0)
		put_fail(ctx, "cannot remove", t->path, ret);
	return ret;
}

static int put_symlink(struct put_ctx *ctx, const char *src, const struct put_target *t,
		       uint32_t uid, uint32_t gid, uint32_t *ino)
{
	char target[PUT_SYMLINK_MAX + 1];
	ssize_t len;
	int ret;

	len = readlink(src, target, PUT_SYMLINK_MAX);
	if (len < 0) {
		ret = -errno;
		put_fail(ctx, "cannot read symbolic link", src, ret);
		return ret;
	}
	target[len] = '\0';
	ret = uf2fs_symlink(ctx->fs, t->dir, t->name, strlen(t->name), target, uid, gid, ino);
	if (ret < 0)
		put_fail(ctx, "cannot create symbolic link", t->path, ret);
	return ret;
}

/*
 * Make the inode for a non-directory, or say why not; its content and
 * metadata come after.
 */
static int put_make(struct put_ctx *ctx, const char *src, const struct stat *st,
		    const struct put_target *t, uint32_t *ino)
{
	uint32_t uid = ctx->as_root ? st->st_uid : geteuid();
	uint32_t gid = ctx->as_root ? st->st_gid : getegid();
	size_t len = strlen(t->name);
	int ret;

	if (S_ISLNK(st->st_mode))
		return put_symlink(ctx, src, t, uid, gid, ino);
	/* As mknod(2) for anyone but root; the image cannot check it. */
	if ((S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) && !ctx->as_root)
		ret = -EPERM;
	else
		ret = uf2fs_mknod(ctx->fs, t->dir, t->name, len, st->st_mode, uid, gid,
				  S_ISREG(st->st_mode) ? 0 : st->st_rdev, ino);
	if (ret < 0)
		put_fail(ctx, S_ISREG(st->st_mode) ? "cannot create regular file" :
			 "cannot create special file", t->path, ret);
	return ret;
}

static void put_verbose(const struct put_ctx *ctx, const char *src, const char *dest)
{
	if (ctx->verbose)
		printf("'%s' -> '%s'\n", src, dest);
}

/* A second name for an inode already copied: one more link, no more data. */
static int put_hardlink(struct put_ctx *ctx, uint32_t ino, const struct put_target *t)
{
	int ret = uf2fs_link(ctx->fs, ino, t->dir, t->name, strlen(t->name));

	if (ret < 0)
		put_fail(ctx, "cannot create hard link", t->path, ret);
	return ret;
}

static int put_nondir(struct put_ctx *ctx, const char *src, const struct stat *st,
		      const struct put_target *t)
{
	uint32_t ino = 0;
	int ret;

	if (st->st_nlink > 1 && !S_ISDIR(st->st_mode)) {
		ino = put_link_find(&ctx->links, st);
		if (ino)
			return put_hardlink(ctx, ino, t);
	}
	ret = put_make(ctx, src, st, t, &ino);
	if (ret < 0)
		return ret;
	if (S_ISREG(st->st_mode) && put_file(ctx, src, st, ino, t->path) < 0)
		return -1;
	put_set_metadata(ctx, src, st, ino, t->path);
	if (st->st_nlink > 1 && put_link_add(&ctx->links, st, ino) < 0)
		put_fail(ctx, "cannot remember hard link", src, -ENOMEM);
	return 0;
}

/* /// Directories /// */

static int put_entry(struct put_ctx *ctx, const char *src, const struct put_target *t);

static int put_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in a host directory, sorted so that images come out reproducible. */
static char **put_read_dir(struct put_ctx *ctx, const char *src, size_t *nr)
{
	struct dirent *de;
	char **names = NULL, **more;
	size_t cap = 0;
	DIR *dir;

	*nr = 0;
	dir = opendir(src);
	if (!dir) {
		put_fail(ctx, "cannot open directory", src, -errno);
		return NULL;
	}
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*nr == cap) {
			cap = cap ? cap * 2 : 64;
			more = realloc(names, cap * sizeof(*names));
			if (!more)
				break;
			names = more;
		}
		names[*nr] = strdup(de->d_name);
		if (!names[*nr])
			break;
		(*nr)++;
	}
	if (de)
		put_fail(ctx, "cannot read directory", src, -ENOMEM);
	closedir(dir);
	if (*nr)
		qsort(names, *nr, sizeof(*names), put_name_cmp);
	return names;
}

static void put_children(struct put_ctx *ctx, const char *src, uint32_t dir, const char *dest)
{
	struct put_target child = { .dir = dir };
	char **names, *csrc;
	size_t i, nr;

	names = put_read_dir(ctx, src, &nr);
	for (i = 0; i < nr; i++) {
		csrc = cli_join(src, names[i]);
		child.name = names[i];
		child.path = cli_join(dest, names[i]);
		if (csrc && child.path)
			put_entry(ctx, csrc, &child);
		else
			put_fail(ctx, "cannot copy", src, -ENOMEM);
		free(csrc);
		free((char *)child.path);
		free(names[i]);
	}
	free(names);
}

/* The directory's contents, then its own metadata, which they would change. */
static int put_dir(struct put_ctx *ctx, const char *src, const struct stat *st,
		   const struct put_target *t, uint32_t existing)
{
	uint32_t ino = existing;
	int ret = 0;

	if (!ino)
		ret = uf2fs_mkdir(ctx->fs, t->dir, t->name, strlen(t->name), st->st_mode & 07777,
				  ctx->as_root ? st->st_uid : geteuid(),
				  ctx->as_root ? st->st_gid : getegid(), &ino);
	if (ret < 0) {
		put_fail(ctx, "cannot create directory", t->path, ret);
		return ret;
	}
	put_children(ctx, src, ino, t->path);
	put_set_metadata(ctx, src, st, ino, t->path);
	return 0;
}

static int put_entry(struct put_ctx *ctx, const char *src, const struct put_target *t)
{
	uint32_t existing;
	struct stat st;
	int ret;

	if (lstat(src, &st) < 0) {
		put_fail(ctx, "cannot stat", src, -errno);
		return -1;
	}
	ret = put_prepare(ctx, t, src, &st, &existing);
	if (ret < 0)
		return ret;
	put_verbose(ctx, src, t->path);
	if (S_ISDIR(st.st_mode))
		return put_dir(ctx, src, &st, t, existing);
	return put_nondir(ctx, src, &st, t);
}

/* /// Command /// */

/* The last component of a host path, ignoring trailing slashes ("" for "/"). */
static char *put_basename(const char *path)
{
	size_t len = strlen(path);
	const char *base;

	while (len > 1 && path[len - 1] == '/')
		len--;
	base = memrchr(path, '/', len);
	base = base ? base + 1 : path;
	return strndup(base, path + len - base);
}

/*
 * SRC whose last component is ".", ".." or the root copies its contents into
 * the directory dir itself (cp -a SRC/. DEST).
 */
static void put_contents(struct put_ctx *ctx, const char *src, uint32_t dir,
			 const char *dest)
{
	struct stat st;

	if (stat(src, &st) < 0) {
		put_fail(ctx, "cannot stat", src, -errno);
		return;
	}
	put_verbose(ctx, src, dest);
	put_children(ctx, src, dir, dest);
	put_set_metadata(ctx, src, &st, dir, dest);
}

/* One SRC into the existing image directory dir (named dest). */
static void put_into(struct put_ctx *ctx, const char *src, uint32_t dir, const char *dest)
{
	struct put_target t = { .dir = dir };
	char *base = put_basename(src), *path;

	if (!base) {
		put_fail(ctx, "cannot copy", src, -ENOMEM);
		return;
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		put_contents(ctx, src, dir, dest);
		free(base);
		return;
	}
	path = cli_join(dest, base);
	t.name = base;
	t.path = path;
	if (path)
		put_entry(ctx, src, &t);
	else
		put_fail(ctx, "cannot copy", src, -ENOMEM);
	free(path);
	free(base);
}

/* One SRC as the new name DEST (whose parent exists). */
static void put_as(struct put_ctx *ctx, const char *src, const char *dest)
{
	struct cli_parent parent;
	struct put_target t;
	int ret;

	ret = cli_resolve_parent(ctx->fs, dest, &parent);
	if (ret < 0) {
		put_fail(ctx, "cannot create", dest, ret);
		return;
	}
	t.dir = parent.dir;
	t.name = parent.name;
	t.path = dest;
	put_entry(ctx, src, &t);
	cli_parent_free(&parent);
}

static void put_run(struct put_ctx *ctx, char **srcs, int nr, const char *dest)
{
	struct uf2fs_attr attr;
	bool is_dir;
	uint32_t ino;
	int i;

	is_dir = cli_resolve(ctx->fs, dest, true, &ino) == 0 &&
		 uf2fs_getattr(ctx->fs, ino, &attr) == 0 && S_ISDIR(attr.mode);
	if (!is_dir && nr > 1) {
		cli_error("target '%s' is not a directory", dest);
		ctx->status = CLI_EXIT_FAIL;
		return;
	}
	for (i = 0; i < nr; i++) {
		if (is_dir)
			put_into(ctx, srcs[i], ino, dest);
		else
			put_as(ctx, srcs[i], dest);
	}
	if (ctx->xattr_warnings > 10)
		cli_error("warning: %llu more xattrs could not be set",
			  (unsigned long long)ctx->xattr_warnings - 10);
}

int cmd_put(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct put_ctx ctx = { .status = CLI_EXIT_OK };
	struct uf2fs_options opts;
	int c, ret;

	uf2fs_default_options(&opts);
	while ((c = getopt_long(argc, argv, "hvo:", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_put_help();
			return CLI_EXIT_OK;
		}
		if (c == 'v') {
			ctx.verbose = true;
			continue;
		}
		ret = cli_common_option("put", c, optarg, &opts);
		if (ret)
			return ret;
	}
	if (argc - optind < 3)
		return cli_usage_error("put", "missing operand (IMAGE SRC... DEST)");
	ctx.as_root = geteuid() == 0;
	ctx.buf = malloc(PUT_BUF_SIZE);
	if (!ctx.buf) {
		cli_error("%s", strerror(ENOMEM));
		return CLI_EXIT_FAIL;
	}
	if (cli_mount_rw(argv[optind], &opts, &ctx.fs)) {
		free(ctx.buf);
		return CLI_EXIT_FAIL;
	}
	put_run(&ctx, argv + optind + 1, argc - optind - 2, argv[argc - 1]);
	ret = cli_unmount_rw(ctx.fs, argv[optind], ctx.status);
	free(ctx.links.slots);
	free(ctx.buf);
	return ret;
}
