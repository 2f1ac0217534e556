// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs rm [-r] [-f] IMAGE PATH...`: remove files, and with -r whole trees,
 * from an image, as rm(1) does: the last component is never followed (a
 * symlink is removed, not its target), a directory needs -r, "." and ".."
 * are refused, and so is the root. It removes all it can and reports each
 * failure. The image is written, and checkpointed at the end.
 *
 * A tree goes depth-first; each directory's names are read in full before
 * any is removed, so no library walk stays open across the removals.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "opts.h"

struct rm_ctx {
	struct uf2fs *fs;
	bool recursive;
	bool force;
	bool verbose;
};

struct rm_names {
	char **v;
	size_t n, cap;
	int err;
};

static void cmd_rm_help(void)
{
	printf("Usage: uf2fs rm [-r] [-f] [-v] [-o OPTIONS] IMAGE PATH...\n"
	       "\n"
	       "Remove files or, with -r, directories and their contents from an f2fs image.\n"
	       "\n"
	       "  -r, -R, --recursive  remove directories and their contents\n"
	       "  -f, --force          ignore nonexistent paths, never fail on them\n"
	       "  -v, --verbose        explain what is being done\n"
	       "  -o OPTIONS           library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help           show this help\n");
}

static int rm_fill(void *arg, const char *name, size_t len, uint32_t ino, unsigned int dtype,
		   uint64_t next_pos)
{
	struct rm_names *d = arg;
	char **v;

	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return 0;
	if (d->n == d->cap) {
		v = realloc(d->v, (d->cap ? d->cap * 2 : 32) * sizeof(*v));
		if (!v)
			goto nomem;
		d->v = v;
		d->cap = d->cap ? d->cap * 2 : 32;
	}
	d->v[d->n] = strndup(name, len);
	if (!d->v[d->n])
		goto nomem;
	d->n++;
	return 0;
nomem:
	d->err = -ENOMEM;
	return 1;
}

static void rm_free_names(struct rm_names *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->v[i]);
	free(d->v);
}

static int rm_entry(struct rm_ctx *ctx, uint32_t dir, const char *name, const char *path);

/* Empty directory ino (named path): its entries first. Returns the first error. */
static int rm_children(struct rm_ctx *ctx, uint32_t ino, const char *path)
{
	struct rm_names d = { 0 };
	int ret, first = 0;
	char *child;
	size_t i;

	ret = uf2fs_readdir(ctx->fs, ino, 0, rm_fill, &d);
	if (ret == 0)
		ret = d.err;
	if (ret < 0) {
		cli_error("cannot read directory '%s': %s", path, strerror(-ret));
		first = ret;
	}
	for (i = 0; i < d.n; i++) {
		child = cli_join(path, d.v[i]);
		ret = child ? rm_entry(ctx, ino, d.v[i], child) : -ENOMEM;
		if (!child)
			cli_error("%s: %s", path, strerror(ENOMEM));
		if (ret < 0 && !first)
			first = ret;
		free(child);
	}
	rm_free_names(&d);
	return first;
}

/* Remove name in dir; errors are printed here. */
static int rm_entry(struct rm_ctx *ctx, uint32_t dir, const char *name, const char *path)
{
	struct uf2fs_attr attr;
	size_t len = strlen(name);
	uint32_t ino;
	int ret;

	ret = uf2fs_lookup(ctx->fs, dir, name, len, &ino);
	if (ret == -ENOENT && ctx->force)
		return 0;
	if (ret == 0)
		ret = uf2fs_getattr(ctx->fs, ino, &attr);
	if (ret < 0)
		goto fail;
	if (!S_ISDIR(attr.mode)) {
		ret = uf2fs_unlink(ctx->fs, dir, name, len);
		if (ret == 0 && ctx->verbose)
			printf("removed '%s'\n", path);
		goto out;
	}
	if (!ctx->recursive) {
		ret = -EISDIR;
		goto fail;
	}
	/* The failure inside was printed; this one would only repeat ENOTEMPTY. */
	if (rm_children(ctx, ino, path) < 0)
		return -ENOTEMPTY;
	ret = uf2fs_rmdir(ctx->fs, dir, name, len);
	if (ret == 0 && ctx->verbose)
		printf("removed directory '%s'\n", path);
out:
	if (ret == 0)
		return 0;
fail:
	cli_error("cannot remove '%s': %s", path, strerror(-ret));
	return ret;
}

static bool rm_is_dots(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..");
}

static int rm_one(struct rm_ctx *ctx, const char *path)
{
	struct cli_parent parent;
	int ret;

	if (!*path) {
		if (ctx->force)
			return 0;
		cli_error("cannot remove '': %s", strerror(ENOENT));
		return -ENOENT;
	}
	ret = cli_resolve_parent(ctx->fs, path, &parent);
	if (ret == -ENOENT && ctx->force)
		return 0;
	if (ret < 0) {
		cli_error("cannot remove '%s': %s", path, strerror(-ret));
		return ret;
	}
	if (!parent.name[0]) {
		cli_error(ctx->recursive ? "it is dangerous to operate recursively on '%s'" :
			  "cannot remove '%s': Is a directory", path);
		ret = -EBUSY;
	} else if (rm_is_dots(parent.name)) {
		cli_error("refusing to remove '.' or '..' directory: skipping '%s'", path);
		ret = -EINVAL;
	} else {
		ret = rm_entry(ctx, parent.dir, parent.name, path);
	}
	cli_parent_free(&parent);
	return ret;
}

int cmd_rm(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "force", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct rm_ctx ctx = { 0 };
	struct uf2fs_options opts;
	int c, i, ret, status = CLI_EXIT_OK;

	uf2fs_default_options(&opts);
	while ((c = getopt_long(argc, argv, "hrRfvo:", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_rm_help();
			return CLI_EXIT_OK;
		} else if (c == 'r' || c == 'R') {
			ctx.recursive = true;
		} else if (c == 'f') {
			ctx.force = true;
		} else if (c == 'v') {
			ctx.verbose = true;
		} else if ((ret = cli_common_option("rm", c, optarg, &opts))) {
			return ret;
		}
	}
	if (argc == optind)
		return cli_usage_error("rm", "missing IMAGE");
	/* rm -f with nothing to remove succeeds, as rm(1) does. */
	if (argc - optind < 2 && !ctx.force)
		return cli_usage_error("rm", "missing operand (PATH)");
	if (cli_mount_rw(argv[optind], &opts, &ctx.fs))
		return CLI_EXIT_FAIL;
	for (i = optind + 1; i < argc; i++)
		if (rm_one(&ctx, argv[i]) < 0)
			status = CLI_EXIT_FAIL;
	return cli_unmount_rw(ctx.fs, argv[optind], status);
}
