// SPDX-License-Identifier: GPL-2.0
/*
 * Builtin signatures (the kernel's fs/verity/signature.c with
 * CONFIG_FS_VERITY_BUILTIN_SIGNATURES): the mount's certificates stand for
 * the ".fs-verity" keyring, and a file whose descriptor carries a signature
 * opens (and is enabled) only when that signature is a PKCS#7 signature,
 * by the key of one of those certificates, over the file digest in
 * fs-verity's "FSVerity" format. A file without a signature is accepted
 * (fs.verity.require_signatures=0). With no certificate given, signatures
 * are not checked at all, as in a kernel built without the option. The
 * PKCS#7 work is OpenSSL's; the errors are the kernel's: EBADMSG for a
 * malformed signature, ENOKEY when no certificate matches its signer,
 * EKEYREJECTED when it does not verify; with require_signatures, EPERM for
 * a file without a signature.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>

#include "fsverity_private.h"

/* struct fsverity_formatted_digest: what the signature signs */
#define FORMATTED_MAGIC		"FSVerity"
#define FORMATTED_HDR		12	/* magic[8], le16 algorithm, le16 digest size */

int fsverity_add_certs(struct fsverity_sb *vsb, const char *pem_path)
{
	STACK_OF(X509) *certs = vsb->certs;
	FILE *f = fopen(pem_path, "r");
	X509 *x;
	int n = 0;

	if (!f)
		return -errno;
	if (!certs) {
		certs = sk_X509_new_null();
		if (!certs) {
			fclose(f);
			return -ENOMEM;
		}
		vsb->certs = certs;
	}
	while ((x = PEM_read_X509(f, NULL, NULL, NULL))) {
		if (!sk_X509_push(certs, x)) {
			X509_free(x);
			fclose(f);
			return -ENOMEM;
		}
		n++;
	}
	ERR_clear_error();	/* the end of the file reads as an error */
	fclose(f);
	return n ? 0 : -EINVAL;
}

void fsverity_free_certs(struct fsverity_sb *vsb)
{
	if (vsb->certs)
		sk_X509_pop_free(vsb->certs, X509_free);
	vsb->certs = NULL;
}

static int check_pkcs7(STACK_OF(X509) *certs, const uint8_t *sig, size_t sig_size,
		       const uint8_t *msg, size_t msg_len)
{
	const unsigned char *p = sig;
	const int flags = PKCS7_NOINTERN | PKCS7_NOVERIFY | PKCS7_BINARY | PKCS7_DETACHED;
	PKCS7 *p7 = d2i_PKCS7(NULL, &p, (long)sig_size);
	STACK_OF(X509) *signers;
	BIO *in = NULL;
	int ret;

	if (!p7 || p != sig + sig_size || !PKCS7_type_is_signed(p7)) {
		ret = -EBADMSG;
		goto out;
	}
	/* the trust is the keyring's: a signer among the given certificates */
	signers = certs ? PKCS7_get0_signers(p7, certs, flags) : NULL;
	if (!signers) {
		ret = -ENOKEY;
		goto out;
	}
	sk_X509_free(signers);
	in = BIO_new_mem_buf(msg, (int)msg_len);
	if (!in)
		ret = -ENOMEM;
	else
		ret = PKCS7_verify(p7, certs, NULL, in, NULL, flags) == 1 ? 0 : -EKEYREJECTED;
out:
	ERR_clear_error();
	BIO_free(in);
	PKCS7_free(p7);
	return ret;
}

int fsverity_verify_signature(const struct fsverity_sb *vsb, const struct verity_params *p,
			      const uint8_t *digest, const uint8_t *sig, size_t sig_size,
			      uint32_t ino)
{
	uint8_t msg[FORMATTED_HDR + VERITY_MAX_DIGEST];
	int ret;

	if (!sig_size && vsb->require_signatures)
		return fsverity_err(vsb, EPERM, "inode %u: require_signatures: an unsigned "
				    "file is refused", ino);
	/* no certificate: unchecked, unless signatures are required (an empty keyring) */
	if (!sig_size || (!vsb->certs && !vsb->require_signatures))
		return 0;
	memcpy(msg, FORMATTED_MAGIC, 8);
	verity_put_le16(msg + 8, (uint16_t)p->alg);
	verity_put_le16(msg + 10, (uint16_t)p->digest_size);
	memcpy(msg + FORMATTED_HDR, digest, p->digest_size);
	ret = check_pkcs7(vsb->certs, sig, sig_size, msg, FORMATTED_HDR + p->digest_size);
	if (ret == -ENOKEY)
		fsverity_err(vsb, ENOKEY, "inode %u: the file's signing certificate is not "
			     "among verity_cert=", ino);
	else if (ret == -EKEYREJECTED)
		fsverity_err(vsb, EKEYREJECTED, "inode %u: incorrect file signature", ino);
	else if (ret == -EBADMSG)
		fsverity_err(vsb, EBADMSG, "inode %u: malformed file signature", ino);
	return ret;
}
