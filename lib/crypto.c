// SPDX-License-Identifier: GPL-2.0
/*
 * fscrypt for f2fs: what Linux's fs/crypto does for an encrypted f2fs tree,
 * in userspace. This file owns the mount's keyring (master keys given in a
 * key file or added on a live mount), the per-inode encryption info set up
 * from the context xattr (index 9, name "c"), the key derivations (v1:
 * AES-128-ECB of the master key keyed by the nonce; v2: HKDF-SHA512 with
 * the kernel's contexts; DIRECT_KEY and IV_INO_LBLK_64/32 per-mode keys),
 * the IVs, and the transforms of names (with the kernel's NUL padding, its
 * no-key names and its dirhash), symlink targets and file data.
 *
 * Keys live only in fscrypt_secret_alloc() memory (mlocked, wiped on free).
 * Removal of a key wipes it and every key derived from it at once; the
 * per-inode info that used it stays allocated but dead (so a reader that
 * raced the removal sees ENOKEY, never freed memory) until the inode goes.
 * One rwlock guards it: transforms hold it shared, add/remove/setup
 * exclusive.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crypto.h"
#include "crypto_alg.h"
#include "crypto_workers.h"
#include "f2fs.h"

#define MAX_MODE		16
enum { PM_DIRECT, PM_LBLK64, PM_LBLK32, PM_NR };

struct fscrypt_master_key {
	struct fscrypt_master_key *next;
	int version;
	uint8_t spec[FSCRYPT_KEY_IDENTIFIER_SIZE];
	uint8_t *secret;		/* secret memory */
	size_t len;
	struct fscrypt_cipher *mode_keys[PM_NR][MAX_MODE];
	uint8_t *ino_hash_key;		/* 16 bytes, secret memory; LBLK_32 */
	struct fscrypt_info *users;	/* infos set up with this key */
};

struct fscrypt_info {
	struct fscrypt_info *next_user;	/* master key's list, or the graveyard */
	struct fscrypt_master_key *mk;
	struct fscrypt_keyring *kr;
	struct fscrypt_cipher *cipher;
	bool shared;			/* cipher is the master key's per-mode key */
	bool dead;			/* its key was removed */
	struct fscrypt_pol pol;
	uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE];
	uint8_t *dirhash_key;		/* 16 bytes of secret memory, casefolded dirs only */
	bool has_dirhash;
	uint32_t hashed_ino;
	nid_t ino;
	unsigned int du_bits;		/* data unit size, log2 */
};

struct fscrypt_keyring {
	pthread_rwlock_t lock;
	struct fscrypt_master_key *keys;
	struct fscrypt_info *graveyard;	/* dead infos an inode may still point at */
};

/// Formats ///

static size_t spec_size(int version)
{
	return version == 1 ? FSCRYPT_KEY_DESCRIPTOR_SIZE : FSCRYPT_KEY_IDENTIFIER_SIZE;
}

bool fscrypt_policy_valid(const struct fscrypt_pol *p)
{
	uint8_t c = p->contents_mode, f = p->filenames_mode;
	bool modes = (c == FSCRYPT_MODE_AES_256_XTS && f == FSCRYPT_MODE_AES_256_CTS) ||
		     (c == FSCRYPT_MODE_AES_128_CBC && f == FSCRYPT_MODE_AES_128_CTS) ||
		     (c == FSCRYPT_MODE_ADIANTUM && f == FSCRYPT_MODE_ADIANTUM) ||
		     (c == FSCRYPT_MODE_AES_256_XTS && f == FSCRYPT_MODE_AES_256_HCTR2);
	unsigned int iv_flags = p->flags & (FSCRYPT_POLICY_FLAG_DIRECT_KEY |
					    FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 |
					    FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32);

	if (!modes || (p->flags & ~0x1fu) || (iv_flags & (iv_flags - 1)))
		return false;
	if (p->version == FSCRYPT_CONTEXT_V1)
		return !(p->flags & (FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 |
				     FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32));
	if (p->version != FSCRYPT_CONTEXT_V2)
		return false;
	/* v2 DIRECT_KEY needs the nonce in a 32-byte IV: Adiantum and HCTR2 only */
	if ((p->flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) && fscrypt_mode_iv_size(c) < 32)
		return false;
	return !p->log2_data_unit_size ||
	       (p->log2_data_unit_size >= 9 && p->log2_data_unit_size <= F2FS_BLKSIZE_BITS);
}

int fscrypt_parse_context(const uint8_t *ctx, size_t len, struct fscrypt_pol *p,
			  uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE])
{
	memset(p, 0, sizeof(*p));
	if (len < 1)
		return -EINVAL;
	p->version = ctx[0];
	if (p->version == FSCRYPT_CONTEXT_V1 && len == FSCRYPT_CONTEXT_V1_SIZE) {
		p->contents_mode = ctx[1];
		p->filenames_mode = ctx[2];
		p->flags = ctx[3];
		memcpy(p->key_spec, ctx + 4, FSCRYPT_KEY_DESCRIPTOR_SIZE);
		memcpy(nonce, ctx + 12, FSCRYPT_FILE_NONCE_SIZE);
	} else if (p->version == FSCRYPT_CONTEXT_V2 && len == FSCRYPT_CONTEXT_V2_SIZE) {
		p->contents_mode = ctx[1];
		p->filenames_mode = ctx[2];
		p->flags = ctx[3];
		p->log2_data_unit_size = ctx[4];
		if (ctx[5] || ctx[6] || ctx[7])
			return -EINVAL;
		memcpy(p->key_spec, ctx + 8, FSCRYPT_KEY_IDENTIFIER_SIZE);
		memcpy(nonce, ctx + 24, FSCRYPT_FILE_NONCE_SIZE);
	} else {
		return -EINVAL;
	}
	return fscrypt_policy_valid(p) ? 0 : -EINVAL;
}

