// SPDX-License-Identifier: GPL-2.0
/*
 * What a running filesystem can tell about itself: `uf2fs info` (geometry,
 * features, checkpoint state, usage) and `uf2fs stats` (cache, mapping and
 * device counters with the request-size histogram), the userspace analogue
 * of /sys/fs/f2fs/<dev>/ and iostat_info.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "f2fs.h"

#define SBI(fs) ((struct f2fs_sb_info *)(fs))

static const char *const curseg_names[NR_CURSEG_TYPE] = {
	"hot data", "warm data", "cold data", "hot node", "warm node", "cold node",
};

static const struct {
	uint32_t flag;
	const char *name;
} cp_flag_names[] = {
	{ CP_UMOUNT_FLAG, "umount" },		{ CP_ORPHAN_PRESENT_FLAG, "orphans" },
	{ CP_COMPACT_SUM_FLAG, "compact_sum" }, { CP_ERROR_FLAG, "error" },
	{ CP_FSCK_FLAG, "fsck" },		{ CP_FASTBOOT_FLAG, "fastboot" },
	{ CP_CRC_RECOVERY_FLAG, "crc_recovery" }, { CP_NAT_BITS_FLAG, "nat_bits" },
	{ CP_TRIMMED_FLAG, "trimmed" },		{ CP_NOCRC_RECOVERY_FLAG, "nocrc_recovery" },
	{ CP_LARGE_NAT_BITMAP_FLAG, "large_nat_bitmap" },
	{ CP_QUOTA_NEED_FSCK_FLAG, "quota_need_fsck" }, { CP_DISABLED_FLAG, "disabled" },
	{ CP_DISABLED_QUICK_FLAG, "disabled_quick" }, { CP_RESIZEFS_FLAG, "resizefs" },
};

static void print_volume_name(const struct f2fs_super_block *sb, FILE *out)
{
	/* UTF-16LE on disk; ASCII covers what mkfs -l writes in practice */
	for (int i = 0; i < F2FS_MAX_VOLUME_NAME && le16(sb->volume_name[i]); i++) {
		uint16_t c = le16(sb->volume_name[i]);

		fputc(c < 128 ? (int)c : '?', out);
	}
}

static void print_features(struct f2fs_sb_info *sbi, FILE *out)
{
	bool any = false;

	for (unsigned int i = 0; i < 32; i++) {
		uint32_t bit = 1u << i;
		const char *n = f2fs_feature_name(bit);

		if (!(sbi->features & bit))
			continue;
		fprintf(out, "%s%s", any ? " " : "", n ? n : "unknown");
		any = true;
	}
	fprintf(out, "%s\n", any ? "" : "(none)");
}

/* Which layout the volume has, and for several devices where each one's blocks are. */
static void print_devices(const struct f2fs_sb_info *sbi, FILE *out)
{
	if (!sbi->ndevs) {
		fprintf(out, "  devices           1 (single device)\n");
		return;
	}
	fprintf(out, "  devices           %u (multi-device volume)\n", sbi->ndevs);
	for (unsigned int i = 0; i < sbi->ndevs; i++) {
		const struct f2fs_devinfo *d = &sbi->devs[i];

		fprintf(out, "    device %u        %s: %.1f MiB, blocks %u-%u (%u segments%s)%s\n", i,
			d->path, d->size / 1048576.0, d->start_blk, d->end_blk,
			le32(sbi->raw_super.devs[i].total_segments), i ? "" : " + metadata",
			sbi->zoned_devs & (1u << i) ? ", zoned" : "");
	}
}

/*
 * A zoned volume: the zone size (a section), which devices are zoned, and
 * the write pointer of every zone that is not empty.
 */
