// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs ls [-l] [-a] [-R] [-i] [-d] IMAGE [PATH...]`: list directories in an
 * image as ls(1) would. Names sort bytewise (as with LC_ALL=C) so that output
 * is the same on every machine; owners are numeric because an image's uids
 * (Android's, a build machine's) mean nothing in this host's passwd; times are
 * long-iso in local time.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "cli.h"
#include "opts.h"

#define LS_SYMLINK_MAX	4096

struct ls_flags {
	bool long_format;
	bool all;
	bool recursive;
	bool inode;
	bool directory;
};

struct ls_entry {
	char *name;
	uint32_t ino;
	unsigned int dtype;
	struct uf2fs_attr attr;
	bool have_attr;
};

struct ls_list {
	struct ls_entry *v;
	size_t n, cap;
	bool all;
	int err;
};

/* Column widths of one long listing, as ls aligns them. */
struct ls_widths {
	int ino, nlink, uid, gid, size;
	bool attr_mark;		/* some entry has verity: every mode gets an 11th column */
};

struct ls_ctx {
	struct uf2fs *fs;
	struct ls_flags flags;
	bool headers;		/* print "PATH:" above each directory */
	bool printed;		/* something was printed: the next header gets a blank line */
	int status;
};

static void cmd_ls_help(void)
{
	printf("Usage: uf2fs ls [-l] [-a] [-R] [-i] [-d] [-o OPTIONS] IMAGE [PATH...]\n"
	       "\n"
	       "List directories of an f2fs image (default PATH: /). Names are sorted\n"
	       "bytewise; owners are numeric; times are local, long-iso.\n"
	       "\n"
	       "  -l           long format: mode, links, uid, gid, size, mtime, name; a\n"
	       "               mode ending in V marks an fs-verity file\n"
	       "  -a           include names starting with '.', and '.' and '..'\n"
	       "  -R           list subdirectories recursively\n"
	       "  -i           print each entry's inode number\n"
	       "  -d           list directories themselves, not their contents\n"
	       "  -o OPTIONS   library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help   show this help\n");
}

static bool ls_is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

static int ls_fill(void *arg, const char *name, size_t len, uint32_t ino, unsigned int dtype,
		   uint64_t next_pos)
{
	struct ls_list *list = arg;
	struct ls_entry *e;

	if (name[0] == '.' && !list->all)
		return 0;
	if (list->n == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 64;
		struct ls_entry *v = realloc(list->v, cap * sizeof(*v));

		if (!v)
			goto nomem;
		list->v = v;
		list->cap = cap;
	}
	e = &list->v[list->n];
	memset(e, 0, sizeof(*e));
	e->name = strndup(name, len);
	if (!e->name)
		goto nomem;
	e->ino = ino;
	e->dtype = dtype;
	list->n++;
	return 0;
nomem:
	list->err = -ENOMEM;
	return 1;
}

static void ls_free_list(struct ls_list *list)
{
	size_t i;

	for (i = 0; i < list->n; i++)
		free(list->v[i].name);
	free(list->v);
}

static int ls_cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct ls_entry *)a)->name, ((const struct ls_entry *)b)->name);
}

static void ls_mode_string(uint32_t mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";
	int i;

	switch (mode & S_IFMT) {
	case S_IFDIR:  out[0] = 'd'; break;
	case S_IFLNK:  out[0] = 'l'; break;
	case S_IFCHR:  out[0] = 'c'; break;
	case S_IFBLK:  out[0] = 'b'; break;
	case S_IFIFO:  out[0] = 'p'; break;
	case S_IFSOCK: out[0] = 's'; break;
	case S_IFREG:  out[0] = '-'; break;
	default:       out[0] = '?'; break;
	}
	for (i = 0; i < 9; i++)
		out[i + 1] = (mode & (0400 >> i)) ? rwx[i] : '-';
	if (mode & S_ISUID)
		out[3] = (mode & S_IXUSR) ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = (mode & S_IXGRP) ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = (mode & S_IXOTH) ? 't' : 'T';
	out[10] = '\0';
}

static bool ls_is_device(uint32_t mode)
{
	return S_ISCHR(mode) || S_ISBLK(mode);
}

static int ls_size_string(const struct uf2fs_attr *attr, char *buf, size_t size)
{
	if (ls_is_device(attr->mode))
		return snprintf(buf, size, "%u, %u", major(attr->rdev), minor(attr->rdev));
	return snprintf(buf, size, "%" PRIu64, attr->size);
}

static int ls_num_width(uint64_t v)
{
	int w = 1;

	while (v >= 10) {
		v /= 10;
		w++;
	}
	return w;
}

