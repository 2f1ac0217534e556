// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs umount MNT`, also run by umount(8) as /sbin/umount.fuse.uf2fs:
 * unmount and return only once the data is on the image.
 *
 * umount(2) of a /dev/fuse mount returns as soon as the kernel lets go; the
 * daemon learns of it afterwards and only then writes its final checkpoint
 * and exits, which releases the image. So, before unmounting, the command
 * asks the daemon (UF2FS_IOC_MOUNT_INFO, fuse/fuse_umount.c) for its pid, the
 * image and the checkpoint version on it now, and takes a pidfd on that pid
 * (checked again with a second ioctl, so a recycled pid cannot fool it). It
 * unmounts (umount2 as root, fusermount3 -u otherwise), waits for the
 * process to exit, and then reads the image's checkpoint back: a read-write
 * mount must have left a newer checkpoint that is an unmount's. An image on
 * which the daemon died or failed its checkpoint fails that test, whatever
 * the daemon managed to say: this checks what is on the image, not what
 * anyone reports. The daemon's exit is also when its image lock goes, so the
 * image is free for fsck or the next mount when this returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define UMOUNT_MIN(a, b) ((a) < (b) ? (a) : (b))

struct umount_req {
	const char *mnt;
	bool lazy;
	bool force;
	bool verbose;
	bool helper;		/* run as umount.fuse.uf2fs by umount(8) */
	unsigned int timeout;	/* seconds to wait for the daemon; 0: as long as it takes */
};

static void cmd_umount_help(void)
{
	printf("Usage: uf2fs umount [-l] [-f] [-v] [--timeout=S] MOUNTPOINT\n"
	       "\n"
	       "Unmount a uf2fs mount and wait until its daemon has written the final\n"
	       "checkpoint and released the image; then check that the image holds it.\n"
	       "Exits 1 if the daemon died or its checkpoint did not reach the image.\n"
	       "After make install, umount(8) runs this as umount.fuse.uf2fs.\n"
	       "\n"
	       "  -l, --lazy      detach now (umount -l); the daemon finishes when the\n"
	       "                  last file is closed: no waiting, no check\n"
	       "  -f, --force     abort the FUSE connection (umount -f; root), then wait\n"
	       "  -v, --verbose   say what happens\n"
	       "      --timeout=S give up waiting after S seconds (exit 1)\n"
	       "  -h, --help      show this help\n");
}

/* The info ioctl on the mount; the descriptor is closed before returning. */
static int umount_query(const char *mnt, struct uf2fs_mount_info *info)
{
	int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_NOCTTY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	memset(info, 0, sizeof(*info));
	if (ioctl(fd, UF2FS_IOC_MOUNT_INFO, info) < 0)
		ret = -errno;
	close(fd);
	if (!ret && (info->version != 2 || info->pid <= 0))
		ret = -EPROTO;
	return ret;
}

