// SPDX-License-Identifier: GPL-2.0
/*
 * Mounting: the super block (primary, then backup), its sanity checks, the
 * feature gate, and the order in which the managers are built and torn down.
 * It also owns the library's error reporting: every corruption message names
 * the structure and the block address, and the last one is kept for the front
 * ends (uf2fs_last_error).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "f2fs.h"
#include "quota.h"

/// Messages ///

static void vmsg(const char *fmt, va_list ap)
{
	fputs("uf2fs: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void f2fs_msg(struct f2fs_sb_info *sbi, const char *fmt, ...)
{
	va_list ap;

	if (sbi->opts.quiet)
		return;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

/*
 * A routine note, only when verbose (the FUSE front end in the foreground):
 * a mount helper's stderr is the user's terminal (and xfstests' golden
 * output), where the kernel would have logged to dmesg.
 */
void f2fs_info(struct f2fs_sb_info *sbi, const char *fmt, ...)
{
	va_list ap;

	if (sbi->opts.quiet || !sbi->opts.verbose)
		return;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

/* Survives a failed mount, which frees the sbi holding last_error. */
static __thread char mount_error[256];

int f2fs_error(struct f2fs_sb_info *sbi, int err, const char *fmt, ...)
{
	va_list ap;
	char msg[sizeof(sbi->last_error)];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(mount_error, msg, sizeof(mount_error));
	pthread_mutex_lock(&sbi->err_lock);
	memcpy(sbi->last_error, msg, sizeof(msg));
	pthread_mutex_unlock(&sbi->err_lock);
	if (!sbi->opts.quiet)
		fprintf(stderr, "uf2fs: %s\n", msg);
	return -err;
}

const char *uf2fs_last_error(const struct uf2fs *fs)
{
	return fs ? ((const struct f2fs_sb_info *)fs)->last_error : mount_error;
}

/// Features ///

static const struct {
	uint32_t bit;
	const char *name;
} feature_names[] = {
	{ F2FS_FEATURE_ENCRYPT, "encrypt" },
	{ F2FS_FEATURE_BLKZONED, "blkzoned" },
	{ F2FS_FEATURE_ATOMIC_WRITE, "atomic_write" },
	{ F2FS_FEATURE_EXTRA_ATTR, "extra_attr" },
	{ F2FS_FEATURE_PRJQUOTA, "project_quota" },
	{ F2FS_FEATURE_INODE_CHKSUM, "inode_checksum" },
	{ F2FS_FEATURE_FLEXIBLE_INLINE_XATTR, "flexible_inline_xattr" },
	{ F2FS_FEATURE_QUOTA_INO, "quota_ino" },
	{ F2FS_FEATURE_INODE_CRTIME, "inode_crtime" },
	{ F2FS_FEATURE_LOST_FOUND, "lost_found" },
	{ F2FS_FEATURE_VERITY, "verity" },
	{ F2FS_FEATURE_SB_CHKSUM, "sb_checksum" },
	{ F2FS_FEATURE_CASEFOLD, "casefold" },
	{ F2FS_FEATURE_COMPRESSION, "compression" },
	{ F2FS_FEATURE_RO, "ro" },
	{ F2FS_FEATURE_DEVICE_ALIAS, "device_alias" },
	{ F2FS_FEATURE_PACKED_SSA, "packed_ssa" },
};

const char *f2fs_feature_name(uint32_t bit)
{
	for (size_t i = 0; i < ARRAY_SIZE(feature_names); i++)
		if (feature_names[i].bit == bit)
			return feature_names[i].name;
	return NULL;
}

/*
 * f2fs has no compat/incompat split: every bit changes what a reader must
 * understand. The kernel knows the bits 0x1 to 0x10000 (F2FS_FEATURE_ENCRYPT
 * to F2FS_FEATURE_PACKED_SSA, fs/f2fs/f2fs.h and f2fs-tools' include/f2fs_fs.h),
 * all named above; a bit beyond them is refused by number. The known ones are
 * all taken (zoned volumes: lib/zoned.c). packed_ssa changes nothing with 4 KiB
 * blocks (one summary per block either way: f2fs-tools drops it there), and
 * other block sizes are refused with the super block's geometry.
 */
static int check_features(struct f2fs_sb_info *sbi)
{
	uint32_t f = sbi->features;

	for (unsigned int i = 0; i < 32; i++) {
		uint32_t bit = 1u << i;

		if ((f & bit) && !f2fs_feature_name(bit))
			return f2fs_error(sbi, EOPNOTSUPP,
					  "unknown incompatible feature bit 0x%x in the super block; "
					  "refusing to mount", bit);
	}
	/* with 4 KiB blocks mkfs clears it: the summaries are block-sized anyway */
	if ((f & F2FS_FEATURE_PACKED_SSA) && F2FS_BLKSIZE > 4096)
		return f2fs_error(sbi, EOPNOTSUPP,
				  "feature \"packed_ssa\" (4 KiB summaries packed %u to a "
				  "%u-byte block) is not supported yet", F2FS_BLKSIZE / 4096,
				  F2FS_BLKSIZE);
	return 0;
}

/// Super block ///

static int sanity_check_super(struct f2fs_sb_info *sbi, const struct f2fs_super_block *sb,
			      int index, block_t blk)
{
	uint32_t log_bs = le32(sb->log_blocksize);
	uint32_t segs = le32(sb->segment_count);
	uint64_t bpseg;

	if (le32(sb->magic) != F2FS_SUPER_MAGIC)
		return f2fs_error(sbi, EINVAL, "super block %d (block %u): bad magic 0x%08x",
				  index, blk, le32(sb->magic));
	if (le32(sb->feature) & F2FS_FEATURE_SB_CHKSUM) {
		uint32_t off = le32(sb->checksum_offset);

		if (off != offsetof(struct f2fs_super_block, crc))
			return f2fs_error(sbi, EFSCORRUPTED,
					  "super block %d (block %u): bad checksum offset %u",
					  index, blk, off);
		if (f2fs_block_crc(sb, off) != le32(sb->crc))
			return f2fs_error(sbi, EFSCORRUPTED,
					  "super block %d (block %u): checksum mismatch", index,
					  blk);
	}
	if (log_bs != UF2FS_VARIANT_4K && log_bs != UF2FS_VARIANT_16K)
		return f2fs_error(sbi, EOPNOTSUPP,
				  "super block %d: log_blocksize %u (block size %s%u) is not "
				  "supported: uf2fs reads 4096- and 16384-byte blocks", index,
				  log_bs, log_bs < 32 ? "" : "2^", log_bs < 32 ? 1u << log_bs : log_bs);
	if (le32(sb->log_blocks_per_seg) != 9)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "super block %d (block %u): %u blocks per segment (must be 512)",
				  index, blk, 1u << MIN(le32(sb->log_blocks_per_seg), 31u));
	if (le32(sb->log_sectorsize) < 9 || le32(sb->log_sectorsize) > log_bs ||
	    le32(sb->log_sectorsize) + le32(sb->log_sectors_per_block) != log_bs)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "super block %d (block %u): bad sector size fields", index, blk);
	/* a sane super block for the other core: mount it there, quietly */
	if (log_bs != F2FS_BLKSIZE_BITS)
		return uf2fs_variant_redirect(log_bs);
	if (!le32(sb->segs_per_sec) || le32(sb->segs_per_sec) > segs || !le32(sb->secs_per_zone))
		return f2fs_error(sbi, EFSCORRUPTED,
				  "super block %d (block %u): bad section geometry", index, blk);
	bpseg = 512;
	/* the metadata areas follow each other in a fixed order */
	if (le32(sb->cp_blkaddr) != le32(sb->segment0_blkaddr) ||
	    le32(sb->sit_blkaddr) != le32(sb->cp_blkaddr) + le32(sb->segment_count_ckpt) * bpseg ||
	    le32(sb->nat_blkaddr) != le32(sb->sit_blkaddr) + le32(sb->segment_count_sit) * bpseg ||
	    le32(sb->ssa_blkaddr) != le32(sb->nat_blkaddr) + le32(sb->segment_count_nat) * bpseg ||
	    le32(sb->main_blkaddr) != le32(sb->ssa_blkaddr) + le32(sb->segment_count_ssa) * bpseg)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "super block %d (block %u): metadata areas are not contiguous",
				  index, blk);
	if (le32(sb->segment_count_ckpt) != 2 || le32(sb->segment_count_sit) < 2 ||
	    le32(sb->segment_count_nat) < 2 || !le32(sb->segment_count_main) ||
	    le32(sb->segment_count_sit) % 2 || le32(sb->segment_count_nat) % 2)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "super block %d (block %u): bad area segment counts", index, blk);
	if ((uint64_t)le32(sb->main_blkaddr) + (uint64_t)le32(sb->segment_count_main) * bpseg >
	    le64(sb->block_count) ||
	    le32(sb->segment0_blkaddr) + (uint64_t)segs * bpseg < le32(sb->main_blkaddr))
		return f2fs_error(sbi, EFSCORRUPTED,
				  "super block %d (block %u): main area exceeds block_count",
				  index, blk);
	if (le32(sb->cp_payload) > 512 - 2 ||
	    le32(sb->root_ino) < F2FS_RESERVED_NODE_NUM || le32(sb->node_ino) != 1 ||
	    le32(sb->meta_ino) != 2)
		return f2fs_error(sbi, EFSCORRUPTED,
				  "super block %d (block %u): bad reserved inode numbers or payload",
				  index, blk);
	return 0;
}