static void ls_widen(struct ls_widths *w, const struct ls_entry *e)
{
	char size[48];
	int len;

	len = ls_num_width(e->attr.ino);
	if (len > w->ino)
		w->ino = len;
	len = ls_num_width(e->attr.nlink);
	if (len > w->nlink)
		w->nlink = len;
	len = ls_num_width(e->attr.uid);
	if (len > w->uid)
		w->uid = len;
	len = ls_num_width(e->attr.gid);
	if (len > w->gid)
		w->gid = len;
	len = ls_size_string(&e->attr, size, sizeof(size));
	if (len > w->size)
		w->size = len;
	if (e->attr.flags & FS_VERITY_FL)
		w->attr_mark = true;
}

static void ls_print_target(struct ls_ctx *ctx, const struct ls_entry *e)
{
	char target[LS_SYMLINK_MAX + 1];
	ssize_t len;

	len = uf2fs_readlink(ctx->fs, e->attr.ino, target, LS_SYMLINK_MAX);
	if (len < 0) {
		cli_path_error(e->name, len);
		ctx->status = CLI_EXIT_FAIL;
		return;
	}
	printf(" -> %.*s", (int)len, target);
}

static void ls_print_long(struct ls_ctx *ctx, const struct ls_entry *e,
			  const struct ls_widths *w)
{
	char mode[11], size[48], mtime[32];
	time_t secs = e->attr.mtime.tv_sec;
	struct tm tm;

	ls_mode_string(e->attr.mode, mode);
	ls_size_string(&e->attr, size, sizeof(size));
	if (!localtime_r(&secs, &tm) || !strftime(mtime, sizeof(mtime), "%Y-%m-%d %H:%M", &tm))
		snprintf(mtime, sizeof(mtime), "%lld", (long long)secs);
	if (ctx->flags.inode)
		printf("%*u ", w->ino, e->attr.ino);
	/* like coreutils' '+' for an ACL: a verity file's mode ends in 'V' */
	printf("%s%s %*u %*u %*u %*s %s %s", mode,
	       !w->attr_mark ? "" : (e->attr.flags & FS_VERITY_FL) ? "V" : " ", w->nlink, e->attr.nlink, w->uid, e->attr.uid,
	       w->gid, e->attr.gid, w->size, size, mtime, e->name);
	if (S_ISLNK(e->attr.mode))
		ls_print_target(ctx, e);
	putchar('\n');
}

/* Long format needs every entry's attributes before the first line (widths). */
static void ls_load_attrs(struct ls_ctx *ctx, struct ls_entry *v, size_t n, const char *dir)
{
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		if (v[i].have_attr)
			continue;
		ret = uf2fs_getattr(ctx->fs, v[i].ino, &v[i].attr);
		if (ret < 0) {
			cli_error("%s/%s: %s", dir, v[i].name, strerror(-ret));
			ctx->status = CLI_EXIT_FAIL;
			continue;
		}
		v[i].have_attr = true;
	}
}

static void ls_print_entries(struct ls_ctx *ctx, struct ls_entry *v, size_t n, bool total)
{
	struct ls_widths w = { 0 };
	uint64_t blocks = 0;
	size_t i;

	if (!ctx->flags.long_format) {
		for (i = 0; i < n; i++) {
			if (ctx->flags.inode)
				printf("%u ", v[i].ino);
			printf("%s\n", v[i].name);
		}
		return;
	}
	for (i = 0; i < n; i++) {
		if (!v[i].have_attr)
			continue;
		ls_widen(&w, &v[i]);
		blocks += v[i].attr.blocks;
	}
	/* ls counts 1 KiB units; st_blocks is 512-byte units. */
	if (total)
		printf("total %" PRIu64 "\n", (blocks + 1) / 2);
	for (i = 0; i < n; i++)
		if (v[i].have_attr)
			ls_print_long(ctx, &v[i], &w);
}

static char *ls_join(const char *dir, const char *name)
{
	size_t len = strlen(dir);
	char *out;

	if (asprintf(&out, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name) < 0)
		return NULL;
	return out;
}

static void ls_list_dir(struct ls_ctx *ctx, uint32_t ino, const char *path);

static void ls_recurse(struct ls_ctx *ctx, const struct ls_list *list, const char *path)
{
	size_t i;
	char *sub;

	for (i = 0; i < list->n; i++) {
		const struct ls_entry *e = &list->v[i];
		bool is_dir = e->have_attr ? S_ISDIR(e->attr.mode) : e->dtype == 4;

		if (!is_dir || ls_is_dot_or_dotdot(e->name))
			continue;
		sub = ls_join(path, e->name);
		if (!sub) {
			cli_path_error(path, -ENOMEM);
			ctx->status = CLI_EXIT_FAIL;
			return;
		}
		ls_list_dir(ctx, e->ino, sub);
		free(sub);
	}
}

