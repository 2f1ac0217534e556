// SPDX-License-Identifier: GPL-2.0
/*
 * Where an inode was last named: the parent and name f2fs keeps in the inode
 * (i_pino, i_name) for roll-forward recovery, checked against the directory.
 * The FUSE front end uses it to drop the kernel's dentry of a file whose
 * attributes the kernel caches for itself (ctime under writeback_cache).
 */
#include <string.h>

#include "f2fs.h"

#define SBI(fs) ((struct f2fs_sb_info *)(fs))

int uf2fs_inode_name(struct uf2fs *fs, uint32_t ino, uint32_t *parent, char *name, size_t *len)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct folio *f;
	uint32_t pino, found;
	size_t n;
	int ret = 0;

	pthread_rwlock_rdlock(&sbi->cp_rwsem);
	f = f2fs_get_inode_folio(sbi, ino);
	if (IS_ERR(f)) {
		pthread_rwlock_unlock(&sbi->cp_rwsem);
		return PTR_ERR(f);
	}
	pino = le32(folio_node(f)->i.i_pino);
	n = le32(folio_node(f)->i.i_namelen);
	/* an encrypted name is not the one the kernel knows */
	if (n == 0 || n > F2FS_NAME_LEN || (folio_node(f)->i.i_advise & FADVISE_ENC_NAME_BIT))
		ret = -ENOENT;
	else
		memcpy(name, folio_node(f)->i.i_name, n);
	folio_put(sbi, f);
	pthread_rwlock_unlock(&sbi->cp_rwsem);
	/* a hard link or a rename may have left the record behind: it must still name ino */
	if (!ret)
		ret = uf2fs_lookup(fs, pino, name, n, &found);
	if (!ret && found != ino)
		ret = -ENOENT;
	if (!ret) {
		*parent = pino;
		*len = n;
	}
	return ret;
}