size_t fscrypt_build_context(const struct fscrypt_pol *p,
			     const uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE], uint8_t *out)
{
	out[0] = p->version;
	out[1] = p->contents_mode;
	out[2] = p->filenames_mode;
	out[3] = p->flags;
	if (p->version == FSCRYPT_CONTEXT_V1) {
		memcpy(out + 4, p->key_spec, FSCRYPT_KEY_DESCRIPTOR_SIZE);
		memcpy(out + 12, nonce, FSCRYPT_FILE_NONCE_SIZE);
		return FSCRYPT_CONTEXT_V1_SIZE;
	}
	out[4] = p->log2_data_unit_size;
	out[5] = out[6] = out[7] = 0;
	memcpy(out + 8, p->key_spec, FSCRYPT_KEY_IDENTIFIER_SIZE);
	memcpy(out + 24, nonce, FSCRYPT_FILE_NONCE_SIZE);
	return FSCRYPT_CONTEXT_V2_SIZE;
}

int fscrypt_hkdf(const uint8_t *master, size_t mlen, uint8_t context, const uint8_t *info,
		 size_t info_len, uint8_t *out, size_t out_len)
{
	uint8_t full[9 + 32];

	if (info_len > 32)
		return -EINVAL;
	memcpy(full, "fscrypt\0", 8);
	full[8] = context;
	if (info_len)
		memcpy(full + 9, info, info_len);
	return fscrypt_hkdf_sha512(master, mlen, full, 9 + info_len, out, out_len);
}

int fscrypt_key_identifier(const uint8_t *master, size_t mlen,
			   uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE])
{
	return fscrypt_hkdf(master, mlen, HKDF_CONTEXT_KEY_IDENTIFIER, NULL, 0, id,
			    FSCRYPT_KEY_IDENTIFIER_SIZE);
}

size_t fscrypt_fname_encrypted_size(size_t len, unsigned int pad, size_t max_len)
{
	size_t n = MAX(len, (size_t)16);

	n = (n + pad - 1) / pad * pad;
	return MIN(n, max_len);
}

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t base64url_encode(const uint8_t *src, size_t len, char *dst)
{
	uint32_t ac = 0;
	int bits = 0;
	char *cp = dst;

	for (size_t i = 0; i < len; i++) {
		ac = (ac << 8) | src[i];
		bits += 8;
		do {
			bits -= 6;
			*cp++ = b64url[(ac >> bits) & 0x3f];
		} while (bits >= 6);
	}
	if (bits)
		*cp++ = b64url[(ac << (6 - bits)) & 0x3f];
	*cp = 0;
	return cp - dst;
}

/* Strict, as the kernel's: no padding, unused trailing bits must be zero. */
int fscrypt_base64url_decode(const char *src, size_t len, uint8_t *dst, size_t dst_max)
{
	uint32_t ac = 0;
	int bits = 0;
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		const char *p = src[i] ? strchr(b64url, src[i]) : NULL;

		if (!p)
			return -EINVAL;
		ac = (ac << 6) | (uint32_t)(p - b64url);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == dst_max)
				return -EINVAL;
			dst[n++] = (uint8_t)(ac >> bits);
		}
	}
	if (ac & ((1u << bits) - 1))
		return -EINVAL;
	return (int)n;
}

size_t fscrypt_nokey_encode(uint32_t hash, uint32_t minor_hash, const uint8_t *ct, size_t len,
			    char *out)
{
	uint8_t nk[FSCRYPT_NOKEY_NAME_MAX];
	size_t size;

	/* dirhash is native u32 in the kernel's struct: little-endian here */
	for (int i = 0; i < 4; i++) {
		nk[i] = hash >> (8 * i);
		nk[4 + i] = minor_hash >> (8 * i);
	}
	if (len <= FSCRYPT_NOKEY_BYTES) {
		memcpy(nk + 8, ct, len);
		size = 8 + len;
	} else {
		memcpy(nk + 8, ct, FSCRYPT_NOKEY_BYTES);
		fscrypt_sha256(ct + FSCRYPT_NOKEY_BYTES, len - FSCRYPT_NOKEY_BYTES,
			       nk + 8 + FSCRYPT_NOKEY_BYTES);
		size = FSCRYPT_NOKEY_NAME_MAX;
	}
	return base64url_encode(nk, size, out);
}

/// Keyring ///

int fscrypt_keyring_init(struct f2fs_sb_info *sbi)
{
	struct fscrypt_keyring *kr = calloc(1, sizeof(*kr));

	if (!kr)
		return -ENOMEM;
	pthread_rwlock_init(&kr->lock, NULL);
	sbi->keyring = kr;
	return 0;
}

/*
 * The info itself is ordinary memory (one mlocked page per inode would
 * exhaust RLIMIT_MEMLOCK); what is secret in it lives in secret memory.
 */
static void free_info(struct fscrypt_info *ci)
{
	if (!ci->shared && ci->cipher)
		fscrypt_cipher_free(ci->cipher);
	if (ci->dirhash_key)
		fscrypt_secret_free(ci->dirhash_key, 16);
	free(ci);
}

/* Wipe what the info holds; the struct itself stays for whoever points at it. */
static void kill_info(struct fscrypt_info *ci)
{
	if (!ci->shared && ci->cipher)
		fscrypt_cipher_free(ci->cipher);
	ci->cipher = NULL;
	ci->mk = NULL;
	ci->dead = true;
	if (ci->dirhash_key)
		fscrypt_secret_free(ci->dirhash_key, 16);
	ci->dirhash_key = NULL;
	ci->has_dirhash = false;
}

static void free_master_key(struct fscrypt_master_key *mk)
{
	for (int k = 0; k < PM_NR; k++)
		for (int m = 0; m < MAX_MODE; m++)
			if (mk->mode_keys[k][m])
				fscrypt_cipher_free(mk->mode_keys[k][m]);
	if (mk->ino_hash_key)
		fscrypt_secret_free(mk->ino_hash_key, 16);
	fscrypt_secret_free(mk->secret, mk->len);
	fscrypt_secret_free(mk, sizeof(*mk));
}

