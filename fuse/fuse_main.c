// SPDX-License-Identifier: GPL-2.0
/*
 * The FUSE daemon: command line and -o parsing, then the start-up sequence
 * that keeps errors on the terminal, and the shutdown that makes everything
 * durable. uf2fs's own options (ro, rw, direct_io, kernel_cache,
 * writeback_cache, thread counts, and the library's, through cli/opts.c) are
 * consumed here; generic mount options that FUSE has no use for are dropped;
 * everything else (allow_other, fsname=, max_read=, async_read, ...) goes to
 * libfuse, which rejects what it does not know.
 *
 * Start-up: fork first (unless -f), then mount the library and then FUSE in
 * the child while its stderr is still the terminal, and only then let the
 * parent exit with the child's status. Forking after the library is up would
 * lose its threads (flusher, io_uring) in the child; forking before the
 * checks would return 0 to mount(8) for a bad image. A bad image thus prints
 * the library's error, exits 1 and leaves no mountpoint behind.
 *
 * Shutdown: however the loop ends (umount or fusermount -u, SIGTERM, SIGINT,
 * SIGHUP, a dead connection), the library is unmounted with a final
 * checkpoint before the process exits, after a signal once the kernel's
 * dirty pages are in (fuse_daemon_flush); a failed one is reported on stderr
 * (and syslog, once detached) and makes the exit status 1. Scripts that
 * fsck the image must wait for the daemon to exit, since umount(2) of a
 * /dev/fuse mount returns before it does: `uf2fs umount` does (cli/cmd_umount.c).
 */
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <syslog.h>
#include <unistd.h>

#include "fuse_bdi.h"
#include "fuse_main.h"
#include "fuse_priv.h"
#include "../cli/opts.h"

#define FUSE_EXIT_OK		0
#define FUSE_EXIT_FAIL		1
#define FUSE_EXIT_USAGE		2

/*
 * Nothing changes the image behind the kernel (read-write, every change goes
 * through it, and it invalidates what its own ops change): cache for a day.
 */
#define FUSE_CACHED_TIMEOUT	86400.0
/* With direct_io the measured cache is uf2fs's; keep libfuse's default. */
#define FUSE_DIRECT_TIMEOUT	1.0
/* libfuse's default worker limit; with 2^n cores more only adds contention. */
#define FUSE_DEF_MAX_THREADS	10
/* Enough for any machine we run on; libfuse's own bound is far larger. */
#define FUSE_MAX_MAX_THREADS	1024
/*
 * A client's next request follows a reply within about 10-20 us when it asks
 * one thing at a time (measured: ls -lR); 50 covers that with margin, and
 * costs an idle mount 50 us of CPU after its last request.
 */
#define FUSE_DEF_SPIN_US	50
#define FUSE_MAX_SPIN_US	10000

struct fuse_cl {
	const char *image;
	const char *mountpoint;
	bool helper;		/* run by mount(8) as mount.fuse.uf2fs */
	bool foreground;
	bool single_thread;
	bool fake;		/* mount -f: pretend, exit 0 without mounting */
	bool remount;		/* mount -o remount: the kernel's remount, no new daemon */
	bool show_help;
	bool show_version;
	bool direct_io;
	int writeback_cache;	/* -o [no_]writeback_cache; -1: default (on unless direct_io) */
	bool killpriv_v2;	/* offer HANDLE_KILLPRIV_V2 (default on) */
	bool allow_other;
	bool has_fsname;
	bool has_subtype;
	bool has_default_permissions;
	bool has_nodev;
	bool has_nosuid;
	bool clone_fd;
	bool fakeroot;		/* -o fakeroot (fuse_idmap.c) */
	long map_uid, map_gid;	/* -o uid=, gid=: the image's ids of the mounting user; -1 none */
	unsigned int max_threads;
	int max_idle_threads;	/* -1: libfuse's default (never reap idle workers) */
	unsigned int spin_us;	/* fuse_rx.c: the reader polls this long before it sleeps */
	bool spin_pin;		/* fuse_rx.c: ... on the CPU it polls on */
	bool bad;		/* an error was printed */
	struct uf2fs_options lib;
};