static void ls_list_dir(struct ls_ctx *ctx, uint32_t ino, const char *path)
{
	struct ls_list list = { .all = ctx->flags.all };
	int ret;

	ret = uf2fs_readdir(ctx->fs, ino, 0, ls_fill, &list);
	if (ret == 0)
		ret = list.err;
	if (ret < 0) {
		cli_path_error(path, ret);
		ctx->status = CLI_EXIT_FAIL;
		ls_free_list(&list);
		return;
	}
	qsort(list.v, list.n, sizeof(*list.v), ls_cmp_entry);
	if (ctx->flags.long_format)
		ls_load_attrs(ctx, list.v, list.n, path);
	if (ctx->headers)
		printf("%s%s:\n", ctx->printed ? "\n" : "", path);
	ctx->printed = true;
	ls_print_entries(ctx, list.v, list.n, true);
	if (ctx->flags.recursive)
		ls_recurse(ctx, &list, path);
	ls_free_list(&list);
}

/* A command-line PATH, resolved; false (and reported) if it does not exist. */
static bool ls_arg(struct ls_ctx *ctx, char *path, struct ls_entry *e)
{
	bool follow = !ctx->flags.long_format && !ctx->flags.directory;
	int ret;

	memset(e, 0, sizeof(*e));
	ret = cli_resolve(ctx->fs, path, follow, &e->ino);
	if (ret == 0)
		ret = uf2fs_getattr(ctx->fs, e->ino, &e->attr);
	if (ret < 0) {
		cli_path_error(path, ret);
		ctx->status = CLI_EXIT_FAIL;
		return false;
	}
	e->name = path;
	e->have_attr = true;
	return true;
}

/*
 * Command-line PATHs, as ls orders them: the non-directories first, sorted,
 * as one listing; then each directory under its own header.
 */
static void ls_paths(struct ls_ctx *ctx, char **paths, int n)
{
	struct ls_entry *files = calloc(n, sizeof(*files));
	struct ls_entry *dirs = calloc(n, sizeof(*dirs));
	int i, nfiles = 0, ndirs = 0;
	struct ls_entry e;

	if (!files || !dirs) {
		cli_path_error(paths[0], -ENOMEM);
		ctx->status = CLI_EXIT_FAIL;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (!ls_arg(ctx, paths[i], &e))
			continue;
		if (S_ISDIR(e.attr.mode) && !ctx->flags.directory)
			dirs[ndirs++] = e;
		else
			files[nfiles++] = e;
	}
	if (nfiles) {
		qsort(files, nfiles, sizeof(*files), ls_cmp_entry);
		ls_print_entries(ctx, files, nfiles, false);
		ctx->printed = true;
	}
	for (i = 0; i < ndirs; i++)
		ls_list_dir(ctx, dirs[i].ino, dirs[i].name);
out:
	free(files);
	free(dirs);
}

static int ls_parse_flag(struct ls_flags *flags, int c)
{
	switch (c) {
	case 'l': flags->long_format = true; return 0;
	case 'a': flags->all = true; return 0;
	case 'R': flags->recursive = true; return 0;
	case 'i': flags->inode = true; return 0;
	case 'd': flags->directory = true; return 0;
	}
	return -EINVAL;
}

int cmd_ls(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ls_ctx ctx = { .status = CLI_EXIT_OK };
	struct uf2fs_options opts;
	char *root = "/";
	int c, ret;

	uf2fs_default_options(&opts);
	while ((c = getopt_long(argc, argv, "lRaidho:", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_ls_help();
			return CLI_EXIT_OK;
		}
		if (ls_parse_flag(&ctx.flags, c) == 0)
			continue;
		ret = cli_common_option("ls", c, optarg, &opts);
		if (ret)
			return ret;
	}
	if (optind == argc)
		return cli_usage_error("ls", "missing IMAGE");
	if (ctx.flags.directory)
		ctx.flags.recursive = false;
	if (cli_mount_image(argv[optind], &opts, &ctx.fs))
		return CLI_EXIT_FAIL;
	ctx.headers = ctx.flags.recursive || argc - optind > 2;
	if (argc - optind == 1)
		ls_paths(&ctx, &root, 1);
	else
		ls_paths(&ctx, argv + optind + 1, argc - optind - 1);
	uf2fs_unmount(ctx.fs);
	if (fflush(stdout)) {
		cli_error("write error: %s", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	return ctx.status;
}