#if F2FS_BLKSIZE_BITS == 12
/*
 * Both 4 KiB copies bad: a 16 KiB image whose primary is damaged keeps its
 * backup at byte 16384 + 1024, where this core never looks. Only a copy that
 * passes every check, for its own block size, sends the mount there.
 */
static int find_16k_backup(struct f2fs_sb_info *sbi, uint8_t *blk)
{
	const struct f2fs_super_block *sb = (void *)(blk + F2FS_SUPER_OFFSET);
	bool quiet = sbi->opts.quiet;
	int ret;

	if (f2fs_dev_read_blocks(&sbi->dev, blk, 1u << (UF2FS_VARIANT_16K - 12), 1) ||
	    le32(sb->magic) != F2FS_SUPER_MAGIC || le32(sb->log_blocksize) != UF2FS_VARIANT_16K)
		return 0;
	sbi->opts.quiet = true;
	ret = sanity_check_super(sbi, sb, 1, 1);
	sbi->opts.quiet = quiet;
	return uf2fs_variant_redirected(ret) ? ret : 0;
}
#endif

int f2fs_read_super(struct f2fs_sb_info *sbi)
{
	uint8_t *blk = malloc(F2FS_BLKSIZE);
	int ret = -EINVAL, first_err = 0;

	if (!blk)
		return -ENOMEM;
	for (int i = 0; i < 2; i++) {
		const struct f2fs_super_block *sb = (void *)(blk + F2FS_SUPER_OFFSET);

		ret = f2fs_dev_read_blocks(&sbi->dev, blk, i, 1);
		if (ret) {
			ret = f2fs_error(sbi, EIO, "super block %d (block %d): cannot read: %s", i,
					 i, strerror(-ret));
		} else {
			ret = sanity_check_super(sbi, sb, i, i);
		}
		if (!ret) {
			memcpy(&sbi->raw_super, sb, sizeof(*sb));
			sbi->valid_super_index = i;
			if (i == 1)
				f2fs_msg(sbi, "primary super block is invalid; using the backup "
					 "super block (block 1)");
			break;
		}
		if (!first_err)
			first_err = ret;
		/* an unsupported geometry is the same in both copies */
		if (ret == -EOPNOTSUPP || uf2fs_variant_redirected(ret))
			break;
	}
#if F2FS_BLKSIZE_BITS == 12
	if (ret && !uf2fs_variant_redirected(ret) && ret != -EOPNOTSUPP && ret != -ENOMEM) {
		int other = find_16k_backup(sbi, blk);

		if (other) {
			free(blk);
			return other;
		}
	}
#endif
	free(blk);
	if (ret) {
		char hint[224];

		if (ret == -EINVAL && (!f2fs_dev_partition_hint(&sbi->dev, hint, sizeof(hint)) ||
				       !f2fs_dev_vm_hint(&sbi->dev, hint, sizeof(hint))))
			f2fs_error(sbi, EINVAL, "%s", hint);
		if (uf2fs_variant_redirected(ret))
			return ret;
		return ret == -EOPNOTSUPP ? ret : (first_err == -EOPNOTSUPP ? first_err : ret);
	}
	return 0;
}