enum {
	FUSE_KEY_HELPER_TYPE,	/* -t TYPE, from mount(8) */
	FUSE_KEY_HELPER_NS,	/* -N NAMESPACE, from mount(8) */
};

static const struct fuse_opt fuse_cl_spec[] = {
	FUSE_OPT_KEY("-t ", FUSE_KEY_HELPER_TYPE),
	FUSE_OPT_KEY("-N ", FUSE_KEY_HELPER_NS),
	FUSE_OPT_END
};

/*
 * Generic mount(8) options with no meaning for a FUSE mount, which libfuse
 * would reject. Each is dropped, so fstab lines that carry them still work.
 */
static const char *const fuse_ignored_opts[] = {
	"defaults", "auto", "noauto", "user", "nouser", "users", "owner", "group",
	"nofail", "_netdev", "norelatime", "nostrictatime",
	"lazytime", "nolazytime", "iversion", "noiversion",
	"mand", "nomand", "silent", "loud", "nonempty", "loop", NULL,
};

static const char *const fuse_ignored_prefixes[] = {
	"x-", "comment=", "helper=", "uhelper=", "loop=", NULL,
};

static void fuse_cl_help(void)
{
	printf("Usage: uf2fs mount [-f] [-d] [-s] [-o OPTIONS] IMAGE MOUNTPOINT\n"
	       "       uf2fs IMAGE MOUNTPOINT [-o OPTIONS]\n"
	       "       mount -t fuse.uf2fs IMAGE MOUNTPOINT [-o OPTIONS]\n"
	       "\n"
	       "Mount an f2fs image or block device through FUSE, read-only unless\n"
	       "rw is given.\n"
	       "\n"
	       "  -f             stay in the foreground\n"
	       "  -d             print every FUSE request (implies -f)\n"
	       "  -s             single-threaded\n"
	       "  -h, --help     show this help\n"
	       "  -V, --version  show the version\n"
	       "  -o OPTIONS     comma-separated:\n"
	       "    ro                     read-only (default)\n"
	       "    rw                     read-write; the kernel checks permissions\n"
	       "                           (default_permissions); the last of ro/rw wins,\n"
	       "                           and mount(8) passes rw unless told ro\n"
	       "    kernel_cache           the kernel caches data, names and attributes\n"
	       "                           (default; nothing else changes the image)\n"
	       "    direct_io              bypass the kernel page cache: every read and\n"
	       "                           write is served by uf2fs's folio cache\n"
	       "    writeback_cache        the kernel collects writes in its page cache\n"
	       "                           and sends them in large batches (rw only;\n"
	       "                           default, except with direct_io or quota\n"
	       "                           limits)\n"
	       "    no_writeback_cache     every write(2) reaches uf2fs at once\n"
	       CLI_LIB_OPTS_HELP
	       "    killpriv_v2, nokillpriv_v2  uf2fs clears setuid/setgid on write, truncate\n"
	       "                           and chown, so the kernel stops asking for\n"
	       "                           security.capability before every write (default on)\n"
	       "    clone_fd, noclone_fd   one /dev/fuse fd per worker thread (default on)\n"
	       "    max_threads=N          worker threads at most (default %d)\n"
	       "    max_idle_threads=N     idle worker threads kept (default: all)\n"
	       "    spin_us=N              one idle worker polls /dev/fuse for N us before\n"
	       "                           it sleeps, the others wait out of the kernel's\n"
	       "                           sight (default %d; 0: libfuse's loop)\n"
	       "    spin_pin, nospin_pin   the polling worker keeps to its CPU while it\n"
	       "                           polls (default on)\n"
	       "    allow_other            let other users in (adds default_permissions)\n"
	       "    fakeroot               the mounting user is root in the image: no\n"
	       "                           permission checks, chown to anyone, new files\n"
	       "                           owned by 0:0 (not with allow_other)\n"
	       "    uid=N, gid=N           the image's owner N is the mounting user: shown\n"
	       "                           as them, and what they create is stored as N\n"
	       "    fsname=NAME            source shown in mount(8) (default: the image)\n"
	       "  and libfuse's options: default_permissions, auto_unmount, max_read=N,\n"
	       "  async_read, sync_read, max_readahead=N, max_background=N, ... (see\n"
	       "  fuse(8)). Generic mount options without meaning for FUSE are ignored.\n",
	       FUSE_DEF_MAX_THREADS, FUSE_DEF_SPIN_US);
}

