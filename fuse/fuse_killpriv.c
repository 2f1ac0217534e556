// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE_HANDLE_KILLPRIV_V2 on libfuse 3.14, which predates it.
 *
 * Every write(2) through the kernel's page cache first asks the daemon for
 * security.capability (file_remove_privs -> cap_inode_need_killpriv), one
 * GETXATTR round trip per call, because FUSE superblocks lack SB_NOSEC. When
 * the server takes HANDLE_KILLPRIV_V2 the kernel sets SB_NOSEC: the first
 * write to an inode without setuid, setgid or capabilities latches S_NOSEC
 * and later writes skip the probe. In exchange the server clears setuid and
 * setgid itself: on WRITE carrying FUSE_WRITE_KILL_SUIDGID, on SETATTR with
 * FATTR_KILL_SUIDGID (truncate), on OPEN with FUSE_OPEN_KILL_SUIDGID
 * (O_TRUNC), and on every chown of a non-directory. The kernel decides the
 * flags from the caller's CAP_FSETID, which the daemon cannot see.
 * Capabilities stay the VFS's (notify_change's ATTR_KILL_PRIV).
 *
 * libfuse 3.14 neither offers the flag in its INIT reply nor passes the two
 * request flags on. Its custom-I/O hook lets us see the raw bytes: the read
 * side notes the kill flag of the request a worker thread is about to
 * process (the same thread then runs the handler), and the write side adds
 * the flag to the INIT reply when the kernel offered it.
 */
#include <linux/fuse.h>
#include <stddef.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse_priv.h"

/* The request this worker thread read last: the one it is now serving. */
static _Thread_local bool kp_request_kill;

bool fuse_killpriv_request_flag(void)
{
	return kp_request_kill;
}

static bool kp_flag_of(const struct fuse_in_header *h, const void *arg, size_t len)
{
	switch (h->opcode) {
	case FUSE_WRITE:
		return len >= sizeof(struct fuse_write_in) &&
		       (((const struct fuse_write_in *)arg)->write_flags & FUSE_WRITE_KILL_SUIDGID);
	case FUSE_OPEN:
		return len >= sizeof(struct fuse_open_in) &&
		       (((const struct fuse_open_in *)arg)->open_flags & FUSE_OPEN_KILL_SUIDGID);
	default:
		return false;
	}
}

static void kp_note_init(struct fuse_uf2fs *u, const struct fuse_in_header *h, const void *arg,
			 size_t len)
{
	const struct fuse_init_in *in = arg;

	/* flags is the second word of every version of fuse_init_in */
	if (len < offsetof(struct fuse_init_in, flags) + sizeof(in->flags))
		return;
	if (u->want_killpriv_v2 && in->major == 7 && in->minor >= 33 &&
	    (in->flags & FUSE_HANDLE_KILLPRIV_V2))
		u->killpriv_init_unique = h->unique;
}

static ssize_t kp_read(int fd, void *buf, size_t buf_len, void *userdata)
{
	ssize_t n = fuse_rx_read(fd, buf, buf_len);
	const struct fuse_in_header *h = buf;
	size_t len;

	kp_request_kill = false;
	if (n < (ssize_t)sizeof(*h))
		return n;
	len = (size_t)n - sizeof(*h);
	if (h->opcode == FUSE_INIT)
		kp_note_init(userdata, h, h + 1, len);
	else
		kp_request_kill = kp_flag_of(h, h + 1, len);
	return n;
}

static ssize_t kp_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct fuse_uf2fs *u = userdata;
	struct fuse_out_header *out = iov[0].iov_base;

	if (u->killpriv_init_unique && count >= 2 && iov[0].iov_len >= sizeof(*out) &&
	    out->unique == u->killpriv_init_unique && out->error == 0 &&
	    iov[1].iov_len >= offsetof(struct fuse_init_out, flags) + sizeof(uint32_t)) {
		struct fuse_init_out *init = iov[1].iov_base;

		init->flags |= FUSE_HANDLE_KILLPRIV_V2;
		u->killpriv_v2 = true;
		u->killpriv_init_unique = 0;
	}
	return writev(fd, iov, count);
}

int fuse_killpriv_install(struct fuse_session *se, struct fuse_uf2fs *u)
{
	static const struct fuse_custom_io io = { .read = kp_read, .writev = kp_writev };

	/* installed either way: direct_io writes carry the kill flag without V2 */
	return fuse_session_custom_io(se, &io, fuse_session_fd(se));
}