static int init_sb_info(struct f2fs_sb_info *sbi)
{
	const struct f2fs_super_block *sb = &sbi->raw_super;
	uint64_t need;
	int ret;

	sbi->log_blocks_per_seg = le32(sb->log_blocks_per_seg);
	sbi->blocks_per_seg = 1u << sbi->log_blocks_per_seg;
	sbi->segs_per_sec = le32(sb->segs_per_sec);
	sbi->seg0_blkaddr = le32(sb->segment0_blkaddr);
	sbi->main_blkaddr = le32(sb->main_blkaddr);
	sbi->ssa_blkaddr = le32(sb->ssa_blkaddr);
	sbi->total_segs = le32(sb->segment_count);
	sbi->main_segs = le32(sb->segment_count_main);
	sbi->block_count = sbi->main_blkaddr + (uint64_t)sbi->main_segs * sbi->blocks_per_seg;
	sbi->features = le32(sb->feature);
	sbi->root_ino = le32(sb->root_ino);
	sbi->node_ino = le32(sb->node_ino);
	sbi->meta_ino = le32(sb->meta_ino);
	sbi->chksum_seed = f2fs_crc32(0xFFFFFFFFu, sb->uuid, sizeof(sb->uuid));

	ret = check_features(sbi);
	if (!ret)
		ret = f2fs_open_devices(sbi);
	if (ret)
		return ret;
	need = sbi->block_count * F2FS_BLKSIZE;
	if (sbi->dev.size < need)
		return f2fs_error(sbi, EIO,
				  "image is truncated: the super block describes %llu bytes "
				  "(%llu blocks) but the device has %llu bytes",
				  (unsigned long long)need, (unsigned long long)sbi->block_count,
				  (unsigned long long)sbi->dev.size);
	return 0;
}