static bool fuse_cl_in(const char *opt, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(opt, *list))
			return true;
	return false;
}

static bool fuse_cl_has_prefix(const char *opt, const char *const *list)
{
	for (; *list; list++)
		if (!strncmp(opt, *list, strlen(*list)))
			return true;
	return false;
}

static int fuse_cl_error(struct fuse_cl *cl, const char *fmt, const char *arg)
{
	fprintf(stderr, "uf2fs: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	cl->bad = true;
	return -1;
}

/* A thread count from 1 (0 too when zero_ok) to FUSE_MAX_MAX_THREADS, or -1. */
static long fuse_cl_threads(const char *val, bool zero_ok)
{
	char *end;
	unsigned long n = strtoul(val, &end, 10);

	if (end == val || *end || *val == '-' || n > FUSE_MAX_MAX_THREADS || (!n && !zero_ok))
		return -1;
	return n;
}

static int fuse_cl_thread_option(struct fuse_cl *cl, const char *opt)
{
	const char *val = strchr(opt, '=') + 1;
	bool idle = !strncmp(opt, "max_idle_threads=", 17);
	long n = fuse_cl_threads(val, idle);

	if (n < 0)
		return fuse_cl_error(cl, idle ? "invalid value for max_idle_threads: '%s'" :
				     "invalid value for max_threads: '%s'", val);
	if (idle)
		cl->max_idle_threads = n;
	else
		cl->max_threads = n;
	return 0;
}

static int fuse_cl_spin_option(struct fuse_cl *cl, const char *val)
{
	char *end;
	unsigned long n = strtoul(val, &end, 10);

	if (end == val || *end || *val == '-' || n > FUSE_MAX_SPIN_US)
		return fuse_cl_error(cl, "invalid value for spin_us: '%s' (0 to 10000)", val);
	cl->spin_us = n;
	return 0;
}

/* uid=N or gid=N: a numeric id of the image (fuse_idmap.c). */
static int fuse_cl_id_option(struct fuse_cl *cl, const char *opt)
{
	const char *val = opt + 4;
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(val, &end, 10);
	if (!*val || *end || *val == '-' || errno || n >= UINT32_MAX)
		return fuse_cl_error(cl, opt[0] == 'u' ? "invalid value for uid: '%s'" :
				     "invalid value for gid: '%s'", val);
	if (opt[0] == 'u')
		cl->map_uid = n;
	else
		cl->map_gid = n;
	return 0;
}

/* Returns 0 to consume the option, 1 to pass it to libfuse, -1 on error. */
static int fuse_cl_mount_option(struct fuse_cl *cl, const char *opt)
{
	int ret = cli_apply_lib_option(&cl->lib, opt);

	if (ret < 0) {
		cl->bad = true;
		return -1;
	}
	if (ret > 0)
		return 0;
	/* As mount(8) reads them: the last of ro and rw wins. */
	if (!strcmp(opt, "ro") || !strcmp(opt, "rw")) {
		cl->lib.read_only = opt[1] == 'o';
		return 0;
	}
	if (!strcmp(opt, "direct_io") || !strcmp(opt, "kernel_cache")) {
		cl->direct_io = opt[0] == 'd';
		return 0;
	}
	if (!strcmp(opt, "writeback_cache") || !strcmp(opt, "no_writeback_cache")) {
		cl->writeback_cache = opt[0] == 'w';
		return 0;
	}
	if (!strcmp(opt, "remount")) {
		cl->remount = true;
		return 0;
	}
	if (!strcmp(opt, "killpriv_v2") || !strcmp(opt, "nokillpriv_v2")) {
		cl->killpriv_v2 = opt[0] == 'k';
		return 0;
	}
	if (!strcmp(opt, "clone_fd") || !strcmp(opt, "noclone_fd")) {
		cl->clone_fd = opt[0] == 'c';
		return 0;
	}
	if (!strncmp(opt, "max_threads=", 12) || !strncmp(opt, "max_idle_threads=", 17))
		return fuse_cl_thread_option(cl, opt);
	if (!strncmp(opt, "spin_us=", 8))
		return fuse_cl_spin_option(cl, opt + 8);
	if (!strcmp(opt, "spin_pin") || !strcmp(opt, "nospin_pin")) {
		cl->spin_pin = opt[0] == 's';
		return 0;
	}
	if (!strcmp(opt, "fakeroot")) {
		cl->fakeroot = true;
		return 0;
	}
	if (!strncmp(opt, "uid=", 4) || !strncmp(opt, "gid=", 4))
		return fuse_cl_id_option(cl, opt);
	if (fuse_cl_in(opt, fuse_ignored_opts) || fuse_cl_has_prefix(opt, fuse_ignored_prefixes))
		return 0;
	cl->allow_other |= !strcmp(opt, "allow_other");
	cl->has_default_permissions |= !strcmp(opt, "default_permissions");
	cl->has_fsname |= !strncmp(opt, "fsname=", 7);
	cl->has_subtype |= !strncmp(opt, "subtype=", 8);
	cl->has_nodev |= !strcmp(opt, "nodev");
	cl->has_nosuid |= !strcmp(opt, "nosuid");
	if (!strcmp(opt, "debug"))
		cl->foreground = true;
	return 1;
}

/*
 * mount(8) runs helpers as "mount.fuse.uf2fs SPEC DIR [-sfnv] [-N NS] [-o OPTS]
 * [-t TYPE]", where -f means fake, not foreground.
 */
static int fuse_cl_helper_flag(struct fuse_cl *cl, const char *arg)
{
	if (!strcmp(arg, "-s") || !strcmp(arg, "-n") || !strcmp(arg, "-v"))
		return 0;
	if (!strcmp(arg, "-f")) {
		cl->fake = true;
		return 0;
	}
	return fuse_cl_error(cl, "unknown option '%s'", arg);
}

static int fuse_cl_flag(struct fuse_cl *cl, const char *arg)
{
	if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
		cl->show_help = true;
		return 0;
	}
	if (!strcmp(arg, "-V") || !strcmp(arg, "--version")) {
		cl->show_version = true;
		return 0;
	}
	if (cl->helper)
		return fuse_cl_helper_flag(cl, arg);
	if (!strcmp(arg, "-f")) {
		cl->foreground = true;
		return 0;
	}
	if (!strcmp(arg, "-s")) {
		cl->single_thread = true;
		return 0;
	}
	if (!strcmp(arg, "-d") || !strcmp(arg, "--debug")) {
		cl->foreground = true;
		return 1;
	}
	return fuse_cl_error(cl, "unknown option '%s'", arg);
}

