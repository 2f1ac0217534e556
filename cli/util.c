// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the subcommands: coreutils-style messages, the -o option
 * hook, walking paths in an image (symlinks included), the read-write mount
 * and its final checkpoint, and full writes. Kept apart from main.c so that
 * each cmd_*.c depends only on cli.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"

/* As the kernel's MAXSYMLINKS: the depth at which a chain counts as a loop. */
#define CLI_MAX_SYMLINKS	40
/* f2fs stores a symlink target in one block. */
#define CLI_SYMLINK_MAX		4096

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("uf2fs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_path_error(const char *path, int err)
{
	cli_error("%s: %s", path, strerror(err < 0 ? -err : err));
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "uf2fs %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'uf2fs %s --help' for more information.\n", cmd);
	return CLI_EXIT_USAGE;
}

int cli_common_option(const char *cmd, int opt, const char *arg, struct uf2fs_options *opts)
{
	if (opt == 'o')
		return cli_apply_lib_options(opts, arg) ? CLI_EXIT_USAGE : 0;
	/* getopt already printed what was wrong with the option. */
	fprintf(stderr, "Try 'uf2fs %s --help' for more information.\n", cmd);
	return CLI_EXIT_USAGE;
}

/*
 * The walk is ours, component by component, so that symlinks anywhere in the
 * path resolve as namei would: a relative target continues from the link's
 * directory, an absolute one from the image's root.
 */
struct cli_walk {
	struct uf2fs *fs;
	char *path;		/* what is left to walk; rewritten at each symlink */
	uint32_t dir;		/* the directory holding the next component */
	int links;
};

/* Replace walk->path with target + "/" + rest, and restart at root if absolute. */
static int cli_walk_link(struct cli_walk *w, uint32_t ino, const char *rest)
{
	char target[CLI_SYMLINK_MAX + 1];
	ssize_t len;
	char *next;

	if (++w->links > CLI_MAX_SYMLINKS)
		return -ELOOP;
	len = uf2fs_readlink(w->fs, ino, target, CLI_SYMLINK_MAX);
	if (len < 0)
		return len;
	if (len == 0)
		return -ENOENT;		/* as the kernel treats an empty target */
	target[len] = '\0';
	if (asprintf(&next, "%s/%s", target, rest) < 0)
		return -ENOMEM;
	if (target[0] == '/')
		w->dir = uf2fs_root_ino(w->fs);
	free(w->path);
	w->path = next;
	return 0;
}

/* Step over one component; *ino is where it leads. */
static int cli_walk_step(struct cli_walk *w, bool follow, uint32_t *ino)
{
	char *name = w->path + strspn(w->path, "/");
	char *end = strchrnul(name, '/');
	const char *rest = end + strspn(end, "/");
	bool last = !*rest;
	struct uf2fs_attr attr;
	int ret;

	ret = uf2fs_lookup(w->fs, w->dir, name, end - name, ino);
	if (ret < 0)
		return ret;
	ret = uf2fs_getattr(w->fs, *ino, &attr);
	if (ret < 0)
		return ret;
	if (S_ISLNK(attr.mode) && (!last || follow))
		return cli_walk_link(w, *ino, rest);
	if (!last && !S_ISDIR(attr.mode))
		return -ENOTDIR;
	w->dir = *ino;
	memmove(w->path, rest, strlen(rest) + 1);
	return 0;
}

int cli_resolve(struct uf2fs *fs, const char *path, bool follow, uint32_t *ino)
{
	struct cli_walk w = { .fs = fs, .dir = uf2fs_root_ino(fs) };
	int ret = 0;

	w.path = strdup(path);
	if (!w.path)
		return -ENOMEM;
	*ino = w.dir;
	while (ret == 0 && w.path[strspn(w.path, "/")])
		ret = cli_walk_step(&w, follow, ino);
	free(w.path);
	return ret;
}

char *cli_join(const char *dir, const char *name)
{
	size_t len = strlen(dir);
	char *out;

	if (asprintf(&out, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name) < 0)
		return NULL;
	return out;
}

int cli_resolve_parent(struct uf2fs *fs, const char *path, struct cli_parent *parent)
{
	struct uf2fs_attr attr;
	char *copy, *slash;
	size_t len;
	int ret;

	parent->name = NULL;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	slash = strrchr(copy, '/');
	parent->name = strdup(slash ? slash + 1 : copy);
	if (slash)
		slash[1] = '\0';	/* "/a" keeps "/"; "a/b" keeps "a/" */
	else
		copy[0] = '\0';
	ret = parent->name ? cli_resolve(fs, copy, true, &parent->dir) : -ENOMEM;
	if (ret == 0)
		ret = uf2fs_getattr(fs, parent->dir, &attr);
	if (ret == 0 && !S_ISDIR(attr.mode))
		ret = -ENOTDIR;
	free(copy);
	if (ret < 0)
		cli_parent_free(parent);
	return ret;
}

void cli_parent_free(struct cli_parent *parent)
{
	free(parent->name);
	parent->name = NULL;
}

int cli_mount_rw(const char *image, struct uf2fs_options *opts, struct uf2fs **fs)
{
	opts->read_only = false;
	return cli_mount_image(image, opts, fs);
}

int cli_unmount_rw(struct uf2fs *fs, const char *image, int status)
{
	int ret = uf2fs_unmount(fs);

	if (ret == 0)
		return status;
	cli_error("%s: final checkpoint failed: %s; the changes may be lost", image,
		  strerror(-ret));
	return CLI_EXIT_FAIL;
}

int cli_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}