/// Mount and unmount ///

void uf2fs_default_options(struct uf2fs_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->read_only = true;
	opts->max_folio_order = 8;	/* 1 MiB folios, the largest FUSE request */
	opts->backend = UF2FS_BACKEND_PSYNC;
	opts->background_gc = -1;	/* on, as the kernel's background_gc=on */
	opts->dontcache = -1;		/* off unless a front end asks */
	opts->flusher = -1;		/* likewise */
	opts->write_through = -1;	/* on, where drop-behind is */
	opts->ipu_policy = -1;		/* the kernel's default for the volume size */
}

/*
 * The IPU policy and its thresholds, as the kernel sets them: F2FS_IPU_FSYNC
 * from build_segment_manager, then f2fs_tuning_parameters switches volumes
 * of up to SMALL_VOLUME_SEGMENTS (16 GiB of main area) to IPU_FORCE |
 * IPU_HONOR_OPU_WRITE unless in LFS mode, so that small devices do not pay
 * a new block and a node update for every overwrite. A crash can then show
 * an overwritten file with a mix of old and new blocks, as on Linux
 * (docs/decisions.md); ipu_policy=0x10 keeps every size log-structured.
 */
#define SMALL_VOLUME_SEGMENTS	(16 * 512)

static unsigned int default_ipu_policy(const struct f2fs_sb_info *sbi)
{
	if (sbi->main_segs <= SMALL_VOLUME_SEGMENTS)
		return (1u << F2FS_IPU_FORCE) | (1u << F2FS_IPU_HONOR_OPU_WRITE);
	return 1u << F2FS_IPU_FSYNC;
}