static int fuse_cl_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct fuse_cl *cl = data;

	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		if (!cl->image)
			cl->image = arg;
		else if (!cl->mountpoint)
			cl->mountpoint = arg;
		else
			return fuse_cl_error(cl, "too many arguments: '%s'", arg);
		return 0;
	case FUSE_KEY_HELPER_TYPE:
		return 0;
	case FUSE_KEY_HELPER_NS:
		return fuse_cl_error(cl, "mount namespaces (%s) are not supported", arg);
	default:
		return arg[0] == '-' ? fuse_cl_flag(cl, arg) : fuse_cl_mount_option(cl, arg);
	}
}

static int fuse_cl_add_opt(struct fuse_args *args, const char *opt, bool escape)
{
	char *optstr = NULL;
	int ret;

	ret = escape ? fuse_opt_add_opt_escaped(&optstr, opt) : fuse_opt_add_opt(&optstr, opt);
	if (ret == 0)
		ret = fuse_opt_add_arg(args, "-o");
	if (ret == 0)
		ret = fuse_opt_add_arg(args, optstr);
	free(optstr);
	return ret;
}

/*
 * A read-only kernel mount is "ro" too, so the VFS refuses writes itself.
 * fsname is the image's absolute path, as df and mount(8) show for a block
 * device. Permissions: a read-write mount always has the kernel check them
 * (default_permissions), since the library checks none but the sticky and
 * immutable rules, and the mounting user may create files owned by anyone's
 * uid through it otherwise; read-only, allow_other without the checks would
 * hand every file to every user, so default_permissions comes with it, and
 * without allow_other only the mounting user, who can read the image anyway,
 * gets in. Run by mount(8) directly, dev and suid are the defaults as for any
 * other filesystem (and as mount.fuse3 makes them), so both mount paths give
 * the same mount.
 */
