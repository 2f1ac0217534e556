/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Disk quota on quota_ino images (quota.c): the usage table, its quota files
 * and the per-inode reconciliation that keeps them exact. Private to lib/.
 */
#ifndef UF2FS_QUOTA_H
#define UF2FS_QUOTA_H

#include "f2fs.h"

#define F2FS_DEF_PROJID	0

/* Load the quota files (quota_ino images); a bad file is marked for rebuild. */
int f2fs_quota_mount(struct f2fs_sb_info *sbi);
/* After recovery and orphans: recount when asked to (flag, bad file, roll-forward). */
int f2fs_quota_repair(struct f2fs_sb_info *sbi, bool recovered);
void f2fs_quota_destroy(struct f2fs_sb_info *sbi);
/* Checkpoint step after data writeback: reconcile every cached inode, write the files. */
int f2fs_quota_checkpoint(struct f2fs_sb_info *sbi);
/* The checkpoint's CP_QUOTA_NEED_FSCK_FLAG. */
bool f2fs_quota_need_fsck(const struct f2fs_sb_info *sbi);
/* Move an inode's change of ids or i_blocks (or its end) into the table. */
void f2fs_quota_sync_inode(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
/* An inode read from its block: charged with what the block says. */
void f2fs_quota_inode_loaded(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi);
/*
 * Limits (usrquota...): EDQUOT, or -EAGAIN for a checkpoint and a retry; a
 * write (short_ok) past a block limit is cut to what fits (*len).
 */
int f2fs_quota_reserve_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			      uint64_t off, uint64_t *len, bool short_ok);
int f2fs_quota_reserve_inode(struct f2fs_sb_info *sbi, uint32_t uid, uint32_t gid,
			     const struct f2fs_inode_info *dir);
int f2fs_quota_transfer(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint32_t uid,
			uint32_t gid, uint32_t projid);
bool f2fs_is_quota_ino(const struct f2fs_sb_info *sbi, nid_t ino);
/* i_projid when the inode has it (project_quota, extra attributes), else 0. */
uint32_t f2fs_raw_projid(const struct f2fs_sb_info *sbi, const struct f2fs_inode *ri);

#endif /* UF2FS_QUOTA_H */