static int set_ipu_policy(struct f2fs_sb_info *sbi)
{
	int pol = sbi->opts.ipu_policy;

	sbi->sm.min_ipu_util = DEF_MIN_IPU_UTIL;
	sbi->sm.min_fsync_blocks = DEF_MIN_FSYNC_BLOCKS;
	if (pol >= 0 && (unsigned int)pol >= (1u << F2FS_IPU_MAX))
		return f2fs_error(sbi, EINVAL, "ipu_policy 0x%x: unknown bits (at most 0x%x)",
				  (unsigned int)pol, (1u << F2FS_IPU_MAX) - 1);
	if (f2fs_lfs_mode(sbi)) {
		if (pol > 0)
			return f2fs_error(sbi, EINVAL, "%s is not compatible with IPU "
					  "(ipu_policy 0x%x)", sbi->zoned ?
					  "a zoned volume (LFS only, as Linux)" : "mode=lfs",
					  (unsigned int)pol);
		sbi->sm.ipu_policy = 0;
		return 0;
	}
	sbi->sm.ipu_policy = pol < 0 ? default_ipu_policy(sbi) : (unsigned int)pol;
	return 0;
}

/*
 * What a read-write mount cannot take, each named: the kernel's own refusals
 * (ro images, a checkpoint with an error) and what uf2fs does not write.
 */
static int check_writable(struct f2fs_sb_info *sbi)
{
	uint32_t flags = le32(sbi->ckpt->ckpt_flags);

	if (f2fs_has_feature(sbi, F2FS_FEATURE_RO))
		return f2fs_error(sbi, EROFS, "feature \"ro\": this image is read-only by design");
	if (flags & CP_ERROR_FLAG)
		return f2fs_error(sbi, EROFS, "checkpoint has the error flag; run fsck.f2fs first");
	return 0;
}

/*
 * An image left with checkpoint=disable mounts as Linux mounts it without
 * that option (f2fs_enable_checkpoint): at its last checkpoint, the one that
 * disabled them, with nothing rolled forward, and a checkpoint written at
 * once that clears the flags.
 */
static int enable_checkpoint(struct f2fs_sb_info *sbi)
{
	if (!(le32(sbi->ckpt->ckpt_flags) & CP_DISABLED_FLAG))
		return 0;
	f2fs_msg(sbi, "the image was left with checkpoint=disable: mounting it at its last "
		 "checkpoint (later writes are dropped, as by Linux) and enabling checkpoints");
	return f2fs_checkpoint_now(sbi, false);
}

static void sbi_free(struct f2fs_sb_info *sbi)
{
	f2fs_quota_destroy(sbi);
	f2fs_icache_destroy(sbi);
	fscrypt_keyring_destroy(sbi->keyring);	/* after the inodes, which point into it */
	fsverity_free_certs(&sbi->verity);
	f2fs_destroy_node_manager(sbi);
	f2fs_destroy_segment_manager(sbi);
	folio_cache_destroy(sbi);
	f2fs_dev_close(&sbi->dev);
	free(sbi->ckpt);
	free(sbi->orphans);
	free(sbi->ctr);
	pthread_rwlock_destroy(&sbi->cp_rwsem);
	pthread_mutex_destroy(&sbi->err_lock);
	free(sbi);
}