void fscrypt_keyring_destroy(struct f2fs_sb_info *sbi)
{
	struct fscrypt_keyring *kr = sbi->keyring;

	if (!kr)
		return;
	/* the inode cache is gone: every info was put, only keys and the dead remain */
	while (kr->keys) {
		struct fscrypt_master_key *mk = kr->keys;

		kr->keys = mk->next;
		for (struct fscrypt_info *ci = mk->users; ci;) {
			struct fscrypt_info *n = ci->next_user;

			free_info(ci);
			ci = n;
		}
		free_master_key(mk);
	}
	while (kr->graveyard) {
		struct fscrypt_info *ci = kr->graveyard;

		kr->graveyard = ci->next_user;
		free_info(ci);
	}
	pthread_rwlock_destroy(&kr->lock);
	free(kr);
	sbi->keyring = NULL;
}

static struct fscrypt_master_key *find_key(struct fscrypt_keyring *kr, int version,
					   const uint8_t *spec)
{
	for (struct fscrypt_master_key *mk = kr->keys; mk; mk = mk->next)
		if (mk->version == version && !memcmp(mk->spec, spec, spec_size(version)))
			return mk;
	return NULL;
}

int fscrypt_add_key(struct f2fs_sb_info *sbi, const uint8_t *key, size_t len,
		    const uint8_t *desc, uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE])
{
	struct fscrypt_keyring *kr = sbi->keyring;
	struct fscrypt_master_key *mk;
	int version = desc ? 1 : 2;
	int ret;

	if (len < FSCRYPT_MIN_KEY_SIZE || len > FSCRYPT_MAX_KEY_SIZE)
		return -EINVAL;
	mk = fscrypt_secret_alloc(sizeof(*mk));
	if (!mk)
		return -ENOMEM;
	memset(mk, 0, sizeof(*mk));
	mk->secret = fscrypt_secret_alloc(len);
	if (!mk->secret) {
		fscrypt_secret_free(mk, sizeof(*mk));
		return -ENOMEM;
	}
	memcpy(mk->secret, key, len);
	mk->len = len;
	mk->version = version;
	if (desc) {
		memcpy(mk->spec, desc, FSCRYPT_KEY_DESCRIPTOR_SIZE);
	} else {
		ret = fscrypt_key_identifier(key, len, mk->spec);
		if (ret) {
			free_master_key(mk);
			return ret;
		}
	}
	if (id)
		memcpy(id, mk->spec, FSCRYPT_KEY_IDENTIFIER_SIZE);
	pthread_rwlock_wrlock(&kr->lock);
	if (find_key(kr, version, mk->spec)) {
		/* as the kernel: adding a key that is present again is a success */
		pthread_rwlock_unlock(&kr->lock);
		free_master_key(mk);
		return 0;
	}
	mk->next = kr->keys;
	kr->keys = mk;
	pthread_rwlock_unlock(&kr->lock);
	return 0;
}

int fscrypt_remove_key(struct f2fs_sb_info *sbi, const uint8_t *spec, size_t spec_len)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	int version = spec_len == FSCRYPT_KEY_DESCRIPTOR_SIZE ? 1 : 2;
	struct fscrypt_master_key **pp, *mk = NULL;

	if (spec_len != spec_size(version))
		return -EINVAL;
	pthread_rwlock_wrlock(&kr->lock);
	for (pp = &kr->keys; *pp; pp = &(*pp)->next) {
		if ((*pp)->version == version && !memcmp((*pp)->spec, spec, spec_len)) {
			mk = *pp;
			*pp = mk->next;
			break;
		}
	}
	if (mk) {
		while (mk->users) {
			struct fscrypt_info *ci = mk->users;

			mk->users = ci->next_user;
			kill_info(ci);
			ci->next_user = kr->graveyard;
			kr->graveyard = ci;
		}
		free_master_key(mk);
	}
	pthread_rwlock_unlock(&kr->lock);
	return mk ? 0 : -ENOKEY;
}

bool fscrypt_has_key(struct f2fs_sb_info *sbi, const uint8_t *spec, size_t spec_len)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	int version = spec_len == FSCRYPT_KEY_DESCRIPTOR_SIZE ? 1 : 2;
	bool found;

	pthread_rwlock_rdlock(&kr->lock);
	found = find_key(kr, version, spec);
	pthread_rwlock_unlock(&kr->lock);
	return found;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Hex digits to bytes; the count of bytes, or -EINVAL. */
