// SPDX-License-Identifier: GPL-2.0
/*
 * FS_IOC_ENABLE_VERITY (the kernel's fs/verity/enable.c): the Merkle tree
 * built over the data, level by level, each finished tree block handed on
 * (to the file system's write_merkle_tree_block), the root hash at the
 * end, then the descriptor; the file system's begin/end_enable_verity make
 * room for them and keep them.
 */
#include <errno.h>
#include <linux/fsverity.h>
#include <openssl/evp.h>
#include <string.h>
#include <stdlib.h>

#include "fsverity_private.h"

/* Pending tree blocks, one per level, filled with the hashes of the level below. */
struct tree_builder {
	const struct verity_params *p;
	verity_emit_t emit;
	void *arg;
	uint8_t *level[VERITY_MAX_LEVELS];
	size_t filled[VERITY_MAX_LEVELS];
	uint64_t done[VERITY_MAX_LEVELS];
	uint8_t *root;
};

static int tree_add_hash(struct tree_builder *t, unsigned int level, const uint8_t *h);

static int tree_flush_level(struct tree_builder *t, unsigned int level)
{
	const struct verity_params *p = t->p;
	uint8_t h[VERITY_MAX_DIGEST];
	int ret;

	memset(t->level[level] + t->filled[level], 0, p->bs - t->filled[level]);
	if (t->emit) {
		ret = t->emit(t->arg, t->level[level], p->level_start[level] + t->done[level]);
		if (ret)
			return ret;
	}
	t->done[level]++;
	t->filled[level] = 0;
	ret = verity_hash_block(p, t->level[level], h);
	return ret ? ret : tree_add_hash(t, level + 1, h);
}

static int tree_add_hash(struct tree_builder *t, unsigned int level, const uint8_t *h)
{
	const struct verity_params *p = t->p;

	if (level == p->num_levels) {
		memcpy(t->root, h, p->digest_size);
		return 0;
	}
	memcpy(t->level[level] + t->filled[level], h, p->digest_size);
	t->filled[level] += p->digest_size;
	return t->filled[level] == p->bs ? tree_flush_level(t, level) : 0;
}

int verity_build_tree(const struct verity_params *p, verity_read_t read, verity_emit_t emit,
		      void *arg, uint8_t *root)
{
	struct tree_builder t = { .p = p, .emit = emit, .arg = arg, .root = root };
	uint8_t h[VERITY_MAX_DIGEST], *block = NULL;
	int ret = 0;

	memset(root, 0, VERITY_MAX_DIGEST);
	if (!p->data_size)
		return 0;	/* as fs/verity: an empty file's root hash is all zeroes */
	block = malloc(p->bs);
	for (unsigned int i = 0; i < p->num_levels; i++)
		t.level[i] = calloc(1, p->bs);
	for (unsigned int i = 0; i < p->num_levels; i++)
		if (!t.level[i])
			ret = -ENOMEM;
	if (!block)
		ret = -ENOMEM;
	for (uint64_t off = 0; off < p->data_size && !ret; off += p->bs) {
		size_t n = p->data_size - off < p->bs ? p->data_size - off : p->bs;
		ssize_t got = read(arg, block, n, off);

		if (got < 0) {
			ret = (int)got;
			break;
		}
		if ((size_t)got != n) {
			ret = -EIO;
			break;
		}
		memset(block + n, 0, p->bs - n);
		ret = verity_hash_block(p, block, h);
		if (!ret)
			ret = tree_add_hash(&t, 0, h);
	}
	for (unsigned int i = 0; i < p->num_levels && !ret; i++)
		if (t.filled[i])
			ret = tree_flush_level(&t, i);
	for (unsigned int i = 0; i < p->num_levels; i++)
		free(t.level[i]);
	free(block);
	return ret;
}

/// FS_IOC_ENABLE_VERITY ///

struct enable_ctx {
	const struct fsverity_sb *vsb;
	struct fsverity_inode *inode;
	unsigned int log_bs;
};

static ssize_t enable_read(void *arg, void *buf, size_t len, uint64_t off)
{
	struct enable_ctx *c = arg;

	return c->vsb->ops->read_data(c->vsb->fs, c->inode, buf, len, off);
}

static int enable_emit(void *arg, const void *block, uint64_t index)
{
	struct enable_ctx *c = arg;

	return c->vsb->ops->write_merkle_tree_block(c->vsb->fs, c->inode, block,
						    index << c->log_bs, c->log_bs);
}

/* The descriptor with its signature appended, as it is stored. */
static uint8_t *build_descriptor(const struct verity_params *p, const uint8_t *root,
				 const struct uf2fs_verity_arg *arg)
{
	uint8_t *desc = calloc(1, VERITY_DESC_SIZE + arg->sig_size);

	if (!desc)
		return NULL;
	verity_make_descriptor(p, root, desc);
	verity_put_le32(desc + DESC_SIG_SIZE, arg->sig_size);
	if (arg->sig_size)
		memcpy(desc + VERITY_DESC_SIZE, arg->sig, arg->sig_size);
	return desc;
}

/* As enable_verity's fsverity_create_info: a signature that fails rolls back. */
static int check_new_signature(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
			       const struct verity_params *p, const uint8_t *desc,
			       const struct uf2fs_verity_arg *arg)
{
	uint8_t d[VERITY_DESC_SIZE], digest[VERITY_MAX_DIGEST];
	int ret;

	if (!arg->sig_size)
		return fsverity_verify_signature(vsb, p, NULL, NULL, 0, vsb->ops->ino(inode));
	memcpy(d, desc, sizeof(d));
	verity_put_le32(d + DESC_SIG_SIZE, 0);
	ret = verity_hash(p, d, sizeof(d), digest);
	return ret ? ret : fsverity_verify_signature(vsb, p, digest, arg->sig, arg->sig_size,
						     vsb->ops->ino(inode));
}

int fsverity_enable(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
		    const struct uf2fs_verity_arg *arg)
{
	const struct fsverity_operations *ops = vsb->ops;
	size_t desc_size = VERITY_DESC_SIZE + arg->sig_size;
	struct enable_ctx c = { .vsb = vsb, .inode = inode };
	uint8_t root[VERITY_MAX_DIGEST], *desc = NULL;
	struct verity_params p;
	uint64_t tree_size;
	int ret = verity_params_init(&p, arg->hash_algorithm, verity_ilog2_u32(arg->block_size),
				     arg->salt, arg->salt_size, ops->size(inode));

	if (!ret && p.log_bs > fsverity_max_log_bs(vsb))
		ret = -EINVAL;
	if (ret)
		return ret;
	c.log_bs = p.log_bs;
	tree_size = p.tree_blocks << p.log_bs;
	ret = ops->begin_enable_verity(vsb->fs, inode, p.log_bs, tree_size, desc_size);
	if (!ret)
		ret = verity_build_tree(&p, enable_read, enable_emit, &c, root);
	if (!ret) {
		desc = build_descriptor(&p, root, arg);
		ret = desc ? check_new_signature(vsb, inode, &p, desc, arg) : -ENOMEM;
		if (!ret)
			ret = ops->end_enable_verity(vsb->fs, inode, desc, desc_size, tree_size);
		free(desc);
	}
	/* as the kernel's rollback: the file system drops what it wrote */
	if (ret)
		ops->end_enable_verity(vsb->fs, inode, NULL, 0, tree_size);
	return ret;
}
