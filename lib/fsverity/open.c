// SPDX-License-Identifier: GPL-2.0
/*
 * A file's Merkle tree parameters and its descriptor (the kernel's
 * fs/verity/open.c): the shape of the tree for a size, block size, hash and
 * salt; the 256-byte descriptor built and checked as fs/verity does.
 */
#include <errno.h>
#include <linux/fsverity.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsverity_private.h"

int verity_params_init(struct verity_params *p, unsigned int alg, unsigned int log_bs,
		       const void *salt, unsigned int salt_size, uint64_t data_size)
{
	const EVP_MD *md;
	uint64_t blocks, count[VERITY_MAX_LEVELS], pos = 0;
	unsigned int hblock;

	memset(p, 0, sizeof(*p));
	if (alg == FS_VERITY_HASH_ALG_SHA256)
		md = EVP_sha256();
	else if (alg == FS_VERITY_HASH_ALG_SHA512)
		md = EVP_sha512();
	else
		return -EINVAL;
	/* as fsverity_init_merkle_tree_params: sector size up to the page and fs block */
	if (log_bs < 10 || log_bs > VERITY_MAX_LOG_BS)
		return -EINVAL;
	if (salt_size > VERITY_MAX_SALT)
		return -EMSGSIZE;
	p->alg = alg;
	p->md = md;
	p->digest_size = EVP_MD_get_size(md);
	p->log_bs = log_bs;
	p->bs = 1u << log_bs;
	p->log_arity = log_bs - verity_ilog2_u32(p->digest_size);
	p->salt_size = salt_size;
	if (salt_size) {
		memcpy(p->salt, salt, salt_size);
		hblock = EVP_MD_get_block_size(md);
		memcpy(p->padded_salt, salt, salt_size);
		p->padded_salt_size = (salt_size + hblock - 1) / hblock * hblock;
	}
	p->data_size = data_size;
	blocks = (data_size + p->bs - 1) >> log_bs;
	while (blocks > 1) {
		if (p->num_levels >= VERITY_MAX_LEVELS)
			return -EFBIG;
		blocks = (blocks + (1u << p->log_arity) - 1) >> p->log_arity;
		count[p->num_levels++] = blocks;
	}
	/* the level nearest the root is stored first */
	for (int level = (int)p->num_levels - 1; level >= 0; level--) {
		p->level_start[level] = pos;
		pos += count[level];
	}
	p->tree_blocks = pos;
	return 0;
}

/* struct fsverity_descriptor: the byte offsets of <linux/fsverity.h>. */
_Static_assert(sizeof(struct fsverity_descriptor) == VERITY_DESC_SIZE, "descriptor size");
_Static_assert(offsetof(struct fsverity_descriptor, root_hash) == DESC_ROOT, "root_hash");
_Static_assert(offsetof(struct fsverity_descriptor, salt) == DESC_SALT, "salt");
_Static_assert(offsetof(struct fsverity_descriptor, __reserved) == DESC_RESERVED, "reserved");

void verity_make_descriptor(const struct verity_params *p, const uint8_t *root, uint8_t *desc)
{
	memset(desc, 0, VERITY_DESC_SIZE);
	desc[0] = 1;
	desc[1] = (uint8_t)p->alg;
	desc[2] = (uint8_t)p->log_bs;
	desc[3] = (uint8_t)p->salt_size;
	verity_put_le64(desc + DESC_DATA_SIZE, p->data_size);
	memcpy(desc + DESC_ROOT, root, p->digest_size);
	memcpy(desc + DESC_SALT, p->salt, p->salt_size);
}

int verity_parse_descriptor(struct verity_params *p, const void *desc, size_t desc_size,
			    uint64_t i_size, uint8_t *root)
{
	const uint8_t *d = desc;
	int ret;

	if (desc_size < VERITY_DESC_SIZE || d[0] != 1)
		return -EINVAL;
	for (size_t i = DESC_RESERVED; i < VERITY_DESC_SIZE; i++)
		if (d[i])
			return -EINVAL;
	if (verity_get_le32(d + DESC_SIG_SIZE) > desc_size - VERITY_DESC_SIZE)
		return -EBADMSG;
	if (verity_get_le64(d + DESC_DATA_SIZE) != i_size)
		return -EINVAL;
	ret = verity_params_init(p, d[1], d[2], d + DESC_SALT, d[3], i_size);
	if (!ret)
		memcpy(root, d + DESC_ROOT, p->digest_size);
	return ret;
}

/// The per-inode info (fsverity_get_info, fsverity_file_open) ///