static int parse_hex(const char *s, size_t n, uint8_t *out, size_t max)
{
	if (n % 2 || n / 2 > max)
		return -EINVAL;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hexval(s[i]), lo = hexval(s[i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

/* One line of a key file: "HEX" (v2) or "DESCRIPTOR:HEX" (v1). */
static int add_key_line(struct f2fs_sb_info *sbi, const char *path, unsigned int lineno,
			char *line)
{
	uint8_t *key = fscrypt_secret_alloc(FSCRYPT_MAX_KEY_SIZE);
	uint8_t desc[FSCRYPT_KEY_DESCRIPTOR_SIZE];
	char *colon = strchr(line, ':');
	const char *hex = colon ? colon + 1 : line;
	int n, ret = -EINVAL;

	if (!key)
		return -ENOMEM;
	if (colon && parse_hex(line, colon - line, desc, sizeof(desc)) !=
		     FSCRYPT_KEY_DESCRIPTOR_SIZE) {
		f2fs_msg(sbi, "%s:%u: a v1 key needs a 16-hex-digit descriptor before ':'",
			 path, lineno);
		goto out;
	}
	n = parse_hex(hex, strlen(hex), key, FSCRYPT_MAX_KEY_SIZE);
	if (n < FSCRYPT_MIN_KEY_SIZE) {
		f2fs_msg(sbi, "%s:%u: a key is 32 to 128 hex digits", path, lineno);
		goto out;
	}
	ret = fscrypt_add_key(sbi, key, n, colon ? desc : NULL, NULL);
out:
	fscrypt_secret_free(key, FSCRYPT_MAX_KEY_SIZE);
	return ret;
}

int fscrypt_load_keyfile(struct f2fs_sb_info *sbi, const char *path)
{
	char *line = fscrypt_secret_alloc(512);
	unsigned int lineno = 0;
	struct stat st;
	FILE *fp;
	int ret = 0;

	if (!line)
		return -ENOMEM;
	fp = fopen(path, "re");
	if (!fp) {
		ret = -errno;
		f2fs_error(sbi, -ret, "keyfile %s: %s", path, strerror(-ret));
		goto out;
	}
	/* the key must not be readable by others (as ssh treats private keys) */
	if (fstat(fileno(fp), &st) || (st.st_mode & S_IROTH)) {
		ret = f2fs_error(sbi, EPERM, "keyfile %s is readable by others: chmod o-r it",
				 path);
		goto close;
	}
	setvbuf(fp, NULL, _IONBF, 0);	/* no stdio copy of the key left behind */
	while (fgets(line, 512, fp)) {
		char *s = line, *e;

		lineno++;
		while (isspace((unsigned char)*s))
			s++;
		e = s + strlen(s);
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = 0;
		if (!*s || *s == '#')
			continue;
		ret = add_key_line(sbi, path, lineno, s);
		if (ret) {
			if (ret == -EINVAL)
				f2fs_error(sbi, EINVAL, "keyfile %s: line %u is not a key", path,
					   lineno);
			break;
		}
	}
close:
	fclose(fp);
out:
	fscrypt_secret_free(line, 512);
	return ret;
}

/// Per-inode setup ///

bool fscrypt_file_data(const struct f2fs_inode_info *fi)
{
	return f2fs_is_encrypted(fi) && S_ISREG(fi->mode);
}

int fscrypt_get_policy(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
		       struct fscrypt_pol *pol, uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE])
{
	uint8_t ctx[FSCRYPT_CONTEXT_V2_SIZE + 1];
	uint8_t *area;
	size_t alen;
	ssize_t n;
	int ret = f2fs_read_xattr_area(sbi, fi, &area, &alen);

	if (ret)
		return ret;
	n = f2fs_xattr_get_indexed(area, alen, F2FS_XATTR_INDEX_ENCRYPTION,
				 F2FS_XATTR_NAME_ENCRYPTION_CONTEXT, ctx, sizeof(ctx));
	free(area);
	if (n == -ENODATA || n == -ERANGE)
		return -ENODATA;
	if (n < 0)
		return (int)n;
	return fscrypt_parse_context(ctx, n, pol, nonce);
}

static int mode_of(const struct fscrypt_info *ci, uint32_t imode)
{
	return S_ISREG(imode) ? ci->pol.contents_mode : ci->pol.filenames_mode;
}

int fscrypt_derive_enc_key(const struct fscrypt_pol *pol, const uint8_t *master, size_t mlen,
			   const uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE], int mode,
			   const uint8_t uuid[16], uint8_t *out)
{
	size_t ksize = fscrypt_mode_key_size(mode);
	uint8_t info[17];

	if (!ksize)
		return -EOPNOTSUPP;
	if (pol->version == FSCRYPT_CONTEXT_V1) {
		if (mlen < ksize)
			return -ENOKEY;	/* as the kernel: a v1 key too short for the mode */
		if (pol->flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) {
			memcpy(out, master, ksize);
			return 0;
		}
		return fscrypt_aes128_ecb_encrypt(nonce, master, out, ksize);
	}
	info[0] = (uint8_t)mode;
	if (pol->flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY)
		return fscrypt_hkdf(master, mlen, HKDF_CONTEXT_DIRECT_KEY, info, 1, out, ksize);
	if (pol->flags & (FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 | FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32)) {
		memcpy(info + 1, uuid, 16);
		return fscrypt_hkdf(master, mlen, (pol->flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64) ?
				    HKDF_CONTEXT_IV_INO_LBLK_64_KEY :
				    HKDF_CONTEXT_IV_INO_LBLK_32_KEY, info, 17, out, ksize);
	}
	return fscrypt_hkdf(master, mlen, HKDF_CONTEXT_PER_FILE_ENC_KEY, nonce,
			    FSCRYPT_FILE_NONCE_SIZE, out, ksize);
}

static bool per_mode(const struct fscrypt_pol *pol)
{
	return pol->version == FSCRYPT_CONTEXT_V2 &&
	       (pol->flags & (FSCRYPT_POLICY_FLAG_DIRECT_KEY | FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 |
			      FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32));
}

/* The cipher of an inode: its own, or (v2 per-mode policies) the master key's, made once. */
static int setup_cipher(struct f2fs_sb_info *sbi, struct fscrypt_info *ci,
			struct fscrypt_master_key *mk, int mode)
{
	struct fscrypt_cipher **slot = &ci->cipher;
	uint8_t *key;
	int ret;

	if (mode <= 0 || mode >= MAX_MODE)
		return -EOPNOTSUPP;
	if (per_mode(&ci->pol)) {
		int kind = (ci->pol.flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) ? PM_DIRECT :
			   (ci->pol.flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64) ? PM_LBLK64 :
			   PM_LBLK32;

		slot = &mk->mode_keys[kind][mode];
		ci->shared = true;
		if (*slot) {
			ci->cipher = *slot;
			return 0;
		}
	}
	key = fscrypt_secret_alloc(FSCRYPT_MAX_KEY_SIZE);
	if (!key)
		return -ENOMEM;
	ret = fscrypt_derive_enc_key(&ci->pol, mk->secret, mk->len, ci->nonce, mode,
				     sbi->raw_super.uuid, key);
	if (!ret)
		ret = fscrypt_cipher_new(slot, mode, key, fscrypt_mode_key_size(mode));
	fscrypt_secret_free(key, FSCRYPT_MAX_KEY_SIZE);
	if (!ret)
		ci->cipher = *slot;
	else
		ci->shared = false;
	return ret;
}

/* LBLK_32: the inode number hashed with the master key's inode hash key. */
static int hash_ino(struct fscrypt_info *ci, struct fscrypt_master_key *mk)
{
	uint8_t le_ino[8] = { 0 };

	if (!mk->ino_hash_key) {
		uint8_t *k = fscrypt_secret_alloc(16);
		int ret;

		if (!k)
			return -ENOMEM;
		ret = fscrypt_hkdf(mk->secret, mk->len, HKDF_CONTEXT_INODE_HASH_KEY, NULL, 0, k,
				   16);
		if (ret) {
			fscrypt_secret_free(k, 16);
			return ret;
		}
		mk->ino_hash_key = k;
	}
	for (int i = 0; i < 4; i++)
		le_ino[i] = ci->ino >> (8 * i);
	ci->hashed_ino = (uint32_t)fscrypt_siphash(mk->ino_hash_key, le_ino, 8);
	return 0;
}

static int setup_keys(struct f2fs_sb_info *sbi, struct fscrypt_info *ci,
		      struct fscrypt_master_key *mk, int mode, bool casefolded_dir)
{
	int ret = setup_cipher(sbi, ci, mk, mode);

	if (!ret && ci->pol.version == FSCRYPT_CONTEXT_V2 &&
	    (ci->pol.flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32))
		ret = hash_ino(ci, mk);
	if (!ret && casefolded_dir && ci->pol.version == FSCRYPT_CONTEXT_V2) {
		ci->dirhash_key = fscrypt_secret_alloc(16);
		ret = !ci->dirhash_key ? -ENOMEM :
		      fscrypt_hkdf(mk->secret, mk->len, HKDF_CONTEXT_DIRHASH_KEY, ci->nonce,
				   FSCRYPT_FILE_NONCE_SIZE, ci->dirhash_key, 16);
		ci->has_dirhash = !ret;
	}
	return ret;
}

static bool info_live(const struct f2fs_inode_info *fi)
{
	return fi->ci && !fi->ci->dead;
}

int fscrypt_prepare(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	struct fscrypt_master_key *mk;
	struct fscrypt_info *ci;
	bool live;
	int ret;

	if (!f2fs_is_encrypted(fi))
		return 0;
	pthread_rwlock_rdlock(&kr->lock);
	live = info_live(fi);
	pthread_rwlock_unlock(&kr->lock);
	if (live)
		return 0;
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return -ENOMEM;
	ci->ino = fi->ino;
	ci->kr = kr;
	ret = fscrypt_get_policy(sbi, fi, &ci->pol, ci->nonce);
	if (ret) {
		free(ci);
		if (ret == -ENODATA || ret == -EINVAL)
			return f2fs_error(sbi, EFSCORRUPTED, "encrypted inode %u: %s encryption "
					  "context", fi->ino, ret == -ENODATA ? "no" :
					  "invalid");
		return ret;
	}
	ci->du_bits = ci->pol.log2_data_unit_size ? ci->pol.log2_data_unit_size :
		      F2FS_BLKSIZE_BITS;
	pthread_rwlock_wrlock(&kr->lock);
	if (info_live(fi)) {
		ret = 0;	/* another thread was first */
		goto free;
	}
	mk = find_key(kr, ci->pol.version, ci->pol.key_spec);
	if (!mk) {
		ret = -ENOKEY;
		goto free;
	}
	ret = setup_keys(sbi, ci, mk, mode_of(ci, fi->mode),
			 S_ISDIR(fi->mode) && f2fs_dir_casefolded(sbi, fi));
	if (ret)
		goto free;
	ci->mk = mk;
	ci->next_user = mk->users;
	mk->users = ci;
	/* a dead info stays where it is (the graveyard); fi just points elsewhere now */
	fi->ci = ci;
	pthread_rwlock_unlock(&kr->lock);
	return 0;
free:
	pthread_rwlock_unlock(&kr->lock);
	free_info(ci);
	return ret;
}

/* Inode leaves the cache: its info goes from its key's list and is freed. */
void fscrypt_put_info(struct f2fs_inode_info *fi)
{
	struct fscrypt_info *ci = fi->ci, **pp;
	struct fscrypt_keyring *kr;

	if (!ci)
		return;
	fi->ci = NULL;
	kr = ci->kr;
	pthread_rwlock_wrlock(&kr->lock);
	for (pp = ci->mk ? &ci->mk->users : &kr->graveyard; *pp; pp = &(*pp)->next_user) {
		if (*pp == ci) {
			*pp = ci->next_user;
			break;
		}
	}
	pthread_rwlock_unlock(&kr->lock);
	free_info(ci);
}

/// Transforms ///

/* The kernel's fscrypt_generate_iv for data unit (or name: 0) index. */
static void make_iv(const struct fscrypt_info *ci, uint64_t index, uint8_t iv[32])
{
	uint8_t flags = ci->pol.flags;

	memset(iv, 0, 32);
	if (flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64)
		index |= (uint64_t)ci->ino << 32;
	else if (flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32)
		index = (uint32_t)(ci->hashed_ino + index);
	else if (flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY)
		memcpy(iv + 8, ci->nonce, FSCRYPT_FILE_NONCE_SIZE);
	for (int i = 0; i < 8; i++)
		iv[i] = index >> (8 * i);
}

/*
 * One transform of consecutive data units, cut into chunks for
 * crypt_workers_run(). The caller holds the keyring lock shared throughout,
 * so the info and its cipher outlive every chunk, whichever thread runs it.
 */
struct crypt_job {
	const struct fscrypt_info *ci;
	const uint8_t *in;
	uint8_t *out;
	uint64_t first, nunits;		/* data units */
	uint64_t chunk_units;
	bool enc;
};

/* IVs made at once for one fscrypt_crypt_units() call. */
#define IV_BATCH	32

static int crypt_chunk(void *arg, unsigned int chunk)
{
	const struct crypt_job *j = arg;
	const struct fscrypt_info *ci = j->ci;
	size_t du = (size_t)1 << ci->du_bits;
	uint64_t u = chunk * j->chunk_units;
	uint64_t end = MIN(u + j->chunk_units, j->nunits);
	uint8_t ivs[IV_BATCH * FSCRYPT_MAX_IV_SIZE];
	int ret = 0;

	while (u < end && !ret) {
		unsigned int n = MIN(end - u, (uint64_t)IV_BATCH);

		for (unsigned int i = 0; i < n; i++)
			make_iv(ci, j->first + u + i, ivs + i * FSCRYPT_MAX_IV_SIZE);
		ret = fscrypt_crypt_units(ci->cipher, ivs, j->in + u * du, j->out + u * du, du, n,
					  j->enc);
		u += n;
	}
	return ret;
}

/*
 * Bytes of one chunk: about 20-50 us of one core's work, large enough that
 * a helper's wakeup is small beside it (crypto_speed on an AVX-512 core:
 * Adiantum ~3.4 GB/s, AES-128-CBC encryption ~1.3 GB/s, AES-256-XTS ~6 GB/s).
 */
static size_t chunk_bytes(const struct fscrypt_info *ci)
{
	switch (ci->pol.contents_mode) {
	case FSCRYPT_MODE_ADIANTUM:
	case FSCRYPT_MODE_AES_128_CBC:
		return 64 << 10;
	}
	return 128 << 10;
}

unsigned int fscrypt_chunk_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	unsigned int n = 0;

	pthread_rwlock_rdlock(&kr->lock);
	if (fi->ci && !fi->ci->dead)
		n = MAX(chunk_bytes(fi->ci) >> F2FS_BLKSIZE_BITS, (size_t)1);
	pthread_rwlock_unlock(&kr->lock);
	return n;
}

