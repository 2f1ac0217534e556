// SPDX-License-Identifier: GPL-2.0
/*
 * The `uf2fs` command: dispatch to a subcommand, or act as the FUSE daemon.
 * Three spellings reach the daemon: `uf2fs mount IMAGE MNT`, the bare
 * `uf2fs IMAGE MNT -o opts` that /sbin/mount.fuse3 runs for
 * `mount -t fuse.uf2fs`, and a `mount.fuse.uf2fs` link that mount(8) runs
 * directly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "../fuse/fuse_main.h"

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct cli_command cli_commands[] = {
	{ "mount", uf2fs_fuse_main, "mount an image through FUSE (read-only unless -o rw)" },
	{ "info",  cmd_info,  "show geometry, features and checkpoint state" },
	{ "ls",    cmd_ls,    "list a directory in an image" },
	{ "cat",   cmd_cat,   "print files from an image" },
	{ "get",   cmd_get,   "extract a file or a tree from an image" },
	{ "put",   cmd_put,   "copy host files or trees into an image (like cp -a)" },
	{ "mkdir", cmd_mkdir, "make directories in an image" },
	{ "rm",    cmd_rm,    "remove files or trees from an image" },
	{ "simg",  cmd_simg,  "write a new Android sparse image of an image" },
	{ "stats", cmd_stats, "show cache and device counters of a live mount" },
	{ "quota", cmd_quota, "report disk quota usage and limits (like repquota)" },
	{ "setquota", cmd_setquota, "set disk quota limits and grace times" },
	{ "verity", cmd_verity, "fs-verity: enable or measure files in an image" },
	{ "umount", cmd_umount, "unmount and wait until the image holds the final checkpoint" },
	{ "fscrypt", cmd_fscrypt, "fscrypt keys and policies on a live mount" },
};

#define CLI_NR_COMMANDS (sizeof(cli_commands) / sizeof(cli_commands[0]))

static void cli_print_help(FILE *out)
{
	size_t i;

	fprintf(out,
		"Usage: uf2fs COMMAND [ARGS...]\n"
		"       uf2fs IMAGE MOUNTPOINT [-o OPTIONS]   (same as uf2fs mount)\n"
		"\n"
		"Read and write f2fs images in userspace, mounted through FUSE or offline.\n"
		"\n"
		"Commands:\n");
	for (i = 0; i < CLI_NR_COMMANDS; i++)
		fprintf(out, "  %-8s %s\n", cli_commands[i].name, cli_commands[i].summary);
	fprintf(out,
		"  help    show this help, or a command's with 'help COMMAND'\n"
		"\n"
		"Run 'uf2fs COMMAND --help' for the options of a command.\n");
}

static const struct cli_command *cli_find_command(const char *name)
{
	size_t i;

	for (i = 0; i < CLI_NR_COMMANDS; i++)
		if (!strcmp(cli_commands[i].name, name))
			return &cli_commands[i];
	return NULL;
}

/* getopt names the program by argv[0]: make it "uf2fs ls", not "ls". */
static int cli_run(const struct cli_command *cmd, int argc, char **argv)
{
	char name[32];

	snprintf(name, sizeof(name), "uf2fs %s", cmd->name);
	argv[0] = name;
	return cmd->run(argc, argv);
}

static int cli_help(int argc, char **argv)
{
	const struct cli_command *cmd;
	char help_flag[] = "--help";
	char *cmd_argv[3];

	if (argc < 2) {
		cli_print_help(stdout);
		return CLI_EXIT_OK;
	}
	cmd = cli_find_command(argv[1]);
	if (!cmd) {
		cli_error("unknown command '%s'", argv[1]);
		return CLI_EXIT_USAGE;
	}
	cmd_argv[0] = argv[1];
	cmd_argv[1] = help_flag;
	cmd_argv[2] = NULL;
	return cli_run(cmd, 2, cmd_argv);
}

static bool cli_is_mount_helper(const char *argv0)
{
	const char *base = strrchr(argv0, '/');

	base = base ? base + 1 : argv0;
	return !strncmp(base, "mount.", 6);
}

/* umount(8) runs /sbin/umount.fuse.uf2fs for a fuse.uf2fs mount. */
static bool cli_is_umount_helper(const char *argv0)
{
	const char *base = strrchr(argv0, '/');

	base = base ? base + 1 : argv0;
	return !strncmp(base, "umount.", 7);
}