static int fuse_cl_default_opts(struct fuse_cl *cl, struct fuse_args *args)
{
	bool rw = !cl->lib.read_only;
	char *fsname = NULL, *abs;
	int ret = fuse_cl_add_opt(args, rw ? "rw" : "ro", false);

	if (ret == 0 && !cl->has_subtype)
		ret = fuse_cl_add_opt(args, "subtype=uf2fs", false);
	if (ret == 0 && cl->helper && !cl->has_nodev)
		ret = fuse_cl_add_opt(args, "dev", false);
	if (ret == 0 && cl->helper && !cl->has_nosuid)
		ret = fuse_cl_add_opt(args, "suid", false);
	/* fakeroot: the mounting user, the only one let in, passes every check as root */
	if (ret == 0 && (cl->allow_other || rw) && !cl->has_default_permissions && !cl->fakeroot)
		ret = fuse_cl_add_opt(args, "default_permissions", false);
	if (ret == 0 && !cl->has_fsname) {
		abs = realpath(cl->image, NULL);
		if (asprintf(&fsname, "fsname=%s", abs ? abs : cl->image) < 0)
			fsname = NULL;
		ret = fsname ? fuse_cl_add_opt(args, fsname, true) : -1;
		free(fsname);
		free(abs);
	}
	return ret;
}

static int fuse_cl_parse(struct fuse_cl *cl, struct fuse_args *args)
{
	const char *base = strrchr(args->argv[0], '/');

	cl->helper = !strncmp(base ? base + 1 : args->argv[0], "mount.", 6);
	cl->clone_fd = true;
	cl->killpriv_v2 = true;
	cl->map_uid = cl->map_gid = -1;
	cl->max_threads = FUSE_DEF_MAX_THREADS;
	cl->max_idle_threads = -1;
	cl->spin_us = FUSE_DEF_SPIN_US;
	cl->spin_pin = true;
	cl->writeback_cache = -1;
	uf2fs_default_options(&cl->lib);
	cl->lib.read_only = true;
	if (fuse_opt_parse(args, cl, fuse_cl_spec, fuse_cl_proc) < 0 || cl->bad)
		return FUSE_EXIT_USAGE;
	if (cl->show_help || cl->show_version)
		return FUSE_EXIT_OK;
	if (cl->fakeroot && cl->allow_other) {
		fprintf(stderr, "uf2fs: fakeroot with allow_other would make every user root in "
			"the image\n");
		return FUSE_EXIT_USAGE;
	}
	if (!cl->image || !cl->mountpoint) {
		fprintf(stderr, "uf2fs mount: missing %s\n"
			"Try 'uf2fs mount --help' for more information.\n",
			cl->image ? "MOUNTPOINT" : "IMAGE and MOUNTPOINT");
		return FUSE_EXIT_USAGE;
	}
	return FUSE_EXIT_OK;
}

/* /// Daemon start-up /// */

/*
 * Fork; the parent waits for the child's one-byte exit status on a pipe and
 * exits with it. The child carries on; *status_fd is where it reports.
 */
static int fuse_daemon_fork(int *status_fd)
{
	int fds[2];
	unsigned char status;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		perror("uf2fs: pipe");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		perror("uf2fs: fork");
		return -1;
	}
	if (pid > 0) {
		close(fds[1]);
		if (read(fds[0], &status, 1) != 1)
			status = FUSE_EXIT_FAIL;
		_exit(status);
	}
	close(fds[0]);
	*status_fd = fds[1];
	setsid();
	return 0;
}

/* Once stderr is /dev/null, shutdown errors go to syslog as well. */
static bool fuse_daemon_detached;