static void print_zones(struct f2fs_sb_info *sbi, FILE *out)
{
	unsigned int secblks = sbi->segs_per_sec * sbi->blocks_per_seg, nz = 0, used = 0;

	if (!sbi->zoned)
		return;
	for (unsigned int sec = 0; sec < sbi->main_segs / sbi->segs_per_sec; sec++) {
		block_t blk = sbi->main_blkaddr + sec * secblks;

		if (!f2fs_dev_zone_seq(&sbi->dev, blk))
			continue;
		nz++;
		used += f2fs_dev_zone_wp(&sbi->dev, blk) != 0;
	}
	fprintf(out, "\nZones\n");
	fprintf(out, "  zone size         %u blocks (%.1f MiB, one section), capacity %llu blocks\n",
		secblks, secblks * (double)F2FS_BLKSIZE / 1048576.0,
		(unsigned long long)sbi->zone_cap_blocks);
	fprintf(out, "  zoned devices    ");
	for (unsigned int i = 0; i < (sbi->ndevs ? sbi->ndevs : 1); i++)
		if (sbi->zoned_devs & (1u << i))
			fprintf(out, " %u (%s)", i, sbi->devs[i].path[0] ? sbi->devs[i].path :
				sbi->opts.device);
	fprintf(out, "\n  sequential zones  %u, %u not empty; writes are LFS only\n", nz, used);
	for (unsigned int sec = 0; sec < sbi->main_segs / sbi->segs_per_sec; sec++) {
		block_t blk = sbi->main_blkaddr + sec * secblks;
		uint64_t wp;

		if (!f2fs_dev_zone_seq(&sbi->dev, blk))
			continue;
		wp = f2fs_dev_zone_wp(&sbi->dev, blk);
		if (wp)
			fprintf(out, "  zone at block %-7u section %u, write pointer %llu%s\n", blk,
				sec, (unsigned long long)wp, wp == secblks ? " (full)" : "");
	}
}

