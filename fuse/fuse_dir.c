// SPDX-License-Identifier: GPL-2.0
/*
 * Directory ops: opendir, readdir, readdirplus, releasedir. The library walks
 * entries from a position; each FUSE offset is the library position of the
 * next entry, so a reply can stop at any entry and the next request resumes
 * there.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuse_priv.h"

struct fuse_dirbuf {
	fuse_req_t req;
	struct fuse_uf2fs *u;
	char *buf;
	size_t size, used;
	bool plus;
	bool uncached;		/* entries get no dentry timeout (fuse_uf2fs_cf_uncached) */
};

static bool fuse_is_dot_or_dotdot(const char *name, size_t len)
{
	return name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'));
}

/*
 * A readdirplus entry with node id 0 carries only the name and type: the
 * kernel neither counts a lookup for it nor caches a dentry, and a later
 * LOOKUP gets the real answer (or error). That is how "." and ".." go, and
 * entries whose inode cannot be read.
 */
static void fuse_dirent_plus_entry(struct fuse_dirbuf *d, const char *name, size_t len,
				   uint32_t ino, unsigned int dtype,
				   const struct uf2fs_attr *attr, struct fuse_entry_param *e)
{
	if (fuse_is_dot_or_dotdot(name, len) || !attr ||
	    fuse_uf2fs_entry_attr(d->u, attr, e) < 0) {
		memset(e, 0, sizeof(*e));
		e->attr.st_ino = ino;
		e->attr.st_mode = DTTOIF(dtype);
	} else if (d->uncached) {
		e->entry_timeout = 0;
	}
}

static int fuse_dir_fill(void *arg, const char *name, size_t len, uint32_t ino,
			 unsigned int dtype, uint64_t next_pos, const struct uf2fs_attr *attr)
{
	struct fuse_dirbuf *d = arg;
	char cname[FUSE_UF2FS_NAME_MAX + 1];
	struct fuse_entry_param e;
	size_t room = d->size - d->used;
	size_t need;

	/* f2fs names fit in 255 bytes; a longer one is corruption, not an entry. */
	if (len > FUSE_UF2FS_NAME_MAX || len == 0)
		return 0;
	memcpy(cname, name, len);
	cname[len] = '\0';
	if (d->plus) {
		fuse_dirent_plus_entry(d, name, len, ino, dtype, attr, &e);
		need = fuse_add_direntry_plus(d->req, d->buf + d->used, room, cname, &e,
					      next_pos);
	} else {
		memset(&e, 0, sizeof(e));
		e.attr.st_ino = ino;
		e.attr.st_mode = DTTOIF(dtype);
		need = fuse_add_direntry(d->req, d->buf + d->used, room, cname, &e.attr,
					 next_pos);
	}
	/* Not added when it does not fit, so no lookup is counted for it either. */
	if (need > room)
		return 1;
	d->used += need;
	return 0;
}

static int fuse_dir_fill_names(void *arg, const char *name, size_t len, uint32_t ino,
			       unsigned int dtype, uint64_t next_pos)
{
	return fuse_dir_fill(arg, name, len, ino, dtype, next_pos, NULL);
}

static void fuse_do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct fuse_dirbuf d = {
		.req = req, .u = fuse_uf2fs_of(req), .size = size, .plus = plus,
	};
	int ret;

	d.buf = malloc(size);
	if (!d.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (plus)
		d.uncached = fuse_uf2fs_cf_uncached(d.u, fuse_ino_to_f2fs(d.u, ino));
	ret = plus ? uf2fs_readdir_plus(d.u->fs, fuse_ino_to_f2fs(d.u, ino), off, fuse_dir_fill, &d)
		   : uf2fs_readdir(d.u->fs, fuse_ino_to_f2fs(d.u, ino), off, fuse_dir_fill_names, &d);
	/* Entries already packed go out; the error comes back at the next offset. */
	if (ret < 0 && d.used == 0)
		fuse_op_error(req, ret);
	else
		fuse_reply_buf(req, d.buf, d.used);
	free(d.buf);
}

/*
 * An encrypted directory whose key the mount lacks lists no-key names. The
 * kernel must not keep those: `uf2fs fscrypt add_key` cannot tell which
 * directories were listed, and a cached listing would go on showing no-key
 * names after the key came (Linux drops no-key dentries once the key is
 * added). Listings with the key are cached; remove_key invalidates them.
 */
static bool fuse_dir_nokey(struct fuse_uf2fs *u, uint32_t f2fs_ino)
{
	struct uf2fs_fscrypt_policy p;

	if (uf2fs_get_policy(u->fs, f2fs_ino, &p))
		return false;
	return uf2fs_key_status(u->fs, p.key_spec, p.version == 1 ? 8 : 16) != 1;
}

/*
 * Only this mount changes the image, so the kernel may keep a directory's
 * entries in its page cache across opens (FOPEN_CACHE_DIR + FOPEN_KEEP_CACHE),
 * unless direct_io asks that everything be served by uf2fs. On a read-write
 * mount the kernel drops that cache itself when its own create, unlink or
 * rename changes the directory (fuse_dir_changed bumps i_version, which
 * readdir checks at offset 0). Not for no-key listings (fuse_dir_nokey).
 */
void fuse_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);
	uint32_t f2fs_ino = fuse_ino_to_f2fs(u, ino);
	/*
	 * An open directory is pinned like an open file: removed while open,
	 * it becomes an orphan, and fstat(2) on it still answers (nlink 0)
	 * until releasedir.
	 */
	int ret = uf2fs_open(u->fs, f2fs_ino, O_RDONLY | O_DIRECTORY);

	if (ret < 0) {
		fuse_op_error(req, ret);
		return;
	}
	fi->cache_readdir = !u->direct_io && !fuse_dir_nokey(u, f2fs_ino);
	fi->keep_cache = fi->cache_readdir;
	/* The open was interrupted: no releasedir will follow, so undo it now. */
	if (fuse_reply_open(req, fi) == -ENOENT)
		uf2fs_release(u->fs, f2fs_ino, O_RDONLY);
}

void fuse_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	fuse_do_readdir(req, ino, size, off, false);
}

void fuse_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			 struct fuse_file_info *fi)
{
	fuse_do_readdir(req, ino, size, off, true);
}

void fuse_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_uf2fs *u = fuse_uf2fs_of(req);

	uf2fs_release(u->fs, fuse_ino_to_f2fs(u, ino), O_RDONLY);
	fuse_reply_err(req, 0);
}
