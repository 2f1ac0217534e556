// SPDX-License-Identifier: GPL-2.0
/*
 * The mount's keyring (the kernel's fs/crypto/keyring.c): master keys given
 * in a key file or added on a live mount, their removal (which wipes every
 * key derived from them at once), and which inodes use a key.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fscrypt_private.h"

int fscrypt_keyring_init(struct fscrypt_keyring **krp, const struct fscrypt_operations *ops,
			 void *fs, const uint8_t uuid[16], unsigned int blkbits)
{
	struct fscrypt_keyring *kr = calloc(1, sizeof(*kr));

	if (!kr)
		return -ENOMEM;
	pthread_rwlock_init(&kr->lock, NULL);
	kr->ops = ops;
	kr->fs = fs;
	kr->uuid = uuid;
	kr->blkbits = blkbits;
	*krp = kr;
	return 0;
}

int fscrypt_err(struct fscrypt_keyring *kr, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return kr->ops->error(kr->fs, err, msg);
}

void fscrypt_msg(struct fscrypt_keyring *kr, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kr->ops->msg(kr->fs, msg);
}

/*
 * The info itself is ordinary memory (one mlocked page per inode would
 * exhaust RLIMIT_MEMLOCK); what is secret in it lives in secret memory.
 */
void fscrypt_free_info(struct fscrypt_info *ci)
{
	if (!ci->shared && ci->cipher)
		fscrypt_cipher_free(ci->cipher);
	if (ci->dirhash_key)
		fscrypt_secret_free(ci->dirhash_key, 16);
	free(ci);
}

/* Wipe what the info holds; the struct itself stays for whoever points at it. */
void fscrypt_kill_info(struct fscrypt_info *ci)
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
	fscrypt_hkdf_free(mk->hkdf);
	fscrypt_secret_free(mk->secret, mk->len);
	fscrypt_secret_free(mk, sizeof(*mk));
}

void fscrypt_keyring_destroy(struct fscrypt_keyring *kr)
{

	if (!kr)
		return;
	/* the inode cache is gone: every info was put, only keys and the dead remain */
	while (kr->keys) {
		struct fscrypt_master_key *mk = kr->keys;

		kr->keys = mk->next;
		for (struct fscrypt_info *ci = mk->users; ci;) {
			struct fscrypt_info *n = ci->next_user;

			fscrypt_free_info(ci);
			ci = n;
		}
		free_master_key(mk);
	}
	while (kr->graveyard) {
		struct fscrypt_info *ci = kr->graveyard;

		kr->graveyard = ci->next_user;
		fscrypt_free_info(ci);
	}
	pthread_rwlock_destroy(&kr->lock);
	free(kr);
}

/* Bytes of a key specifier: a v1 descriptor or a v2 identifier. */
size_t fscrypt_spec_size(int version)
{
	return version == 1 ? FSCRYPT_KEY_DESCRIPTOR_SIZE : FSCRYPT_KEY_IDENTIFIER_SIZE;
}

struct fscrypt_master_key *fscrypt_find_key(struct fscrypt_keyring *kr, int version,
					   const uint8_t *spec)
{
	for (struct fscrypt_master_key *mk = kr->keys; mk; mk = mk->next)
		if (mk->version == version && !memcmp(mk->spec, spec, fscrypt_spec_size(version)))
			return mk;
	return NULL;
}

int fscrypt_add_key(struct fscrypt_keyring *kr, const uint8_t *key, size_t len,
		    const uint8_t *desc, uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE])
{
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
		ret = fscrypt_hkdf_new(&mk->hkdf, key, len);
		if (!ret)
			ret = fscrypt_hkdf_prepared(mk->hkdf, HKDF_CONTEXT_KEY_IDENTIFIER, NULL, 0,
						    mk->spec, FSCRYPT_KEY_IDENTIFIER_SIZE);
		if (ret) {
			free_master_key(mk);
			return ret;
		}
	}
	if (id)
		memcpy(id, mk->spec, FSCRYPT_KEY_IDENTIFIER_SIZE);
	pthread_rwlock_wrlock(&kr->lock);
	if (fscrypt_find_key(kr, version, mk->spec)) {
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

int fscrypt_remove_key(struct fscrypt_keyring *kr, const uint8_t *spec, size_t spec_len)
{
	int version = spec_len == FSCRYPT_KEY_DESCRIPTOR_SIZE ? 1 : 2;
	struct fscrypt_master_key **pp, *mk = NULL;

	if (spec_len != fscrypt_spec_size(version))
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

			fscrypt_unlink_user(ci);
			fscrypt_kill_info(ci);
			fscrypt_link_user(&kr->graveyard, ci);
		}
		free_master_key(mk);
	}
	pthread_rwlock_unlock(&kr->lock);
	return mk ? 0 : -ENOKEY;
}

bool fscrypt_has_key(struct fscrypt_keyring *kr, const uint8_t *spec, size_t spec_len)
{
	int version = spec_len == FSCRYPT_KEY_DESCRIPTOR_SIZE ? 1 : 2;
	bool found;

	pthread_rwlock_rdlock(&kr->lock);
	found = fscrypt_find_key(kr, version, spec);
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
static int add_key_line(struct fscrypt_keyring *kr, const char *path, unsigned int lineno,
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
		fscrypt_msg(kr, "%s:%u: a v1 key needs a 16-hex-digit descriptor before ':'",
			 path, lineno);
		goto out;
	}
	n = parse_hex(hex, strlen(hex), key, FSCRYPT_MAX_KEY_SIZE);
	if (n < FSCRYPT_MIN_KEY_SIZE) {
		fscrypt_msg(kr, "%s:%u: a key is 32 to 128 hex digits", path, lineno);
		goto out;
	}
	ret = fscrypt_add_key(kr, key, n, colon ? desc : NULL, NULL);
out:
	fscrypt_secret_free(key, FSCRYPT_MAX_KEY_SIZE);
	return ret;
}

int fscrypt_load_keyfile(struct fscrypt_keyring *kr, const char *path)
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
		fscrypt_err(kr, -ret, "keyfile %s: %s", path, strerror(-ret));
		goto out;
	}
	/* the key must not be readable by others (as ssh treats private keys) */
	if (fstat(fileno(fp), &st) || (st.st_mode & S_IROTH)) {
		ret = fscrypt_err(kr, EPERM, "keyfile %s is readable by others: chmod o-r it",
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
		ret = add_key_line(kr, path, lineno, s);
		if (ret) {
			if (ret == -EINVAL)
				fscrypt_err(kr, EINVAL, "keyfile %s: line %u is not a key", path,
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

int fscrypt_key_users(struct fscrypt_keyring *kr, const uint8_t *spec, size_t spec_len,
		      uint32_t **inos, size_t *n)
{
	int version = spec_len == FSCRYPT_KEY_DESCRIPTOR_SIZE ? 1 : 2;
	struct fscrypt_master_key *mk;
	size_t cnt = 0, i = 0;
	uint32_t *v;

	pthread_rwlock_rdlock(&kr->lock);
	mk = fscrypt_find_key(kr, version, spec);
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
