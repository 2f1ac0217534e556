// SPDX-License-Identifier: GPL-2.0
/*
 * Building the Merkle tree (the kernel's fs/verity/enable.c): data blocks
 * hashed level by level, each finished tree block handed to the caller,
 * the root hash at the end.
 */
#include <errno.h>
#include <linux/fsverity.h>
#include <openssl/evp.h>
#include <string.h>
#include <stdlib.h>

#include "fsverity.h"

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