int fscrypt_crypt_blocks(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi, uint64_t lblk,
			 const uint8_t *in, uint8_t *out, unsigned int nblocks, bool enc)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	struct fscrypt_info *ci;
	int ret = 0;

	pthread_rwlock_rdlock(&kr->lock);
	ci = fi->ci;
	if (!ci || ci->dead) {
		ret = -ENOKEY;
	} else {
		unsigned int per_blk_bits = F2FS_BLKSIZE_BITS - ci->du_bits;
		struct crypt_job j = {
			.ci = ci, .in = in, .out = out, .enc = enc,
			.first = lblk << per_blk_bits,
			.nunits = (uint64_t)nblocks << per_blk_bits,
			.chunk_units = MAX(chunk_bytes(ci) >> ci->du_bits, (size_t)1),
		};

		ret = crypt_workers_run(crypt_chunk, &j,
					DIV_ROUND_UP(j.nunits, j.chunk_units));
	}
	pthread_rwlock_unlock(&kr->lock);
	return ret;
}

static bool is_dot_dotdot(const uint8_t *n, size_t len)
{
	return (len == 1 && n[0] == '.') || (len == 2 && n[0] == '.' && n[1] == '.');
}

/* Decrypt a name with dir's key; plain gets strnlen of the result. Lock held. */
static int decrypt_name_locked(const struct fscrypt_info *ci, const uint8_t *ct, size_t len,
			       uint8_t *plain, size_t *plen)
{
	uint8_t iv[32];
	int ret;

	if (len < 16 || len > F2FS_NAME_LEN)
		return -EFSCORRUPTED;
	make_iv(ci, 0, iv);
	ret = fscrypt_decrypt_name(ci->cipher, iv, ct, plain, len);
	if (ret)
		return ret;
	*plen = strnlen((const char *)plain, len);
	return *plen ? 0 : -EFSCORRUPTED;
}

