// SPDX-License-Identifier: GPL-2.0
/*
 * `uf2fs quota` and `uf2fs setquota`: repquota and setquota for the hidden
 * quota files of quota_ino images (mkfs.f2fs -O quota / -g android), since
 * FUSE has no quotactl. Both work on an image (through the library) or on a
 * live mount (through the private UF2FS_IOC_GETNEXTQUOTA / SETQUOTA ioctls
 * on the mount's root), with numeric ids: an image's owners are not the
 * host's users.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char *const type_name[3] = { "user", "group", "project" };
static const char *const type_col[3] = { "User", "Group", "Project" };

/* Where the quota comes from: an image mounted here, or a live mount's fd. */
struct qsrc {
	struct uf2fs *fs;
	int fd;
};

static int qsrc_next(struct qsrc *s, int type, uint32_t id, struct uf2fs_dquot *d,
		     uint32_t *bgrace, uint32_t *igrace)
{
	struct uf2fs_ioc_quota q = { .type = (uint32_t)type, .id = id };

	if (s->fs)
		return uf2fs_quota_getnext(s->fs, type, id, d, bgrace, igrace);
	if (ioctl(s->fd, UF2FS_IOC_GETNEXTQUOTA, &q) < 0)
		return -errno;
	*bgrace = q.bgrace;
	*igrace = q.igrace;
	if (!(q.flags & UF2FS_IOC_QUOTA_FOUND))
		return -ENOENT;
	*d = (struct uf2fs_dquot){ .id = q.id, .space = q.space, .inodes = q.inodes,
				   .bsoft = q.bsoft, .bhard = q.bhard, .isoft = q.isoft,
				   .ihard = q.ihard, .btime = q.btime, .itime = q.itime };
	return 0;
}

