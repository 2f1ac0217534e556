// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs mkdir [-p] [-m MODE] IMAGE DIR...`: make directories in an image, as
 * mkdir(1) does: mode 0777 less the umask unless -m gives it, owned by the
 * caller; with -p, missing parents too (u+wx so the rest can be made under
 * them) and no error for a directory that exists. Symlinks on the way are
 * followed, as the kernel's path walk would. The image is written, and
 * checkpointed at the end.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"

struct mkdir_ctx {
	struct uf2fs *fs;
	bool parents;
	bool verbose;
	mode_t mode;		/* of the last component */
	mode_t parent_mode;	/* of parents made by -p */
};

static void cmd_mkdir_help(void)
{
	printf("Usage: uf2fs mkdir [-p] [-m MODE] [-v] [-o OPTIONS] IMAGE DIRECTORY...\n"
	       "\n"
	       "Create directories in an f2fs image, owned by the caller.\n"
	       "\n"
	       "  -p, --parents   make parent directories as needed; no error if existing\n"
	       "  -m, --mode=MODE set the mode (octal), not 0777 less the umask\n"
	       "  -v, --verbose   print a message for each created directory\n"
	       "  -o OPTIONS      library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help      show this help\n");
}

static int mkdir_parse_mode(const char *arg, mode_t *mode)
{
	unsigned long m;
	char *end;

	errno = 0;
	m = strtoul(arg, &end, 8);
	if (errno || end == arg || *end || *arg == '-' || m > 07777)
		return -EINVAL;
	*mode = m;
	return 0;
}

static int mkdir_one_name(struct mkdir_ctx *ctx, uint32_t dir, const char *name, mode_t mode,
			  const char *path)
{
	uint32_t ino;
	int ret;

	ret = uf2fs_mkdir(ctx->fs, dir, name, strlen(name), mode, geteuid(), getegid(), &ino);
	if (ret == 0 && ctx->verbose)
		printf("uf2fs: created directory '%s'\n", path);
	return ret;
}

/* Without -p: the parent must exist, the directory must not. */
static int mkdir_plain(struct mkdir_ctx *ctx, const char *path)
{
	struct cli_parent parent;
	int ret;

	ret = cli_resolve_parent(ctx->fs, path, &parent);
	if (ret == 0) {
		/* The root, ".", "..": all exist already. */
		if (!parent.name[0] || !strcmp(parent.name, ".") || !strcmp(parent.name, ".."))
			ret = -EEXIST;
		else
			ret = mkdir_one_name(ctx, parent.dir, parent.name, ctx->mode, path);
		cli_parent_free(&parent);
	}
	return ret;
}

/* One component under -p: *dir is its parent, and becomes the component. */
static int mkdir_step(struct mkdir_ctx *ctx, const char *prefix, const char *name, bool last,
		      uint32_t *dir)
{
	uint32_t ino;
	int ret;

	/* Existing: followed as the kernel would (a symlink to a directory). */
	ret = cli_resolve(ctx->fs, prefix, true, &ino);
	if (ret == -ENOENT) {
		ret = mkdir_one_name(ctx, *dir, name, last ? ctx->mode : ctx->parent_mode,
				     prefix);
		if (ret == 0)
			ret = cli_resolve(ctx->fs, prefix, true, &ino);
	}
	if (ret == 0)
		*dir = ino;
	return ret;
}

/* With -p: walk the path, making what is missing; an existing directory is fine. */
static int mkdir_parents(struct mkdir_ctx *ctx, const char *path)
{
	char *copy = strdup(path), *prefix, *name, *next;
	uint32_t dir = uf2fs_root_ino(ctx->fs);
	bool last;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (name = copy + strspn(copy, "/"); *name && ret == 0; name = next) {
		next = strchrnul(name, '/');
		last = !next[strspn(next, "/")];
		/* The path up to this component, from the untouched original. */
		prefix = strndup(path, next - copy);
		if (*next)
			*next++ = '\0';
		next += strspn(next, "/");
		ret = prefix ? mkdir_step(ctx, prefix, name, last, &dir) : -ENOMEM;
		free(prefix);
	}
	free(copy);
	return ret;
}

static int mkdir_one(struct mkdir_ctx *ctx, const char *path)
{
	struct uf2fs_attr attr;
	uint32_t ino;
	int ret;

	if (!*path)
		ret = -ENOENT;
	else if (ctx->parents)
		ret = mkdir_parents(ctx, path);
	else
		ret = mkdir_plain(ctx, path);
	/* mkdir -p on an existing file is an error, as it is for mkdir(1). */
	if (ret == 0 && ctx->parents && cli_resolve(ctx->fs, path, true, &ino) == 0 &&
	    uf2fs_getattr(ctx->fs, ino, &attr) == 0 && !S_ISDIR(attr.mode))
		ret = -EEXIST;
	if (ret < 0)
		cli_error("cannot create directory '%s': %s", path, strerror(-ret));
	return ret;
}

int cmd_mkdir(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "parents", no_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct mkdir_ctx ctx = { 0 };
	struct uf2fs_options opts;
	mode_t mask = umask(0);
	bool mode_given = false;
	int c, i, ret, status = CLI_EXIT_OK;

	umask(mask);
	uf2fs_default_options(&opts);
	while ((c = getopt_long(argc, argv, "hpm:vo:", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_mkdir_help();
			return CLI_EXIT_OK;
		} else if (c == 'p') {
			ctx.parents = true;
		} else if (c == 'v') {
			ctx.verbose = true;
		} else if (c == 'm') {
			if (mkdir_parse_mode(optarg, &ctx.mode) < 0)
				return cli_usage_error("mkdir", "invalid mode '%s' (octal only)",
						       optarg);
			mode_given = true;
		} else if ((ret = cli_common_option("mkdir", c, optarg, &opts))) {
			return ret;
		}
	}
	if (argc - optind < 2)
		return cli_usage_error("mkdir", argc == optind ? "missing IMAGE" :
				       "missing operand (DIRECTORY)");
	if (!mode_given)
		ctx.mode = 0777 & ~mask;
	ctx.parent_mode = (0777 & ~mask) | S_IWUSR | S_IXUSR;
	if (cli_mount_rw(argv[optind], &opts, &ctx.fs))
		return CLI_EXIT_FAIL;
	for (i = optind + 1; i < argc; i++)
		if (mkdir_one(&ctx, argv[i]) < 0)
			status = CLI_EXIT_FAIL;
	return cli_unmount_rw(ctx.fs, argv[optind], status);
}