static int mount_steps(struct f2fs_sb_info *sbi)
{
	bool recovered;
	int ret;

	ret = f2fs_read_super(sbi);
	if (ret)
		return ret;
	ret = init_sb_info(sbi);
	if (ret)
		return ret;
	ret = folio_cache_init(sbi, sbi->opts.cache_size);
	if (ret)
		return ret;
	ret = f2fs_get_valid_checkpoint(sbi);
	if (ret)
		return ret;
	ret = f2fs_read_orphans(sbi);
	if (ret)
		return ret;
	ret = f2fs_build_segment_manager(sbi);
	if (ret)
		return ret;
	ret = f2fs_init_zones(sbi);
	if (ret)
		return ret;
	ret = set_ipu_policy(sbi);
	if (ret)
		return ret;
	ret = f2fs_build_node_manager(sbi);
	if (ret)
		return ret;
	ret = f2fs_icache_init(sbi);
	if (ret)
		return ret;
	ret = f2fs_check_recovery(sbi);
	if (ret)
		return ret;
	if (sbi->need_recovery && sbi->opts.read_only)
		f2fs_msg(sbi, "the image holds fsync'd data past its last checkpoint "
			 "(%u dnodes); it needs roll-forward recovery, which this read-only "
			 "mount does not perform: that data is not visible",
			 sbi->nr_fsync_dnodes);
	ret = f2fs_casefold_check_sb(sbi, !sbi->opts.read_only);
	if (ret)
		return ret;
	if (!sbi->opts.read_only) {
		ret = check_writable(sbi);
		if (ret)
			return ret;
	}
	/* the root must be a readable directory, or nothing else will be */
	struct f2fs_inode_info *root = f2fs_iget(sbi, sbi->root_ino);

	if (IS_ERR(root))
		return PTR_ERR(root);
	bool isdir = S_ISDIR(root->mode);

	f2fs_iput(sbi, root);
	if (!isdir)
		return f2fs_error(sbi, EFSCORRUPTED, "root inode %u is not a directory",
				  sbi->root_ino);
	ret = f2fs_quota_mount(sbi);
	if (ret)
		return ret;
	if (sbi->opts.read_only)
		return 0;
	recovered = sbi->need_recovery;
	if (sbi->need_recovery) {
		ret = f2fs_recover_fsync_data(sbi);
		if (ret)
			return ret;
	}
	ret = f2fs_fix_zoned_cursegs(sbi);
	if (!ret)
		ret = f2fs_cleanup_orphans(sbi);
	if (!ret)
		ret = f2fs_quota_repair(sbi, recovered);
	if (!ret)
		ret = enable_checkpoint(sbi);
	if (!ret)
		ret = f2fs_start_flusher(sbi);
	if (!ret)
		ret = f2fs_start_checkpoint_thread(sbi);
	if (ret)
		f2fs_stop_flusher(sbi);
	return ret;
}

/*
 * A disk opened whole that is partitioned and not f2fs itself: its table in
 * parts, and true. A table that cannot be read is left to the mount, whose
 * super block check says what is wrong.
 */
static bool partitions_instead(struct f2fs_sb_info *sbi, struct uf2fs_partitions *parts)
{
	if (sbi->opts.partition || f2fs_dev_partitions(&sbi->dev, parts)) {
		memset(parts, 0, sizeof(*parts));
		return false;
	}
	if (parts->nr && !parts->whole_f2fs)
		return true;
	uf2fs_free_partitions(parts);
	return false;
}

int uf2fs_mount(const struct uf2fs_options *opts, struct uf2fs **out)
{
	return uf2fs_mount_or_partitions(opts, out, NULL);
}

int uf2fs_mount_or_partitions(const struct uf2fs_options *opts, struct uf2fs **out,
			      struct uf2fs_partitions *parts)
{
	struct f2fs_sb_info *sbi = calloc(1, sizeof(*sbi));
	int ret;