/* The parent exits with status; on success the child detaches from the tty. */
static void fuse_daemon_report(int *status_fd, unsigned char status)
{
	int null;

	if (*status_fd < 0)
		return;
	if (status == FUSE_EXIT_OK) {
		fuse_daemon_detached = true;
		null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
	}
	if (write(*status_fd, &status, 1) != 1)
		status = FUSE_EXIT_FAIL;
	close(*status_fd);
	*status_fd = -1;
}

/* libfuse resolves nothing; /dev/fd/N (a pre-opened /dev/fuse) is kept as is. */
static char *fuse_cl_mountpoint(const char *mountpoint)
{
	char *abs;

	if (!strncmp(mountpoint, "/dev/fd/", 8))
		return strdup(mountpoint);
	abs = realpath(mountpoint, NULL);
	if (!abs)
		fprintf(stderr, "uf2fs: %s: %s\n", mountpoint, strerror(errno));
	return abs;
}

static int fuse_daemon_loop(struct fuse_session *se, const struct fuse_cl *cl)
{
	struct fuse_loop_config *config;
	int ret;

	if (cl->single_thread)
		return fuse_session_loop(se);
	config = fuse_loop_cfg_create();
	if (!config)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(config, cl->clone_fd);
	fuse_loop_cfg_set_max_threads(config, cl->max_threads);
	if (cl->max_idle_threads >= 0)
		fuse_loop_cfg_set_idle_threads(config, cl->max_idle_threads);
	ret = fuse_session_loop_mt(se, config);
	fuse_loop_cfg_destroy(config);
	return ret;
}

/* The final checkpoint; a failure is the daemon's exit status. */
static int fuse_daemon_shutdown(struct fuse_uf2fs *u)
{
	int ret = fuse_uf2fs_shutdown(u);

	if (ret == 0)
		return FUSE_EXIT_OK;
	fprintf(stderr, "uf2fs: %s: final checkpoint failed: %s; changes since the last "
		"checkpoint may be lost\n", u->image, strerror(-ret));
	if (fuse_daemon_detached)
		syslog(LOG_ERR, "uf2fs: %s: final checkpoint failed: %s", u->image,
		       strerror(-ret));
	return FUSE_EXIT_FAIL;
}

/*
 * The library may refuse a read-write mount (a feature it cannot write, an
 * image that needs recovery, ...) with an error, which cli_mount_image
 * prints. Should it instead come up read-only, the kernel mount, already
 * set up read-write, would promise what it cannot keep: refuse too.
 */
static int fuse_daemon_mount_lib(struct fuse_cl *cl, struct fuse_uf2fs *u)
{
	/*
	 * The kernel's page cache already holds what uf2fs serves, unless
	 * direct_io makes uf2fs's cache the only one: a second copy is waste.
	 */
	if (cl->lib.dontcache < 0)
		cl->lib.dontcache = !cl->direct_io;
	/* what an unmount, or a checkpoint, finds dirty stays small */
	if (cl->lib.flusher < 0)
		cl->lib.flusher = 1;
	/* routine notes only where someone watches: -f or -d */
	cl->lib.verbose = cl->foreground;
	if (cli_mount_image(cl->image, &cl->lib, &u->fs) < 0)
		return -1;
	u->mounted_rw = !uf2fs_is_read_only(u->fs);
	if (!cl->lib.read_only && !u->mounted_rw) {
		fprintf(stderr, "uf2fs: %s: cannot mount read-write: the library opened it "
			"read-only\n", cl->image);
		fuse_uf2fs_shutdown(u);
		return -1;
	}
	u->root_ino = uf2fs_root_ino(u->fs);
	u->casefold = uf2fs_casefold_enabled(u->fs);
	return 0;
}

struct fuse_flush {
	struct fuse_session *se;
	const char *mountpoint;
	pthread_t loop_thread;
	atomic_bool done;
};

static void *fuse_flush_worker(void *arg)
{
	struct fuse_flush *f = arg;
	int fd = open(f->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		if (syncfs(fd) < 0)
			perror("uf2fs: syncfs");
		close(fd);
	}
	fuse_session_exit(f->se);
	/*
	 * The loop may be blocked in read(2) on /dev/fuse; the signal handler
	 * libfuse installed interrupts it. Again until it is out, in case a
	 * signal lands just before the read starts.
	 */
	while (!atomic_load(&f->done)) {
		pthread_kill(f->loop_thread, SIGTERM);
		usleep(10000);
	}
	return NULL;
}

