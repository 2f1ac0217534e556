// SPDX-License-Identifier: GPL-2.0
/*
 * UF2FS_IOC_FSCRYPT, the daemon side of `uf2fs fscrypt`: one fixed-size
 * payload (struct uf2fs_fscrypt_arg, in and out, as a restricted FUSE ioctl
 * allows) carries add_key, remove_key, key_status, get_policy and
 * set_policy to the library. Linux's own FS_IOC_*_ENCRYPTION_* commands
 * cannot come through FUSE: their sizes are variable or their pointers
 * nested.
 *
 * Removing a key must leave the kernel with nothing decrypted either: the
 * inodes using it are flushed and dropped from the page cache first (while
 * the key can still encrypt what the kernel writes back), their plaintext
 * names are listed, and after the removal those dentries and the inodes'
 * caches are invalidated, so the directory then shows its no-key names.
 */
#include <stdlib.h>
#include <string.h>

#include "fuse_priv.h"

struct name_list {
	uint32_t dir;
	char **names;
	size_t n, cap;
};

static int collect_name(void *arg, const char *name, size_t len, uint32_t ino,
			unsigned int dtype, uint64_t next)
{
	struct name_list *l = arg;

	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		char **v = realloc(l->names, cap * sizeof(*v));

		if (!v)
			return 1;
		l->names = v;
		l->cap = cap;
	}
	l->names[l->n] = strndup(name, len);
	if (!l->names[l->n])
		return 1;
	l->n++;
	return 0;
}

static void inval_users(struct fuse_uf2fs *u, const uint32_t *inos, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fuse_ino_t fino = fuse_ino_from_f2fs(u, inos[i]);

		if (fino)
			fuse_uf2fs_inval_inode(u->se, fino, 0, 0);
	}
}

static int remove_key(struct fuse_uf2fs *u, const uint8_t *spec, size_t spec_len)
{
	struct name_list *lists = NULL;
	uint32_t *inos = NULL;
	size_t n = 0;
	int ret = uf2fs_key_users(u->fs, spec, spec_len, &inos, &n);

	if (ret)
		return ret;
	if (u->se) {
		inval_users(u, inos, n);
		lists = calloc(n ? n : 1, sizeof(*lists));
		for (size_t i = 0; lists && i < n; i++) {
			struct uf2fs_attr a;

			lists[i].dir = inos[i];
			if (!uf2fs_getattr(u->fs, inos[i], &a) && S_ISDIR(a.mode))
				uf2fs_readdir(u->fs, inos[i], 0, collect_name, &lists[i]);
		}
	}
	ret = uf2fs_remove_key(u->fs, spec, spec_len);
	for (size_t i = 0; lists && i < n; i++) {
		fuse_ino_t fdir = fuse_ino_from_f2fs(u, lists[i].dir);

		for (size_t j = 0; j < lists[i].n; j++) {
			if (!ret && fdir)
				fuse_uf2fs_inval_entry(u->se, fdir, lists[i].names[j],
								 strlen(lists[i].names[j]));
			free(lists[i].names[j]);
		}
		free(lists[i].names);
	}
	if (!ret && u->se)
		inval_users(u, inos, n);
	free(lists);
	free(inos);
	return ret;
}

static int fscrypt_op(struct fuse_uf2fs *u, fuse_ino_t ino, struct uf2fs_fscrypt_arg *a)
{
	uint32_t f2fs_ino = fuse_ino_to_f2fs(u, ino);
	int ret;

	if (a->op != UF2FS_FSCRYPT_GET_POLICY && a->op != UF2FS_FSCRYPT_ADD_KEY &&
	    a->spec_size != 8 && a->spec_size != 16)
		return -EINVAL;
	switch (a->op) {
	case UF2FS_FSCRYPT_ADD_KEY:
		if (a->key_size < 16 || a->key_size > sizeof(a->key))
			return -EINVAL;
		ret = uf2fs_add_key(u->fs, a->key, a->key_size,
				    a->spec_size == 8 ? a->key_spec : NULL, a->key_spec);
		return ret;
	case UF2FS_FSCRYPT_REMOVE_KEY:
		return remove_key(u, a->key_spec, a->spec_size);
	case UF2FS_FSCRYPT_KEY_STATUS:
		return uf2fs_key_status(u->fs, a->key_spec, a->spec_size);
	case UF2FS_FSCRYPT_GET_POLICY:
		return uf2fs_get_policy(u->fs, f2fs_ino, &a->policy);
	case UF2FS_FSCRYPT_SET_POLICY:
		if (uf2fs_is_read_only(u->fs))
			return -EROFS;
		ret = uf2fs_set_policy(u->fs, f2fs_ino, &a->policy);
		if (!ret)
			fuse_uf2fs_inval_attr(u, ino);
		return ret;
	}
	return -EINVAL;
}

void fuse_ioctl_fscrypt(fuse_req_t req, fuse_ino_t ino, const void *in_buf, size_t in_bufsz,
			size_t out_bufsz)
{
	struct uf2fs_fscrypt_arg a;

	if (in_bufsz < sizeof(a) || out_bufsz < sizeof(a)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&a, in_buf, sizeof(a));
	a.result = fscrypt_op(fuse_uf2fs_of(req), ino, &a);
	explicit_bzero(a.key, sizeof(a.key));
	/* errors travel in result: the caller tells "no such key" from a failed ioctl */
	fuse_reply_ioctl(req, 0, &a, sizeof(a));
	explicit_bzero((void *)in_buf, sizeof(a));
}