	mount_error[0] = 0;
	if (!sbi)
		return -ENOMEM;
	sbi->opts = *opts;
	if (!sbi->opts.checkpoint_interval)
		sbi->opts.checkpoint_interval = 60;	/* the kernel's default */
	sbi->head.blkbits = F2FS_BLKSIZE_BITS;
#if F2FS_BLKSIZE_BITS > 12
	/* the option counts 4 KiB units, so a folio keeps its byte size at 16 KiB */
	sbi->opts.max_folio_order -= MIN(sbi->opts.max_folio_order, F2FS_BLKSIZE_BITS - 12u);
#endif
	if (sbi->opts.max_folio_order > 9)
		sbi->opts.max_folio_order = 9;
	pthread_rwlock_init(&sbi->cp_rwsem, NULL);
	pthread_mutex_init(&sbi->writepages, NULL);
	pthread_mutex_init(&sbi->err_lock, NULL);
	pthread_mutex_init(&sbi->orphan_lock, NULL);
	sbi->ctr = calloc(1, sizeof(*sbi->ctr));
	if (!sbi->ctr) {
		sbi_free(sbi);
		return -ENOMEM;
	}
	f2fs_fsverity_init(sbi);
	ret = f2fs_fscrypt_init(sbi);
	if (!ret && opts->keyfile)
		ret = fscrypt_load_keyfile(sbi->keyring, opts->keyfile);
	sbi->verity.require_signatures = opts->verity_require_signatures;
	for (unsigned int i = 0; !ret && i < opts->nr_verity_certs; i++) {
		ret = fsverity_add_certs(&sbi->verity, opts->verity_certs[i]);
		if (ret)
			f2fs_error(sbi, -ret, "verity_cert=%s: %s", opts->verity_certs[i],
				   ret == -EINVAL ? "no PEM certificate in it" : strerror(-ret));
	}
	if (ret) {
		sbi_free(sbi);
		return ret;
	}
	ret = f2fs_dev_open(&sbi->dev, &sbi->opts);
	sbi->dev.blkbits = F2FS_BLKSIZE_BITS;
	if (ret) {
		f2fs_error(sbi, -ret, "%s: %s", opts->device ? opts->device : "(ram)",
			   sbi->dev.open_error[0] ? sbi->dev.open_error : strerror(-ret));
		sbi_free(sbi);
		return ret;
	}
	if (parts && partitions_instead(sbi, parts)) {
		sbi_free(sbi);
		return 1;
	}
	ret = mount_steps(sbi);
	if (ret) {
		sbi_free(sbi);
		return ret;
	}
	*out = (struct uf2fs *)sbi;
	return 0;
}

int uf2fs_unmount(struct uf2fs *fs)
{
	struct f2fs_sb_info *sbi = (struct f2fs_sb_info *)fs;
	int ret = 0;

	if (!sbi)
		return 0;
	if (!sbi->opts.read_only) {
		f2fs_stop_flusher(sbi);
		f2fs_stop_checkpoint_thread(sbi);
		if (!sbi->cp_stopped)
			ret = f2fs_checkpoint_now(sbi, true);
		else
			ret = -EIO;
		if (!ret)
			f2fs_issue_discards(sbi, 0);
		if (ret)
			f2fs_msg(sbi, "final checkpoint failed: %s; the image keeps its last "
				 "checkpoint", strerror(-ret));
	}
	sbi_free(sbi);
	return ret;
}

uint32_t uf2fs_root_ino(const struct uf2fs *fs)
{
	return ((const struct f2fs_sb_info *)fs)->root_ino;
}

uint64_t uf2fs_checkpoint_version(const struct uf2fs *fs, bool *umount)
{
	const struct f2fs_sb_info *sbi = (const struct f2fs_sb_info *)fs;

	*umount = le32(sbi->ckpt->ckpt_flags) & CP_UMOUNT_FLAG;
	return sbi->cp_ver;
}

bool uf2fs_needs_recovery(const struct uf2fs *fs)
{
	return ((const struct f2fs_sb_info *)fs)->need_recovery;
}

/// Testing hooks ///

uint64_t uf2fs_test_writes(const struct uf2fs *fs)
{
	return ((const struct f2fs_sb_info *)fs)->dev.nr_writes;
}

bool uf2fs_test_power_is_cut(const struct uf2fs *fs)
{
	return ((const struct f2fs_sb_info *)fs)->dev.cut;
}

int uf2fs_test_persisted_image(struct uf2fs *fs, void **image, size_t *len)
{
	return f2fs_dev_persisted(&((struct f2fs_sb_info *)fs)->dev, (uint8_t **)image, len);
}

unsigned int uf2fs_test_issue_discards(struct uf2fs *fs, unsigned int max_segs)
{
	return f2fs_issue_discards((struct f2fs_sb_info *)fs, max_segs);
}

void uf2fs_test_discard_hook(struct uf2fs *fs, uf2fs_discard_hook_t fn, void *arg)
{
	struct f2fs_dev *dev = &((struct f2fs_sb_info *)fs)->dev;

	dev->discard_hook = fn;
	dev->discard_hook_arg = arg;
}

void uf2fs_test_crash(struct uf2fs *fs)
{
	struct f2fs_sb_info *sbi = (struct f2fs_sb_info *)fs;

	if (!sbi->opts.read_only)
		f2fs_stop_checkpoint_thread(sbi);
	sbi_free(sbi);
}