/*
 * Stopped by a signal, a read-write mount may still have dirty pages in the
 * kernel (writeback_cache, or a shared writable mmap in any mode), and they
 * reach us only as WRITEs on a live session: libfuse's unmount closes the
 * session first, which would drop them. So serve the session once more,
 * single-threaded, while a helper syncfs()es the mountpoint, then stop.
 */
static void fuse_daemon_flush(struct fuse_session *se, const char *mountpoint)
{
	struct fuse_flush f = {
		.se = se, .mountpoint = mountpoint, .loop_thread = pthread_self(),
	};
	pthread_t worker;

	fuse_session_reset(se);
	fuse_rx_set_lone();	/* no notification that waits for this loop's WRITEs */
	if (pthread_create(&worker, NULL, fuse_flush_worker, &f)) {
		fprintf(stderr, "uf2fs: cannot flush the kernel's dirty pages\n");
		return;
	}
	fuse_session_loop(se);
	atomic_store(&f.done, true);
	pthread_join(worker, NULL);
}

/* Library, then FUSE mount, then report success and serve until unmounted. */
static int fuse_daemon_serve(struct fuse_session *se, struct fuse_cl *cl,
			     struct fuse_uf2fs *u, const char *mountpoint, int *status_fd)
{
	int ret, status;

	if (fuse_daemon_mount_lib(cl, u) < 0)
		return FUSE_EXIT_FAIL;
	ret = FUSE_EXIT_FAIL;
	if (fuse_set_signal_handlers(se) < 0)
		goto out_unmount_lib;
	if (fuse_session_mount(se, mountpoint) < 0)
		goto out_signals;
	if (fuse_killpriv_install(se, u) < 0)
		goto out_unmount;
	/* before the chdir: a relative mountpoint must still resolve */
	fuse_tune_bdi(mountpoint, uf2fs_readahead_bytes(u->fs) >> 10);
	/* Not fatal: it only keeps the daemon from pinning the directory it started in. */
	if (chdir("/") < 0)
		perror("uf2fs: chdir /");
	fuse_daemon_report(status_fd, FUSE_EXIT_OK);
	fuse_rx_setup(cl->spin_us, u->single_thread, cl->spin_pin);
	/* A positive result is the signal (SIGTERM, SIGINT) that ended the loop. */
	ret = fuse_daemon_loop(se, cl);
	if (ret > 0 && u->mounted_rw)
		fuse_daemon_flush(se, mountpoint);
	ret = ret < 0 ? FUSE_EXIT_FAIL : FUSE_EXIT_OK;
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_unmount_lib:
	status = fuse_daemon_shutdown(u);
	return ret == FUSE_EXIT_OK ? status : ret;
}

/*
 * glibc gives each worker thread an arena of its own, which grows by one
 * mprotect(2) per allocation that does not fit: the cache filling with the
 * node blocks of new files (an untar) took two or three system calls per
 * file. One arena that grows by 16 MiB at a time (and keeps as much when
 * it shrinks) makes that one brk(2) per 4000 blocks; the workers serialise
 * on the kernel's requests anyway, so they hardly contend for it.
 */
static void fuse_daemon_malloc_tune(void)
{
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_TOP_PAD, 16 << 20);
}