int fsverity_err(const struct fsverity_sb *vsb, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return vsb->ops->error(vsb->fs, err, msg);
}

static void free_info(struct fsverity_info *vi)
{
	EVP_MD_CTX_free(vi->ctx);
	EVP_MD_CTX_free(vi->salted);
	free(vi->slots);
	free(vi->scratch);
	free(vi);
}

void fsverity_free_info(struct fsverity_inode *inode)
{
	struct fsverity_info *vi = inode->vi;

	if (!vi)
		return;
	inode->vi = NULL;
	pthread_mutex_destroy(&vi->lock);
	free_info(vi);
}

unsigned int fsverity_block_size(const struct fsverity_info *vi)
{
	return vi->p.bs;
}

int fsverity_read_stored_descriptor(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
				    uint8_t **descp, size_t *sizep)
{
	int size = vsb->ops->get_verity_descriptor(vsb->fs, inode, NULL, 0);
	uint8_t *desc;
	int ret;

	if (size < 0)
		return size;
	desc = malloc(size ? size : 1);
	if (!desc)
		return -ENOMEM;
	ret = vsb->ops->get_verity_descriptor(vsb->fs, inode, desc, size);
	if (ret) {
		free(desc);
		return ret;
	}
	*descp = desc;
	*sizep = (size_t)size;
	return 0;
}

/* The descriptor as the file system stores it, checked, and the file digest. */
static int read_descriptor(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
			   struct fsverity_info *vi)
{
	const struct fsverity_operations *ops = vsb->ops;
	uint8_t *desc;
	size_t size;
	int ret = fsverity_read_stored_descriptor(vsb, inode, &desc, &size);

	if (ret)
		return ret;
	ret = verity_parse_descriptor(&vi->p, desc, size, ops->size(inode), vi->root);
	if (!ret && vi->p.log_bs > fsverity_max_log_bs(vsb))
		ret = -EINVAL;	/* a Merkle block larger than the fs block */
	if (ret)
		fsverity_err(vsb, -ret, "inode %u: invalid verity descriptor", ops->ino(inode));
	if (!ret) {
		uint32_t sig_size = verity_get_le32(desc + DESC_SIG_SIZE);

		/* the file digest covers the descriptor with no signature */
		verity_put_le32(desc + DESC_SIG_SIZE, 0);
		ret = verity_hash(&vi->p, desc, VERITY_DESC_SIZE, vi->digest);
		if (!ret)	/* as fsverity_create_info: at every load */
			ret = fsverity_verify_signature(vsb, &vi->p, vi->digest,
							desc + VERITY_DESC_SIZE, sig_size,
							ops->ino(inode));
	}
	free(desc);
	return ret;
}

static int create_info(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
		       struct fsverity_info **out)
{
	struct fsverity_info *vi = calloc(1, sizeof(*vi));
	int ret;

	if (!vi)
		return -ENOMEM;
	ret = read_descriptor(vsb, inode, vi);
	if (!ret) {
		vi->slots = malloc((size_t)VERITY_CACHE_SLOTS * vi->p.bs);
		vi->scratch = malloc((size_t)VERITY_MAX_LEVELS * vi->p.bs);
		vi->ctx = EVP_MD_CTX_new();
		vi->salted = EVP_MD_CTX_new();
		if (!vi->slots || !vi->scratch || !vi->ctx || !vi->salted)
			ret = -ENOMEM;
	}
	if (!ret && (!EVP_DigestInit_ex(vi->salted, vi->p.md, NULL) ||
		     (vi->p.padded_salt_size &&
		      !EVP_DigestUpdate(vi->salted, vi->p.padded_salt, vi->p.padded_salt_size))))
		ret = -EIO;
	if (ret) {
		free_info(vi);
		return ret;
	}
	pthread_mutex_init(&vi->lock, NULL);
	*out = vi;
	return 0;
}

int fsverity_get_info(const struct fsverity_sb *vsb, struct fsverity_inode *inode,
		      struct fsverity_info **out)
{
	struct fsverity_info *vi = __atomic_load_n(&inode->vi, __ATOMIC_ACQUIRE), *none = NULL;
	int ret;

	if (vi) {
		*out = vi;
		return 0;
	}
	ret = create_info(vsb, inode, &vi);
	if (ret)
		return ret;
	/* as fsverity_set_info: the first loader publishes, a racing one frees its copy */
	if (!__atomic_compare_exchange_n(&inode->vi, &none, vi, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		pthread_mutex_destroy(&vi->lock);
		free_info(vi);
		vi = none;
	}
	*out = vi;
	return 0;
}