static int encrypt_name_locked(const struct fscrypt_info *ci, const uint8_t *name, size_t len,
			       uint8_t *out, size_t olen)
{
	uint8_t iv[32];

	memcpy(out, name, len);
	memset(out + len, 0, olen - len);
	make_iv(ci, 0, iv);
	return fscrypt_encrypt_name(ci->cipher, iv, out, out, olen);
}

int fscrypt_setup_filename(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			   const char *name, size_t len, struct f2fs_filename *fn)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	int ret = fscrypt_prepare(sbi, dir);

	fn->encrypted = true;
	fn->usr = (const uint8_t *)name;
	fn->usr_len = len;
	fn->sbi = sbi;
	fn->dir = dir;
	if (ret && ret != -ENOKEY)
		return ret;
	if (!ret) {
		struct fscrypt_info *ci;
		size_t clen;

		pthread_rwlock_rdlock(&kr->lock);
		ci = dir->ci;
		if (!ci || ci->dead) {
			pthread_rwlock_unlock(&kr->lock);
			goto nokey;
		}
		clen = fscrypt_fname_encrypted_size(len, 4u << (ci->pol.flags &
						    FSCRYPT_POLICY_FLAGS_PAD_MASK), F2FS_NAME_LEN);
		ret = encrypt_name_locked(ci, (const uint8_t *)name, len, fn->crypt_buf, clen);
		if (!ret && fn->casefold) {
			const uint8_t *h = fn->cf ? fn->cf : fn->usr;
			size_t hl = fn->cf ? fn->cf_len : fn->usr_len;

			fn->hash = ci->has_dirhash ? (uint32_t)fscrypt_siphash(ci->dirhash_key,
									       h, hl) : 0;
			if (!ci->has_dirhash)
				ret = -EFSCORRUPTED;
		}
		pthread_rwlock_unlock(&kr->lock);
		if (ret)
			return ret;
		fn->name = fn->crypt_buf;
		fn->len = clen;
		if (!fn->casefold)
			fn->hash = f2fs_dentry_hash(fn->name, fn->len);
		return 0;
	}