void uf2fs_print_info(struct uf2fs *fs, FILE *out)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	const struct f2fs_super_block *sb = &sbi->raw_super;
	const struct f2fs_checkpoint *cp = sbi->ckpt;
	const uint8_t *u = sb->uuid;
	uint32_t flags = le32(cp->ckpt_flags);
	uint64_t user = le64(cp->user_block_count), valid = le64(cp->valid_block_count);

	fprintf(out, "Source:             %s\n", sbi->dev.source[0] ? sbi->dev.source :
		sbi->opts.device ? "local file or block device" : "memory");
	fprintf(out, "Volume name:        ");
	print_volume_name(sb, out);
	fprintf(out, "\nUUID:               %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		"%02x%02x%02x%02x%02x%02x\n", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
		u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	fprintf(out, "Version:            %u.%u (made by %.*s)\n", le16(sb->major_ver),
		le16(sb->minor_ver), (int)strnlen((const char *)sb->init_version, 64),
		(const char *)sb->init_version);
	if (sbi->opts.partition)
		fprintf(out, "Partition:          %s: bytes %llu to %llu of the disk\n",
			sbi->opts.partition, (unsigned long long)sbi->dev.base,
			(unsigned long long)(sbi->dev.base + sbi->dev.size));
	fprintf(out, "Super block:        %s\n", sbi->valid_super_index ? "backup (primary invalid)"
								  : "primary");
	fprintf(out, "Layout:             %u-byte blocks, %s%s%s\n", F2FS_BLKSIZE,
		sbi->ndevs ? "multi-device" : "single device",
		sbi->zoned ? ", zoned (blkzoned, mkfs.f2fs -m)" : "",
		flags & CP_DISABLED_FLAG ? ", left with checkpoint=disable" : "");
	if (f2fs_has_feature(sbi, F2FS_FEATURE_DEVICE_ALIAS))
		fprintf(out, "                    device alias files (mkfs.f2fs -c dev@alias)\n");
	fprintf(out, "Features:           ");
	print_features(sbi, out);
	fprintf(out, "\nGeometry\n");
	fprintf(out, "  block size        %u\n", F2FS_BLKSIZE);
	fprintf(out, "  blocks            %llu (%.1f MiB)\n",
		(unsigned long long)le64(sb->block_count),
		le64(sb->block_count) * F2FS_BLKSIZE / 1048576.0);
	fprintf(out, "  segments          %u (main %u), %u blocks each, %u per section\n",
		sbi->total_segs, sbi->main_segs, sbi->blocks_per_seg, sbi->segs_per_sec);
	fprintf(out, "  areas (block)     cp %u, sit %u, nat %u, ssa %u, main %u\n",
		le32(sb->cp_blkaddr), le32(sb->sit_blkaddr), le32(sb->nat_blkaddr),
		le32(sb->ssa_blkaddr), le32(sb->main_blkaddr));
	fprintf(out, "  cp payload        %u blocks\n", le32(sb->cp_payload));
	print_devices(sbi, out);
	fprintf(out, "  inodes            root %u, max nid %u\n", sbi->root_ino, sbi->nm.max_nid);
	fprintf(out, "\nCheckpoint\n");
	fprintf(out, "  pack              %u (block %u), version %llu\n", sbi->cur_cp_pack,
		sbi->cur_cp_addr, (unsigned long long)sbi->cp_ver);
	fprintf(out, "  flags            ");
	for (size_t i = 0; i < ARRAY_SIZE(cp_flag_names); i++)
		if (flags & cp_flag_names[i].flag)
			fprintf(out, " %s", cp_flag_names[i].name);
	fprintf(out, "\n  state             %s\n",
		flags & CP_UMOUNT_FLAG ? "clean (unmounted)" : "not cleanly unmounted");
	for (int i = 0; i < NR_CURSEG_TYPE; i++)
		fprintf(out, "  curseg %-10s segment %u, next block %u%s\n", curseg_names[i],
			sbi->sm.curseg[i].segno, sbi->sm.curseg[i].next_blkoff,
			sbi->sm.curseg[i].alloc_type == ALLOC_SSR ? " (SSR)" : "");
	fprintf(out, "  NAT journal       %u entries; SIT journal %u entries\n",
		le16(sbi->nm.journal->n_nats),
		le16(sbi->sm.sum_blk[CURSEG_COLD_DATA]->journal.n_sits));
	fprintf(out, "  orphan inodes     %u\n", sbi->nr_orphans);
	fprintf(out, "  recovery          %s\n", sbi->need_recovery
		? "NEEDED: fsync'd data past the last checkpoint (roll-forward recovery)"
		: "not needed");
	if (sbi->need_recovery)
		fprintf(out, "  fsync'd dnodes    %u\n", sbi->nr_fsync_dnodes);
	fprintf(out, "\nUsage\n");
	fprintf(out, "  user blocks       %llu\n", (unsigned long long)user);
	fprintf(out, "  valid blocks      %llu (%.1f%%)\n", (unsigned long long)valid,
		user ? 100.0 * valid / user : 0.0);
	fprintf(out, "  valid nodes       %u, inodes %u\n", le32(cp->valid_node_count),
		le32(cp->valid_inode_count));
	fprintf(out, "  free segments     %u (checkpoint says %u)", sbi->sm.free_segments,
		le32(cp->free_segment_count));
	/* the checkpoint counts as Linux, without them (f2fs_cp_free_segments) */
	if (sbi->zone_cap_short)
		fprintf(out, ", %u of them past a zone's capacity",
			f2fs_count_free_segments(sbi) - f2fs_cp_free_segments(sbi));
	fprintf(out, "\n");
	fprintf(out, "  overprovision     %u segments, reserved %u\n",
		le32(cp->overprov_segment_count), le32(cp->rsvd_segment_count));
	print_zones(sbi, out);
}

/// Stats ///

struct sbuf {
	char *buf;
	size_t size, len;
};