/*
 * `uf2fs IMAGE MNT`: anything that names an existing file, or looks like a
 * path, is an image. A mistyped command word then still gets "unknown command".
 */
static bool cli_looks_like_image(const char *arg)
{
	struct stat st;

	return strchr(arg, '/') || stat(arg, &st) == 0;
}

static int cli_main(int argc, char **argv)
{
	const struct cli_command *cmd;

	if (cli_is_mount_helper(argv[0]))
		return uf2fs_fuse_main(argc, argv);
	if (cli_is_umount_helper(argv[0]))
		return cmd_umount_helper(argc, argv);
	if (argc < 2) {
		cli_print_help(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cli_help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("uf2fs %s\n", UF2FS_VERSION);
		return CLI_EXIT_OK;
	}
	cmd = cli_find_command(argv[1]);
	if (cmd)
		return cli_run(cmd, argc - 1, argv + 1);
	if (argv[1][0] != '-' && argc >= 3 && cli_looks_like_image(argv[1]))
		return uf2fs_fuse_main(argc, argv);
	cli_error("unknown command '%s'", argv[1]);
	fprintf(stderr, "Try 'uf2fs help' for more information.\n");
	return CLI_EXIT_USAGE;
}

/// Huge pages for the heap ///

#define THP_TUNABLE	"glibc.malloc.hugetlb=1"
#define THP_MARK	"UF2FS_THP_REEXEC"	/* set across the re-exec: its old GLIBC_TUNABLES */

/*
 * A cold walk of a tree allocates a folio and an inode for every entry, and
 * each first touch of fresh heap memory is a page fault: two per entry, the
 * larger part of a cold find's time on a VM where a fault costs tens of
 * microseconds (64,262 faults, 2.7 s for 32,755 entries; 142 and 1.2-1.9 s
 * with huge pages). glibc maps its heap with transparent huge pages when the
 * glibc.malloc.hugetlb tunable is set, and tunables are read only when a
 * program starts: so uf2fs starts itself again once with it, unless the
 * system has THP off, the tunable is set already, UF2FS_NO_THP is set, or a
 * sanitizer brings its own allocator. The re-started process puts the
 * caller's GLIBC_TUNABLES back, so what uf2fs runs (qemu-nbd) does not get it.
 */
static void cli_heap_huge_pages(char **argv)
{
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	const char *old = getenv("GLIBC_TUNABLES");
	char mode[64] = "", buf[512];
	FILE *f;

	if (getenv(THP_MARK)) {
		const char *was = getenv(THP_MARK);

		if (*was)
			setenv("GLIBC_TUNABLES", was, 1);
		else
			unsetenv("GLIBC_TUNABLES");
		unsetenv(THP_MARK);
		return;
	}
	if (getenv("UF2FS_NO_THP") || (old && strstr(old, "glibc.malloc.hugetlb")))
		return;
	/*
	 * Started through the dynamic loader by name (ld.so --library-path
	 * DIR uf2fs ..., as the QEMU oracle's guest runs it), /proc/self/exe
	 * is the loader and our argv would not restart us. The kernel then ran
	 * no interpreter, so AT_BASE is 0 (the loader rewrites AT_ENTRY and
	 * AT_EXECFN, not that); a static build has none either and stays as is.
	 */
	if (!getauxval(AT_BASE))
		return;
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
		return;
	if (!fgets(mode, sizeof(mode), f))
		mode[0] = '\0';
	fclose(f);
	if (!mode[0] || strstr(mode, "[never]"))
		return;
	if (snprintf(buf, sizeof(buf), "%s%s" THP_TUNABLE, old ? old : "", old ? ":" : "") >=
	    (int)sizeof(buf))
		return;
	if (setenv(THP_MARK, old ? old : "", 1) || setenv("GLIBC_TUNABLES", buf, 1))
		return;
	execv("/proc/self/exe", argv);
	/* could not: go on without, as before */
	if (old)
		setenv("GLIBC_TUNABLES", old, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	unsetenv(THP_MARK);
#else
	(void)argv;
#endif
}

int main(int argc, char **argv)
{
	int ret;

	cli_heap_huge_pages(argv);
	ret = cli_main(argc, argv);

	cli_free_option_strings();
	return ret;
}