static int fuse_daemon_start(struct fuse_cl *cl, struct fuse_args *args)
{
	struct fuse_uf2fs u = {
		.image = cl->image,
		.lib_opts = &cl->lib,
		.direct_io = cl->direct_io,
		/*
		 * Default on, but not with direct_io, nor with quota limits:
		 * quota is charged to the caller of a WRITE, and the kernel's
		 * write-back is sent by whoever flushes (its flusher, a later
		 * fsync), not the writer; EDQUOT belongs at write(2) anyway.
		 */
		.writeback_cache = cl->writeback_cache >= 0 ? cl->writeback_cache :
				   !cl->direct_io && !cl->lib.quota_enforce,
		.single_thread = cl->single_thread || cl->max_threads <= 1,
		.want_killpriv_v2 = cl->killpriv_v2,
		.strictatime = cl->lib.atime_mode == 2,
		/*
		 * FUSE_POSIX_ACL turns default_permissions on, which a read-only
		 * mount without allow_other leaves off (see fuse_cl_default_opts):
		 * ACLs are enforced wherever the kernel checks permissions anyway.
		 */
		.want_acl = !cl->lib.noacl && (!cl->lib.read_only || cl->allow_other ||
					       cl->has_default_permissions) &&
			    (!cl->fakeroot || cl->has_default_permissions),
		.timeout = cl->direct_io ? FUSE_DIRECT_TIMEOUT : FUSE_CACHED_TIMEOUT,
		.shutdown_lock = PTHREAD_MUTEX_INITIALIZER,
	};
	struct fuse_session *se;
	char *mountpoint;
	int status_fd = -1;
	int ret = FUSE_EXIT_FAIL;

	fuse_daemon_malloc_tune();
	mountpoint = fuse_cl_mountpoint(cl->mountpoint);
	if (!mountpoint)
		return FUSE_EXIT_FAIL;
	u.image_abs = realpath(cl->image, NULL);
	if (!u.image_abs && uf2fs_image_kind(cl->image, &cl->lib) == UF2FS_IMAGE_NBD)
		u.image_abs = strdup(cl->image);	/* a URI: `uf2fs umount` reopens it */
	fuse_idmap_init(cl->fakeroot, cl->map_uid, cl->map_gid);
	u.conn_opts = fuse_parse_conn_info_opts(args);
	if (!u.conn_opts || fuse_cl_default_opts(cl, args) < 0)
		goto out;
	/* Validates the remaining options (libfuse prints what it rejects). */
	se = fuse_session_new(args, &fuse_uf2fs_ops, sizeof(fuse_uf2fs_ops), &u);
	if (!se) {
		ret = FUSE_EXIT_USAGE;
		goto out;
	}
	u.se = se;
	if (!cl->foreground && fuse_daemon_fork(&status_fd) < 0)
		goto out_session;
	ret = fuse_daemon_serve(se, cl, &u, mountpoint, &status_fd);
	fuse_daemon_report(&status_fd, ret);
out_session:
	fuse_session_destroy(se);
out:
	free(u.conn_opts);
	free((char *)u.image_abs);
	free(mountpoint);
	return ret;
}

/*
 * mount -o remount,ro (or rw) runs the mount helper again, which would start
 * a second daemon on the image. The daemon that serves the mount stays; the
 * kernel's remount flips its read-only state (the VFS refuses writes, and
 * FUSE syncs on the way to ro).
 */
static int fuse_remount(struct fuse_cl *cl)
{
	unsigned long flags = MS_REMOUNT;

	if (cl->lib.read_only)
		flags |= MS_RDONLY;
	if (cl->has_nosuid)
		flags |= MS_NOSUID;
	if (cl->has_nodev)
		flags |= MS_NODEV;
	if (mount(NULL, cl->mountpoint, NULL, flags, NULL) < 0) {
		fprintf(stderr, "uf2fs: remount of %s: %s\n", cl->mountpoint, strerror(errno));
		return FUSE_EXIT_FAIL;
	}
	return FUSE_EXIT_OK;
}

int uf2fs_fuse_main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cl cl = { 0 };
	int ret;

	ret = fuse_cl_parse(&cl, &args);
	if (ret == FUSE_EXIT_OK && cl.show_help)
		fuse_cl_help();
	else if (ret == FUSE_EXIT_OK && cl.show_version)
		printf("uf2fs %s\nFUSE library version %s\n", UF2FS_VERSION, fuse_pkgversion());
	else if (ret == FUSE_EXIT_OK && cl.remount && !cl.fake)
		ret = fuse_remount(&cl);
	else if (ret == FUSE_EXIT_OK && !cl.fake)
		ret = fuse_daemon_start(&cl, &args);
	fuse_opt_free_args(&args);
	return ret;
}