nokey:
	/* no key: the name is a no-key name; lookups only */
	fn->nokey = true;
	fn->casefold = false;
	fn->cf = NULL;
	if (len > FSCRYPT_NOKEY_NAME_MAX_ENCODED)
		return -ENOENT;
	ret = fscrypt_base64url_decode(name, len, fn->crypt_buf, FSCRYPT_NOKEY_NAME_MAX);
	if (ret < 9 || (ret > 8 + FSCRYPT_NOKEY_BYTES && ret != FSCRYPT_NOKEY_NAME_MAX))
		return -ENOENT;
	fn->hash = fn->crypt_buf[0] | fn->crypt_buf[1] << 8 | fn->crypt_buf[2] << 16 |
		   (uint32_t)fn->crypt_buf[3] << 24;
	fn->nokey_digest = ret == FSCRYPT_NOKEY_NAME_MAX;
	fn->name = fn->crypt_buf + 8;
	fn->len = fn->nokey_digest ? FSCRYPT_NOKEY_BYTES : (size_t)ret - 8;
	return 0;
}

bool fscrypt_match_name(const struct f2fs_filename *fn, const uint8_t *de, size_t de_len)
{
	struct fscrypt_keyring *kr = fn->sbi->keyring;
	uint8_t plain[F2FS_NAME_LEN + 1], digest[32];
	struct f2fs_filename tmp;
	struct fscrypt_info *ci;
	size_t plen;
	int ret;

	if (fn->nokey) {
		if (!fn->nokey_digest)
			return de_len == fn->len && !memcmp(de, fn->name, de_len);
		if (de_len <= FSCRYPT_NOKEY_BYTES || memcmp(de, fn->name, FSCRYPT_NOKEY_BYTES))
			return false;
		fscrypt_sha256(de + FSCRYPT_NOKEY_BYTES, de_len - FSCRYPT_NOKEY_BYTES, digest);
		return !memcmp(digest, fn->crypt_buf + 8 + FSCRYPT_NOKEY_BYTES, 32);
	}
	if (de_len == fn->len && !memcmp(de, fn->name, de_len))
		return true;
	if (!fn->casefold)
		return false;
	/* casefolded: compare the plaintexts folded, as f2fs_match_ci_name */
	pthread_rwlock_rdlock(&kr->lock);
	ci = fn->dir->ci;
	ret = ci && !ci->dead ? decrypt_name_locked(ci, de, de_len, plain, &plen) : -ENOKEY;
	pthread_rwlock_unlock(&kr->lock);
	if (ret)
		return false;
	tmp = *fn;
	tmp.encrypted = false;
	tmp.name = fn->usr;
	tmp.len = fn->usr_len;
	return f2fs_match_name(&tmp, plain, plen);
}

int fscrypt_fname_disk_to_usr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			      uint32_t hash, const uint8_t *de, size_t de_len, char *out,
			      size_t *out_len)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	struct fscrypt_info *ci;
	int ret;

	if (is_dot_dotdot(de, de_len)) {
		memcpy(out, de, de_len);
		*out_len = de_len;
		return 0;
	}
	if (de_len < 16)
		return f2fs_error(sbi, EFSCORRUPTED, "encrypted directory %u: name of %zu "
				  "bytes, under the cipher's 16", dir->ino, de_len);
	ret = fscrypt_prepare(sbi, dir);
	if (ret && ret != -ENOKEY)
		return ret;
	pthread_rwlock_rdlock(&kr->lock);
	ci = dir->ci;
	if (ci && !ci->dead) {
		ret = decrypt_name_locked(ci, de, de_len, (uint8_t *)out, out_len);
		pthread_rwlock_unlock(&kr->lock);
		if (ret == -EFSCORRUPTED)
			return f2fs_error(sbi, EFSCORRUPTED, "encrypted directory %u: a name "
					  "decrypts to nothing", dir->ino);
		return ret;
	}
	pthread_rwlock_unlock(&kr->lock);
	*out_len = fscrypt_nokey_encode(hash, 0, de, de_len, out);
	return 0;
}

ssize_t fscrypt_symlink_to_usr(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
			       const uint8_t *raw, size_t rlen, char *buf, size_t size)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	char out[F2FS_BLKSIZE];
	struct fscrypt_info *ci;
	size_t clen, olen;
	int ret;

	if (rlen < 2 || !(clen = raw[0] | raw[1] << 8) || clen + 2 > rlen)
		return f2fs_error(sbi, EFSCORRUPTED, "encrypted symlink %u: bad length",
				  fi->ino);
	ret = fscrypt_prepare(sbi, fi);
	if (ret && ret != -ENOKEY)
		return ret;
	pthread_rwlock_rdlock(&kr->lock);
	ci = fi->ci;
	if (ci && !ci->dead) {
		uint8_t iv[32];

		if (clen < 16) {
			pthread_rwlock_unlock(&kr->lock);
			return f2fs_error(sbi, EFSCORRUPTED, "encrypted symlink %u: bad length",
					  fi->ino);
		}
		make_iv(ci, 0, iv);
		ret = fscrypt_decrypt_name(ci->cipher, iv, raw + 2, (uint8_t *)out, clen);
		pthread_rwlock_unlock(&kr->lock);
		if (ret)
			return ret;
		olen = strnlen(out, clen);
		if (!olen)
			return f2fs_error(sbi, EFSCORRUPTED, "encrypted symlink %u: empty target",
					  fi->ino);
	} else {
		pthread_rwlock_unlock(&kr->lock);
		if (clen > F2FS_NAME_LEN * 16)
			return -EFSCORRUPTED;
		olen = fscrypt_nokey_encode(0, 0, raw + 2, clen, out);
	}
	olen = MIN(olen, size);
	memcpy(buf, out, olen);
	return (ssize_t)olen;
}