static int qsrc_set(struct qsrc *s, int type, uint32_t id, const struct uf2fs_dquot *lim,
		    uint32_t bgrace, uint32_t igrace, unsigned int mask)
{
	struct uf2fs_ioc_quota q = { .type = (uint32_t)type, .id = id, .flags = mask,
				     .bgrace = bgrace, .igrace = igrace, .bsoft = lim->bsoft,
				     .bhard = lim->bhard, .isoft = lim->isoft,
				     .ihard = lim->ihard };

	if (s->fs)
		return uf2fs_quota_set(s->fs, type, id, lim, bgrace, igrace, mask);
	return ioctl(s->fd, UF2FS_IOC_SETQUOTA, &q) < 0 ? -errno : 0;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int qsrc_open(const char *target, struct uf2fs_options *opts, bool rw, struct qsrc *s)
{
	s->fs = NULL;
	s->fd = -1;
	if (is_dir(target)) {
		s->fd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (s->fd < 0) {
			cli_path_error(target, -errno);
			return -1;
		}
		return 0;
	}
	if (rw ? cli_mount_rw(target, opts, &s->fs) : cli_mount_image(target, opts, &s->fs))
		return -1;
	return 0;
}

static int qsrc_close(struct qsrc *s, const char *target, bool rw, int status)
{
	if (s->fd >= 0)
		close(s->fd);
	if (!s->fs)
		return status;
	if (rw)
		return cli_unmount_rw(s->fs, target, status);
	uf2fs_unmount(s->fs);
	return status;
}

static void fmt_grace(char *buf, size_t len, int64_t until)
{
	int64_t left = until - time(NULL);

	if (!until)
		snprintf(buf, len, "%s", "");
	else if (left <= 0)
		snprintf(buf, len, "none");
	else if (left >= 86400)
		snprintf(buf, len, "%lddays", (long)((left + 86399) / 86400));
	else
		snprintf(buf, len, "%02ld:%02ld", (long)(left / 3600), (long)(left % 3600 / 60));
}

static void fmt_period(char *buf, size_t len, uint32_t secs)
{
	if (secs % 86400 == 0)
		snprintf(buf, len, "%udays", secs / 86400);
	else
		snprintf(buf, len, "%02u:%02u", secs / 3600, secs % 3600 / 60);
}

/* repquota's layout, usage in KiB; one line per id. 1 when the type is kept. */
static int report_type(struct qsrc *s, int type, const char *target)
{
	struct uf2fs_dquot d;
	uint32_t bgrace = 0, igrace = 0, id = 0;
	char bg[32], ig[32];
	bool header = false;
	int ret;

	for (;;) {
		ret = qsrc_next(s, type, id, &d, &bgrace, &igrace);
		if (ret == -ENODATA)
			return 0;	/* the image keeps no quota of this type */
		if (!header && (ret == 0 || ret == -ENOENT)) {
			fmt_period(bg, sizeof(bg), bgrace);
			fmt_period(ig, sizeof(ig), igrace);
			printf("*** Report for %s quotas on %s\n", type_name[type], target);
			printf("Block grace time: %s; Inode grace time: %s\n", bg, ig);
			printf("%-24s%s\n", "", "Block limits                File limits");
			printf("%-12s%8s%8s%8s%7s%9s%6s%6s%7s\n", type_col[type], "used", "soft",
			       "hard", "grace", "used", "soft", "hard", "grace");
			printf("----------------------------------------------------------------------\n");
			header = true;
		}
		if (ret == -ENOENT)
			break;
		if (ret < 0)
			return ret;
		fmt_grace(bg, sizeof(bg), d.btime);
		fmt_grace(ig, sizeof(ig), d.itime);
		printf("#%-9u %c%c%8lld%8llu%8llu%7s%9lld%6llu%6llu%7s\n", d.id,
		       d.bsoft && (uint64_t)d.space > d.bsoft ? '+' : '-',
		       d.isoft && (uint64_t)d.inodes > d.isoft ? '+' : '-',
		       (long long)((d.space + 1023) / 1024),
		       (unsigned long long)(d.bsoft / 1024), (unsigned long long)(d.bhard / 1024),
		       bg, (long long)d.inodes, (unsigned long long)d.isoft,
		       (unsigned long long)d.ihard, ig);
		if (d.id == UINT32_MAX)
			break;
		id = d.id + 1;
	}
	printf("\n");
	return 1;
}

static int parse_type(int c, int *type)
{
	*type = c == 'g' ? UF2FS_GRPQUOTA : c == 'P' ? UF2FS_PRJQUOTA : UF2FS_USRQUOTA;
	return 0;
}

static void cmd_quota_help(void)
{
	printf("Usage: uf2fs quota [-u] [-g] [-P] [-o OPTIONS] IMAGE|MOUNTPOINT\n"
	       "\n"
	       "Report disk usage and limits per user, group and project, as repquota\n"
	       "does, from the quota files of an image made with quota_ino (mkfs.f2fs\n"
	       "-O quota, -g android), or of a live uf2fs mount. Ids are numeric; space is\n"
	       "in KiB. Without -u/-g/-P every type the image keeps is shown.\n"
	       "\n"
	       "  -u, -g, -P   user, group, project quota only (may be combined)\n"
	       "  -o OPTIONS   library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help   show this help\n");
}

int cmd_quota(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct uf2fs_options opts;
	bool want[3] = { false, false, false }, any = false;
	struct qsrc s;
	int c, ret = 0, type, shown = 0;

	uf2fs_default_options(&opts);
	while ((c = getopt_long(argc, argv, "hugPo:", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_quota_help();
			return CLI_EXIT_OK;
		}
		if (c == 'u' || c == 'g' || c == 'P') {
			parse_type(c, &type);
			want[type] = any = true;
			continue;
		}
		ret = cli_common_option("quota", c, optarg, &opts);
		if (ret)
			return ret;
	}
	if (argc - optind != 1)
		return cli_usage_error("quota", argc == optind ? "missing IMAGE or MOUNTPOINT" :
				       "too many arguments");
	if (qsrc_open(argv[optind], &opts, false, &s))
		return CLI_EXIT_FAIL;
	for (type = 0; type < 3 && ret >= 0; type++) {
		if (!any || want[type]) {
			ret = report_type(&s, type, argv[optind]);
			shown += ret > 0;
		}
	}
	if (ret > 0)
		ret = 0;
	if (!ret && !shown) {
		cli_error("%s: no %squota files (mkfs.f2fs -O quota[,project_quota])",
			  argv[optind], any ? "such " : "");
		ret = -ENODATA;
	} else if (ret == -ENOTTY || ret == -EINVAL)
		cli_error("%s: not a uf2fs mount", argv[optind]);
	else if (ret < 0 && ret != -ENODATA)
		cli_path_error(argv[optind], ret);
	ret = qsrc_close(&s, argv[optind], false, ret ? CLI_EXIT_FAIL : CLI_EXIT_OK);
	return fflush(stdout) ? CLI_EXIT_FAIL : ret;
}

static void cmd_setquota_help(void)
{
	printf("Usage: uf2fs setquota [-u|-g|-P] [-o OPTIONS] ID BSOFT BHARD ISOFT IHARD "
	       "IMAGE|MOUNTPOINT\n"
	       "       uf2fs setquota [-u|-g|-P] -t BGRACE IGRACE IMAGE|MOUNTPOINT\n"
	       "\n"
	       "Set the limits of a user (default), group or project id, as setquota(8)\n"
	       "does: block limits in KiB (a K/M/G/T suffix is also taken), inode limits\n"
	       "as counts, 0 for none. With -t, set the type's grace periods in seconds.\n"
	       "On a live mount (as root) the change goes to the quota files at the next\n"
	       "checkpoint; on an image at once. Limits are enforced only on mounts with\n"
	       "usrquota, grpquota or prjquota (accounting alone otherwise, as Linux).\n"
	       "\n"
	       "  -u, -g, -P   user, group or project quota\n"
	       "  -t           set grace times instead of limits\n"
	       "  -o OPTIONS   library options, comma-separated:\n"
	       CLI_LIB_OPTS_HELP
	       "  -h, --help   show this help\n");
}

/* A block limit: KiB by default, or a size with a suffix (bytes). */
static int parse_blimit(const char *str, uint64_t *bytes)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(str, &end, 10);
	if (!errno && end != str && !*end) {
		*bytes = (uint64_t)v * 1024;
		return 0;
	}
	return cli_parse_size(str, bytes);
}

static int parse_count(const char *str, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(str, &end, 10);
	if (errno || end == str || *end || str[0] == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

int cmd_setquota(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct uf2fs_options opts;
	struct uf2fs_dquot lim = { 0 };
	uint64_t id = 0, bg = 0, ig = 0;
	bool grace = false;
	int c, ret, type = UF2FS_USRQUOTA, nargs;
	const char *target;
	struct qsrc s;

	uf2fs_default_options(&opts);
	while ((c = getopt_long(argc, argv, "hugPto:", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_setquota_help();
			return CLI_EXIT_OK;
		}
		if (c == 'u' || c == 'g' || c == 'P') {
			parse_type(c, &type);
			continue;
		}
		if (c == 't') {
			grace = true;
			continue;
		}
		ret = cli_common_option("setquota", c, optarg, &opts);
		if (ret)
			return ret;
	}
	nargs = argc - optind;
	if (nargs != (grace ? 3 : 6))
		return cli_usage_error("setquota", "expected %s", grace ?
				       "BGRACE IGRACE IMAGE|MOUNTPOINT" :
				       "ID BSOFT BHARD ISOFT IHARD IMAGE|MOUNTPOINT");
	if (grace) {
		if (parse_count(argv[optind], &bg) || parse_count(argv[optind + 1], &ig) ||
		    bg > UINT32_MAX || ig > UINT32_MAX)
			return cli_usage_error("setquota", "bad grace time");
	} else if (parse_count(argv[optind], &id) || id > UINT32_MAX ||
		   parse_blimit(argv[optind + 1], &lim.bsoft) ||
		   parse_blimit(argv[optind + 2], &lim.bhard) ||
		   parse_count(argv[optind + 3], &lim.isoft) ||
		   parse_count(argv[optind + 4], &lim.ihard)) {
		return cli_usage_error("setquota", "bad id or limit");
	}
	target = argv[argc - 1];
	if (qsrc_open(target, &opts, true, &s))
		return CLI_EXIT_FAIL;
	ret = qsrc_set(&s, type, (uint32_t)id, &lim, (uint32_t)bg, (uint32_t)ig,
		       grace ? UF2FS_QSET_BGRACE | UF2FS_QSET_IGRACE :
			       UF2FS_QSET_BLIMITS | UF2FS_QSET_ILIMITS);
	if (ret == -ENODATA)
		cli_error("%s: the image keeps no %s quota (mkfs.f2fs -O quota%s)", target,
			  type_name[type], type == UF2FS_PRJQUOTA ? ",project_quota" : "");
	else if (ret == -ENOTTY)
		cli_error("%s: not a uf2fs mount", target);
	else if (ret < 0)
		cli_path_error(target, ret);
	return qsrc_close(&s, target, true, ret ? CLI_EXIT_FAIL : CLI_EXIT_OK);
}