static void sprintf_append(struct sbuf *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sprintf_append(struct sbuf *s, const char *fmt, ...)
{
	va_list ap;

	if (s->len + 1 >= s->size)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(s->buf + s->len, s->size - s->len, fmt, ap);

	va_end(ap);
	if (n > 0)
		s->len = MIN(s->len + n, s->size - 1);
}

static const char *const hist_labels[DEV_HIST_BUCKETS] = {
	"4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M", "2M", "2M+",
};

static void format_hist(struct sbuf *s, struct f2fs_dev_stats *st, int dir)
{
	uint64_t total = atomic_load(&st->reqs[dir]);

	for (int b = 0; b < DEV_HIST_BUCKETS; b++) {
		uint64_t n = atomic_load(&st->hist[dir][b]);

		if (n)
			sprintf_append(s, "    <=%-5s %10llu  %5.1f%%\n", hist_labels[b],
				       (unsigned long long)n, total ? 100.0 * n / total : 0.0);
	}
}

size_t uf2fs_format_stats(struct uf2fs *fs, char *buf, size_t size)
{
	struct f2fs_sb_info *sbi = SBI(fs);
	struct uf2fs_counters *c = sbi->ctr;
	struct f2fs_dev_stats *st = &sbi->dev.st;
	struct sbuf s = { buf, size, 0 };
	uint64_t hits = atomic_load(&c->cache_hits), miss = atomic_load(&c->cache_misses);

	if (!size)
		return 0;
	buf[0] = 0;
	sprintf_append(&s, "cache\n");
	sprintf_append(&s, "  size               %.1f / %.1f MiB\n",
		       folio_cache_bytes(sbi) / 1048576.0, folio_cache_limit(sbi) / 1048576.0);
	sprintf_append(&s, "  lookups            %llu hits, %llu misses (%.1f%% hit)\n",
		       (unsigned long long)hits, (unsigned long long)miss,
		       hits + miss ? 100.0 * hits / (hits + miss) : 0.0);
	sprintf_append(&s, "  evictions          %llu LRU, %llu drop-behind (%s)\n",
		       (unsigned long long)atomic_load(&c->cache_evictions),
		       (unsigned long long)atomic_load(&c->dropbehind),
		       sbi->opts.dontcache > 0 ? "on" : "off");
	sprintf_append(&s, "  folios by order   ");
	for (int o = 0; o < 10; o++)
		if (atomic_load(&c->folios_alloc[o]))
			sprintf_append(&s, " %d:%llu", o,
				       (unsigned long long)atomic_load(&c->folios_alloc[o]));
	sprintf_append(&s, "\n  folio state        %llu allocated, %llu skipped\n",
		       (unsigned long long)atomic_load(&c->state_alloc),
		       (unsigned long long)atomic_load(&c->state_skipped));
	sprintf_append(&s, "mapping\n");
	sprintf_append(&s, "  map calls          %llu (%llu from the extent cache)\n",
		       (unsigned long long)atomic_load(&c->map_calls),
		       (unsigned long long)atomic_load(&c->extent_hits));
	sprintf_append(&s, "  node reads         %llu\n",
		       (unsigned long long)atomic_load(&c->node_reads));
	sprintf_append(&s, "  hole blocks        %llu (zero-filled, no I/O)\n",
		       (unsigned long long)atomic_load(&c->hole_blocks));
	sprintf_append(&s, "  clusters decomp.   %llu\n",
		       (unsigned long long)atomic_load(&c->decompressed_clusters));
	sprintf_append(&s, "  clusters compr.    %llu (written compressed)\n",
		       (unsigned long long)atomic_load(&c->compressed_clusters));
	sprintf_append(&s, "writes\n");
	sprintf_append(&s, "  encrypted wb       %llu blocks in %llu calls (folio writeback)\n",
		       (unsigned long long)atomic_load(&c->crypt_wb_blocks),
		       (unsigned long long)atomic_load(&c->crypt_wb_calls));
	sprintf_append(&s, "  dirty              %.1f MiB (data %.1f, nodes %.1f)\n",
		       folio_dirty_bytes(sbi) / 1048576.0,
		       folio_dirty_blocks(sbi, MAP_DATA) * F2FS_BLKSIZE / 1048576.0,
		       folio_dirty_blocks(sbi, MAP_NODE) * F2FS_BLKSIZE / 1048576.0);
	sprintf_append(&s, "  dirty walks        %llu folios visited\n",
		       (unsigned long long)atomic_load(&sbi->ctr->dirty_visits));
	sprintf_append(&s, "  blocks written     %llu (data; %llu of them written through, "
		       "no folio)\n", (unsigned long long)atomic_load(&c->written_blocks),
		       (unsigned long long)atomic_load(&c->through_blocks));
	sprintf_append(&s, "  checkpoints        %llu\n",
		       (unsigned long long)atomic_load(&c->checkpoints));
	sprintf_append(&s, "  flusher            %llu rounds, %llu inodes written back, "
		       "%llu checkpoints\n", (unsigned long long)atomic_load(&c->flusher_runs),
		       (unsigned long long)atomic_load(&c->flusher_inodes),
		       (unsigned long long)atomic_load(&c->flusher_checkpoints));
	sprintf_append(&s, "  gc                 %llu segments, %llu data blocks moved\n",
		       (unsigned long long)atomic_load(&c->gc_segments),
		       (unsigned long long)atomic_load(&c->gc_blocks));
	sprintf_append(&s, "  in-place (IPU)     %llu data blocks (ipu_policy 0x%x%s)\n",
		       (unsigned long long)atomic_load(&c->ipu_blocks), sbi->sm.ipu_policy,
		       f2fs_lfs_mode(sbi) ? ", mode=lfs" : "");
	sprintf_append(&s, "  segments opened    %llu clean (LFS), %llu used (SSR, %llu blocks)\n",
		       (unsigned long long)atomic_load(&c->lfs_segments),
		       (unsigned long long)atomic_load(&c->ssr_segments),
		       (unsigned long long)atomic_load(&c->ssr_blocks));
	sprintf_append(&s, "reads\n");
	sprintf_append(&s, "  calls              %llu, %.1f MiB\n",
		       (unsigned long long)atomic_load(&c->read_calls),
		       atomic_load(&c->read_bytes) / 1048576.0);
	sprintf_append(&s, "  xattr lookups      %llu\n",
		       (unsigned long long)atomic_load(&c->xattr_gets));
	sprintf_append(&s, "device\n");
	for (int d = 0; d < DEV_NR_DIR; d++) {
		sprintf_append(&s, "  %-5s requests     %llu, %.1f MiB\n", d == DEV_READ ? "read" : "write",
			       (unsigned long long)atomic_load(&st->reqs[d]),
			       atomic_load(&st->bytes[d]) / 1048576.0);
		format_hist(&s, st, d);
	}
	sprintf_append(&s, "  flushes %llu, FUA writes %llu, discards %llu (%llu allocation waits)\n",
		       (unsigned long long)atomic_load(&st->flushes),
		       (unsigned long long)atomic_load(&st->fua_writes),
		       (unsigned long long)atomic_load(&st->discards),
		       (unsigned long long)atomic_load(&c->discard_waits));
	if (sbi->zoned)
		sprintf_append(&s, "  zoned: %llu writes (requests) into sequential zones, %llu refused (not at "
			       "the write pointer), %llu zones reset\n",
			       (unsigned long long)atomic_load(&st->zone_writes),
			       (unsigned long long)atomic_load(&st->zone_refused),
			       (unsigned long long)atomic_load(&st->zone_resets));
	return s.len;
}

void uf2fs_print_stats(struct uf2fs *fs, FILE *out)
{
	char *buf = malloc(UF2FS_IOC_STATS_SIZE);

	if (!buf)
		return;
	uf2fs_format_stats(fs, buf, UF2FS_IOC_STATS_SIZE);
	fputs(buf, out);
	free(buf);
}