ssize_t fscrypt_encrypt_symlink(struct f2fs_sb_info *sbi, struct f2fs_inode_info *fi,
				const char *target, size_t len, uint8_t *out, size_t max)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	struct fscrypt_info *ci;
	size_t clen;
	int ret = fscrypt_prepare(sbi, fi);

	if (ret)
		return ret;
	pthread_rwlock_rdlock(&kr->lock);
	ci = fi->ci;
	if (!ci || ci->dead) {
		pthread_rwlock_unlock(&kr->lock);
		return -ENOKEY;
	}
	/* room for le16 length and the NUL the kernel counts (but does not store) */
	if (len + 3 > max) {
		pthread_rwlock_unlock(&kr->lock);
		return -ENAMETOOLONG;
	}
	clen = fscrypt_fname_encrypted_size(len, 4u << (ci->pol.flags &
					    FSCRYPT_POLICY_FLAGS_PAD_MASK), max - 3);
	ret = encrypt_name_locked(ci, (const uint8_t *)target, len, out + 2, clen);
	pthread_rwlock_unlock(&kr->lock);
	if (ret)
		return ret;
	out[0] = clen & 0xff;
	out[1] = clen >> 8;
	return (ssize_t)(clen + 2);
}

int fscrypt_inherit_context(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			    struct f2fs_inode_info *fi)
{
	struct fscrypt_pol pol;
	uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE], ctx[FSCRYPT_CONTEXT_V2_SIZE];
	size_t n;
	int ret = fscrypt_get_policy(sbi, dir, &pol, nonce);

	if (ret)
		return ret == -ENODATA || ret == -EINVAL ? -EFSCORRUPTED : ret;
	if (getrandom(nonce, sizeof(nonce), 0) != sizeof(nonce))
		return -EIO;
	n = fscrypt_build_context(&pol, nonce, ctx);
	ret = f2fs_set_crypt_context(sbi, fi, ctx, n);
	if (ret)
		return ret;
	fi->i_advise |= FADVISE_ENCRYPT_BIT;
	f2fs_mark_inode_dirty(sbi, fi);
	return 0;
}

static bool same_policy(const struct fscrypt_pol *a, const struct fscrypt_pol *b)
{
	return a->version == b->version && a->contents_mode == b->contents_mode &&
	       a->filenames_mode == b->filenames_mode && a->flags == b->flags &&
	       a->log2_data_unit_size == b->log2_data_unit_size &&
	       !memcmp(a->key_spec, b->key_spec, spec_size(a->version));
}

int fscrypt_may_link(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
		     struct f2fs_inode_info *fi)
{
	struct fscrypt_pol pd, pf;
	uint8_t nonce[FSCRYPT_FILE_NONCE_SIZE];
	int ret;

	if (!f2fs_is_encrypted(dir))
		return 0;
	ret = fscrypt_prepare(sbi, dir);
	if (ret)
		return ret;
	if (!f2fs_is_encrypted(fi))
		return -EXDEV;
	ret = fscrypt_get_policy(sbi, dir, &pd, nonce);
	if (!ret)
		ret = fscrypt_get_policy(sbi, fi, &pf, nonce);
	if (ret)
		return ret == -ENODATA || ret == -EINVAL ? -EFSCORRUPTED : ret;
	return same_policy(&pd, &pf) ? 0 : -EXDEV;
}

int fscrypt_key_users(struct f2fs_sb_info *sbi, const uint8_t *spec, size_t spec_len,
		      uint32_t **inos, size_t *n)
{
	struct fscrypt_keyring *kr = sbi->keyring;
	int version = spec_len == FSCRYPT_KEY_DESCRIPTOR_SIZE ? 1 : 2;
	struct fscrypt_master_key *mk;
	size_t cnt = 0, i = 0;
	uint32_t *v;

	pthread_rwlock_rdlock(&kr->lock);
	mk = find_key(kr, version, spec);
	for (struct fscrypt_info *ci = mk ? mk->users : NULL; ci; ci = ci->next_user)
		cnt++;
	v = malloc((cnt + 1) * sizeof(*v));
	for (struct fscrypt_info *ci = mk ? mk->users : NULL; v && ci; ci = ci->next_user)
		v[i++] = ci->ino;
	pthread_rwlock_unlock(&kr->lock);
	if (!v)
		return -ENOMEM;
	*inos = v;
	*n = i;
	return 0;
}

int fscrypt_setup_disk_name(struct f2fs_sb_info *sbi, struct f2fs_inode_info *dir,
			    const uint8_t *raw, size_t len, size_t room,
			    struct f2fs_filename *fn)
{
	memset(fn, 0, offsetof(struct f2fs_filename, cf_buf));
	if (len < 16 || len > F2FS_NAME_LEN)
		return -EFSCORRUPTED;
	memcpy(fn->crypt_buf, raw, len);
	fn->name = fn->usr = fn->crypt_buf;
	fn->len = fn->usr_len = len;
	fn->encrypted = true;
	fn->sbi = sbi;
	fn->dir = dir;
	if (!f2fs_dir_casefolded(sbi, dir)) {
		fn->hash = f2fs_dentry_hash(raw, len);
		return 0;
	}
	/* the SipHash needs the key and the plaintext: Linux appends it to i_name */
	if (len + 4 > room)
		return -EFSCORRUPTED;
	fn->hash = raw[len] | raw[len + 1] << 8 | raw[len + 2] << 16 | (uint32_t)raw[len + 3] << 24;
	return 0;
}