static int umount_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return syscall(SYS_pidfd_open, pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* fusermount3 -u [-z] MNT, as the owner of a user mount must. */
static int umount_fusermount(const struct umount_req *r)
{
	const char *argv[5] = { "fusermount3", "-u", NULL, NULL, NULL };
	int i = 2, st;
	pid_t pid;

	if (r->lazy)
		argv[i++] = "-z";
	argv[i] = r->mnt;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "uf2fs: fusermount3: %s\n", strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EPERM;
}

static int umount_kernel(const struct umount_req *r)
{
	int flags = (r->lazy ? MNT_DETACH : 0) | (r->force ? MNT_FORCE : 0);

	/* a user may only ask fusermount3, which knows no force */
	if (geteuid() != 0)
		return umount_fusermount(r);
	if (umount2(r->mnt, flags) < 0) {
		int err = errno;

		cli_error("%s: %s", r->mnt, err == EBUSY ? "target is busy" : strerror(err));
		return -err;
	}
	return 0;
}

static double umount_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Until the daemon has exited; pidfd, or kill(pid, 0) where there is none. */
static int umount_wait(const struct umount_req *r, pid_t pid, int pidfd)
{
	double start = umount_now();
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	for (;;) {
		double left = r->timeout ? r->timeout - (umount_now() - start) : 1.0;

		if (left <= 0)
			return -ETIMEDOUT;
		if (pidfd >= 0) {
			int n = poll(&p, 1, (int)(UMOUNT_MIN(left, 1.0) * 1000) + 1);

			if (n > 0)
				return 0;
			if (n < 0 && errno != EINTR)
				return -errno;
		} else {
			if (kill(pid, 0) < 0 && errno == ESRCH)
				return 0;
			usleep(20000);
		}
	}
}

/*
 * After the daemon's exit: the image's checkpoint must be newer than the one
 * it had before the unmount, and an unmount's.
 */
static int umount_check_image(const struct umount_req *r, const struct uf2fs_mount_info *info)
{
	struct uf2fs_options opts;
	struct uf2fs *fs = NULL;
	struct stat st;
	uint64_t ver;
	bool clean;
	int ret;

	uf2fs_default_options(&opts);
	/* as the daemon opened it: a VM disk (maybe in an export), a partition, TLS */
	opts.image_format = info->format[0] ? info->format : NULL;
	opts.partition = info->partition[0] ? info->partition : NULL;
	opts.tls_certificates = info->tls_certificates[0] ? info->tls_certificates : NULL;
	opts.tls_psk_file = info->tls_psk_file[0] ? info->tls_psk_file : NULL;
	opts.tls_username = info->tls_username[0] ? info->tls_username : NULL;
	/* an NBD URI names no file: its server answers for what it serves */
	if (uf2fs_image_kind(info->image, &opts) != UF2FS_IMAGE_NBD &&
	    (stat(info->image, &st) < 0 || st.st_dev != info->image_dev ||
	     st.st_ino != info->image_ino)) {
		cli_error("%s: cannot check the final checkpoint: %s is gone or replaced",
			  r->mnt, info->image);
		return -ENOENT;
	}
	opts.device = info->image;
	opts.read_only = true;
	opts.quiet = true;
	ret = uf2fs_mount(&opts, &fs);
	if (ret) {
		cli_error("%s: cannot check the final checkpoint: %s: %s", r->mnt, info->image,
			  uf2fs_last_error(NULL)[0] ? uf2fs_last_error(NULL) : strerror(-ret));
		return ret;
	}
	ver = uf2fs_checkpoint_version(fs, &clean);
	uf2fs_unmount(fs);
	if (ver > info->cp_ver && clean) {
		if (r->verbose)
			fprintf(stderr, "uf2fs: %s: final checkpoint %llu is on %s\n", r->mnt,
				(unsigned long long)ver, info->image);
		return 0;
	}
	cli_error("%s: the daemon did not write its final checkpoint: %s keeps checkpoint "
		  "%llu%s; changes since are lost (see syslog)", r->mnt, info->image,
		  (unsigned long long)ver, clean ? "" : " (not a clean unmount)");
	return -EIO;
}

/* The daemon is gone already: unmount what is left, and say so. */
static int umount_dead(const struct umount_req *r, int err)
{
	if (err == -ENOTCONN || err == -ECONNABORTED) {
		cli_error("%s: the uf2fs daemon is not running: its changes since the last "
			  "checkpoint are lost", r->mnt);
		umount_kernel(r);
	} else if (err == -ENOTTY || err == -EINVAL || err == -ENOSYS || err == -EPROTO) {
		cli_error("%s: not a uf2fs mount", r->mnt);
	} else {
		cli_path_error(r->mnt, err);
	}
	return CLI_EXIT_FAIL;
}

static int umount_run(const struct umount_req *r)
{
	struct uf2fs_mount_info info, again;
	double start;
	int pidfd, ret;

	ret = umount_query(r->mnt, &info);
	if (ret)
		return umount_dead(r, ret);
	pidfd = umount_pidfd(info.pid);
	/* the pid was the daemon's when it answered; if it still is, the pidfd is its */
	ret = umount_query(r->mnt, &again);
	if (ret || again.pid != info.pid) {
		if (pidfd >= 0)
			close(pidfd);
		return umount_dead(r, ret ? ret : -EAGAIN);
	}
	if (r->verbose)
		fprintf(stderr, "uf2fs: %s: daemon %d, image %s, %s\n", r->mnt, info.pid,
			info.image, info.rw ? "read-write" : "read-only");
	ret = umount_kernel(r);
	if (ret || r->lazy) {
		if (pidfd >= 0)
			close(pidfd);
		return ret ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	}
	start = umount_now();
	ret = umount_wait(r, info.pid, pidfd);
	if (pidfd >= 0)
		close(pidfd);
	if (ret) {
		cli_error("%s: unmounted, but daemon %d is still writing after %u s",
			  r->mnt, info.pid, r->timeout);
		return CLI_EXIT_FAIL;
	}
	if (r->verbose)
		fprintf(stderr, "uf2fs: %s: daemon exited %.2f s after the unmount\n", r->mnt,
			umount_now() - start);
	if (info.rw && umount_check_image(r, &info))
		return CLI_EXIT_FAIL;
	return CLI_EXIT_OK;
}

static int umount_parse_timeout(const char *val, unsigned int *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(val, &end, 10);
	if (errno || end == val || *end || *val == '-' || n > 86400)
		return -EINVAL;
	*out = n;
	return 0;
}

int cmd_umount(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "lazy", no_argument, NULL, 'l' },
		{ "force", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct umount_req r = { 0 };
	int c;

	while ((c = getopt_long(argc, argv, "lfvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': r.lazy = true; break;
		case 'f': r.force = true; break;
		case 'v': r.verbose = true; break;
		case 'T':
			if (umount_parse_timeout(optarg, &r.timeout))
				return cli_usage_error("umount", "invalid timeout '%s'", optarg);
			break;
		case 'h':
			cmd_umount_help();
			return CLI_EXIT_OK;
		default:
			fprintf(stderr, "Try 'uf2fs umount --help' for more information.\n");
			return CLI_EXIT_USAGE;
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("umount", argc == optind ? "missing MOUNTPOINT" :
				       "too many arguments");
	r.mnt = argv[optind];
	return umount_run(&r);
}

/*
 * umount(8) runs "umount.fuse.uf2fs DIR [-nlfvr] [-t TYPE] [-N NS]" (libmount's
 * exec_helper), as the calling user, with the mountpoint first.
 */
int cmd_umount_helper(int argc, char **argv)
{
	struct umount_req r = { .helper = true };
	int c;

	if (argc < 2) {
		fprintf(stderr, "Usage: umount.fuse.uf2fs MOUNTPOINT [-nlfvr] [-t TYPE]\n");
		return CLI_EXIT_USAGE;
	}
	r.mnt = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "nlfvrt:N:")) != -1) {
		switch (c) {
		case 'n': case 'r': case 't': break;
		case 'l': r.lazy = true; break;
		case 'f': r.force = true; break;
		case 'v': r.verbose = true; break;
		case 'N':
			cli_error("mount namespaces (%s) are not supported", optarg);
			return CLI_EXIT_FAIL;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	return umount_run(&r);
}
