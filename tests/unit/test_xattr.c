// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the xattr buffer functions (lib/xattr.c). Buffers are laid
 * out as the kernel assembles them: the inode's inline xattr area (200
 * bytes by default) followed by the xattr node block (4072 bytes), with
 * one header and 4-byte aligned entries that may straddle the two parts.
 * Covered: areas the Linux kernel wrote (fixtures/kernel_xattrs.h), whose
 * listing and values, ACLs included, must equal what listxattr/getxattr
 * returned in the guest; every namespace, the hidden internal indexes,
 * POSIX ACL conversion, the ERANGE/ENODATA/size-probe rules, and corrupt
 * areas, which must give -EIO and never an out-of-bounds access (buffers
 * are malloc'd to their exact size for AddressSanitizer).
 *
 * f2fs_xattr_set: sequences of setxattr/removexattr the kernel ran
 * (fixture below), replayed call by call with the same results and the
 * same bytes, i_mode and xattr-node decision at the end; round trips
 * through get/list; the flags, name and argument rules; space (-E2BIG at
 * the kernel's bound, -ENOSPC when the list needs the xattr node and none
 * may exist); POSIX ACLs (conversion, validation, mode-equivalent ACLs);
 * a model of the entry order under random operations; corrupt areas.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "f2fs.h"

struct fx_run {
	uint16_t off;
	uint8_t len;
	const char *bytes;
};

#include "fixtures/kernel_xattrs.h"

#define INLINE_BYTES	(DEFAULT_INLINE_XATTR_ADDRS * 4)
#define AREA_BYTES	(INLINE_BYTES + VALID_XATTR_BLOCK_SIZE)

/* ACL tags and the VFS format, spelled out independently of xattr.c. */
#define T_USER_OBJ	0x01
#define T_USER		0x02
#define T_GROUP_OBJ	0x04
#define T_GROUP		0x08
#define T_MASK		0x10
#define T_OTHER		0x20

/* /// Building xattr areas /// */

struct area {
	uint8_t *buf;
	size_t len;
	size_t pos;	/* where the next entry goes */
};

static struct area area_new(size_t len, bool magic)
{
	struct area a = { calloc(1, len), len, sizeof(struct f2fs_xattr_header) };
	struct f2fs_xattr_header *h = (void *)a.buf;

	assert_non_null(a.buf);
	if (magic) {
		h->h_magic = F2FS_XATTR_MAGIC;
		h->h_refcount = 1;
	}
	return a;
}

static void area_add(struct area *a, uint8_t index, const char *name, const void *val,
		     size_t vlen)
{
	size_t nlen = strlen(name);
	size_t size = XATTR_ALIGN(sizeof(struct f2fs_xattr_entry) + nlen + vlen);
	uint8_t *p = a->buf + a->pos;

	assert_true(a->pos + size <= a->len);
	p[0] = index;
	p[1] = (uint8_t)nlen;
	p[2] = (uint8_t)vlen;
	p[3] = (uint8_t)(vlen >> 8);
	memcpy(p + 4, name, nlen);
	memcpy(p + 4 + nlen, val, vlen);
	a->pos += size;
}

static void area_free(struct area *a)
{
	free(a->buf);
	a->buf = NULL;
}

static ssize_t get(const struct area *a, const char *name, void *val, size_t size)
{
	return f2fs_xattr_get(a->buf, a->len, name, val, size);
}

/* /// Areas written by Linux /// */

static uint8_t *kfx_area(const struct fx_run *runs, size_t n, size_t len)
{
	uint8_t *buf = calloc(1, len);

	assert_non_null(buf);
	for (size_t i = 0; i < n; i++) {
		assert_true((size_t)runs[i].off + runs[i].len <= len);
		memcpy(buf + runs[i].off, runs[i].bytes, runs[i].len);
	}
	return buf;
}

static void check_kernel_area(const char *file, const uint8_t *area, size_t len,
			      const char *list, size_t list_len)
{
	char out[1024];
	unsigned int nget = 0;

	assert_int_equal(f2fs_xattr_validate(area, len), 0);
	assert_int_equal(f2fs_xattr_list(area, len, NULL, 0), list_len);
	assert_int_equal(f2fs_xattr_list(area, len, out, sizeof(out)), list_len);
	assert_memory_equal(out, list, list_len);
	for (size_t i = 0; i < ARRAY_SIZE(kfx_gets); i++) {
		const struct kfx_get *g = &kfx_gets[i];

		if (strcmp(g->file, file))
			continue;
		memset(out, 0x5a, sizeof(out));
		assert_int_equal(f2fs_xattr_get(area, len, g->name, out, sizeof(out)), g->len);
		assert_memory_equal(out, g->value, g->len);
		assert_int_equal(f2fs_xattr_get(area, len, g->name, NULL, 0), g->len);
		nget++;
	}
	assert_true(nget >= 3);
}

static void test_kernel_file_xattrs(void **state)
{
	uint8_t *area = kfx_area(kfx_area_x_runs, ARRAY_SIZE(kfx_area_x_runs), KFX_AREA_X_LEN);

	/* user.big did not fit inline: the area really spans both parts */
	assert_int_equal(KFX_AREA_X_LEN, KFX_AREA_X_INLINE + VALID_XATTR_BLOCK_SIZE);
	assert_false(kfx_area_x_runs[ARRAY_SIZE(kfx_area_x_runs) - 1].off < KFX_AREA_X_INLINE);
	check_kernel_area("x", area, KFX_AREA_X_LEN, kfx_list_x, KFX_LIST_X_LEN);
	free(area);
}

static void test_kernel_dir_acls(void **state)
{
	uint8_t *area = kfx_area(kfx_area_d_runs, ARRAY_SIZE(kfx_area_d_runs), KFX_AREA_D_LEN);

	check_kernel_area("d", area, KFX_AREA_D_LEN, kfx_list_d, KFX_LIST_D_LEN);
	/* everything fits inline: the inline part alone reads the same */
	check_kernel_area("d", area, KFX_AREA_D_INLINE, kfx_list_d, KFX_LIST_D_LEN);
	free(area);
}

/* /// Namespaces /// */

/* One entry of every kind, as the kernel would have written them. */
static struct area area_every_kind(void)
{
	struct area a = area_new(AREA_BYTES, true);
	static const uint8_t acl_min[] = {
		0x01, 0x00, 0x00, 0x00,			/* version 1 */
		T_USER_OBJ, 0, 6, 0,
		T_GROUP_OBJ, 0, 4, 0,
		T_OTHER, 0, 4, 0,
	};

	/* index 0 is no namespace, but its word is not zero: not the end */
	area_add(&a, 0, "idx0", "0", 1);
	area_add(&a, F2FS_XATTR_INDEX_USER, "foo", "bar", 3);
	area_add(&a, F2FS_XATTR_INDEX_LUSTRE, "lma", "LLLL", 4);
	area_add(&a, F2FS_XATTR_INDEX_TRUSTED, "t", "trusted-value", 13);
	area_add(&a, F2FS_XATTR_INDEX_ENCRYPTION, "c", "\x02\x01\x04\x00ctx", 7);
	area_add(&a, F2FS_XATTR_INDEX_SECURITY, "selinux", "system_u:object_r:x:s0", 22);
	area_add(&a, F2FS_XATTR_INDEX_VERITY, "v", "verity-descriptor", 17);
	area_add(&a, F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, "", acl_min, sizeof(acl_min));
	area_add(&a, F2FS_XATTR_INDEX_ADVISE, "adv", "\x01", 1);
	area_add(&a, F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT, "", acl_min, sizeof(acl_min));
	area_add(&a, 42, "unknown", "?", 1);
	return a;
}

static const char every_kind_list[] =
	"user.foo\0trusted.t\0security.selinux\0system.posix_acl_access\0"
	"system.posix_acl_default";

static void test_list_every_namespace(void **state)
{
	struct area a = area_every_kind();
	char list[512];
	ssize_t n;

	n = f2fs_xattr_list(a.buf, a.len, NULL, 0);
	assert_int_equal(n, sizeof(every_kind_list));
	memset(list, 0x7f, sizeof(list));
	assert_int_equal(f2fs_xattr_list(a.buf, a.len, list, sizeof(list)), n);
	assert_memory_equal(list, every_kind_list, sizeof(every_kind_list));
	assert_int_equal(f2fs_xattr_validate(a.buf, a.len), 0);
	area_free(&a);
}

static void test_list_erange(void **state)
{
	struct area a = area_every_kind();
	size_t need = sizeof(every_kind_list);
	char *list = malloc(need);

	for (size_t size = 1; size < need; size++)
		assert_int_equal(f2fs_xattr_list(a.buf, a.len, list, size), -ERANGE);
	assert_int_equal(f2fs_xattr_list(a.buf, a.len, list, need), need);
	free(list);
	area_free(&a);
}

static void test_get_every_namespace(void **state)
{
	struct area a = area_every_kind();
	char v[64];

	assert_int_equal(get(&a, "user.foo", v, sizeof(v)), 3);
	assert_memory_equal(v, "bar", 3);
	assert_int_equal(get(&a, "trusted.t", v, sizeof(v)), 13);
	assert_memory_equal(v, "trusted-value", 13);
	assert_int_equal(get(&a, "security.selinux", v, sizeof(v)), 22);
	assert_memory_equal(v, "system_u:object_r:x:s0", 22);
	/* the VFS form of three short entries: 4 + 3 * 8 bytes */
	assert_int_equal(get(&a, "system.posix_acl_access", v, sizeof(v)), 28);
	assert_int_equal(get(&a, "system.posix_acl_default", v, sizeof(v)), 28);
	area_free(&a);
}

/* Internal indexes have no name a caller could ask for. */
static void test_get_hidden(void **state)
{
	struct area a = area_every_kind();
	char v[64];

	assert_int_equal(get(&a, "lustre.lma", v, sizeof(v)), -EOPNOTSUPP);
	assert_int_equal(get(&a, "system.advise", v, sizeof(v)), -EOPNOTSUPP);
	assert_int_equal(get(&a, "c", v, sizeof(v)), -EOPNOTSUPP);
	assert_int_equal(get(&a, "encryption.c", v, sizeof(v)), -EOPNOTSUPP);
	assert_int_equal(get(&a, "unknown", v, sizeof(v)), -EOPNOTSUPP);
	/* the encryption context's name under a served prefix is just absent */
	assert_int_equal(get(&a, "user.c", v, sizeof(v)), -ENODATA);
	assert_int_equal(get(&a, "trusted.v", v, sizeof(v)), -ENODATA);
	area_free(&a);
}

static void test_get_enodata(void **state)
{
	struct area a = area_every_kind();
	char v[64];

	assert_int_equal(get(&a, "user.fo", v, sizeof(v)), -ENODATA);
	assert_int_equal(get(&a, "user.foox", v, sizeof(v)), -ENODATA);
	assert_int_equal(get(&a, "trusted.foo", v, sizeof(v)), -ENODATA);
	assert_int_equal(get(&a, "security.foo", v, sizeof(v)), -ENODATA);
	assert_int_equal(get(&a, "user.selinux", v, sizeof(v)), -ENODATA);
	area_free(&a);
}

static void test_get_size_rules(void **state)
{
	struct area a = area_every_kind();
	char v[64];

	/* size 0 asks for the length */
	assert_int_equal(get(&a, "trusted.t", NULL, 0), 13);
	assert_int_equal(get(&a, "system.posix_acl_access", NULL, 0), 28);
	for (size_t s = 1; s < 13; s++)
		assert_int_equal(get(&a, "trusted.t", v, s), -ERANGE);
	for (size_t s = 1; s < 28; s++)
		assert_int_equal(get(&a, "system.posix_acl_default", v, s), -ERANGE);
	assert_int_equal(get(&a, "trusted.t", v, 13), 13);
	area_free(&a);
}

static void test_name_rules(void **state)
{
	struct area a = area_every_kind();
	char name[300] = "user.";
	char v[8];

	assert_int_equal(get(&a, "user.", v, sizeof(v)), -EINVAL);
	assert_int_equal(get(&a, "security.", v, sizeof(v)), -EINVAL);
	assert_int_equal(f2fs_xattr_get(a.buf, a.len, NULL, v, sizeof(v)), -EINVAL);
	assert_int_equal(get(&a, "system.posix_acl_access.x", v, sizeof(v)), -EOPNOTSUPP);
	assert_int_equal(get(&a, "system.posix_acl", v, sizeof(v)), -EOPNOTSUPP);
	assert_int_equal(get(&a, "User.foo", v, sizeof(v)), -EOPNOTSUPP);
	assert_int_equal(get(&a, "", v, sizeof(v)), -EOPNOTSUPP);
	memset(name + 5, 'n', 255);
	assert_int_equal(get(&a, name, v, sizeof(v)), -ENODATA);
	name[5 + 255] = 'n';
	assert_int_equal(get(&a, name, v, sizeof(v)), -ERANGE);
	area_free(&a);
}

/* /// Layout /// */

static void test_empty_areas(void **state)
{
	struct area a = area_new(AREA_BYTES, false);
	char v[8], list[8];

	assert_int_equal(get(&a, "user.x", v, sizeof(v)), -ENODATA);
	assert_int_equal(f2fs_xattr_list(a.buf, a.len, list, sizeof(list)), 0);
	assert_int_equal(f2fs_xattr_validate(a.buf, a.len), 0);
	assert_true(f2fs_xattr_area_empty(a.buf, a.len));
	area_free(&a);

	/* a header with magic and no entries */
	a = area_new(AREA_BYTES, true);
	assert_true(f2fs_xattr_area_empty(a.buf, a.len));
	area_add(&a, F2FS_XATTR_INDEX_USER, "x", "1", 1);
	assert_false(f2fs_xattr_area_empty(a.buf, a.len));
	area_free(&a);
	a = area_new(AREA_BYTES, true);
	assert_int_equal(get(&a, "user.x", v, sizeof(v)), -ENODATA);
	assert_int_equal(f2fs_xattr_list(a.buf, a.len, NULL, 0), 0);
	assert_int_equal(f2fs_xattr_validate(a.buf, a.len), 0);
	area_free(&a);

	/* no area at all */
	assert_int_equal(f2fs_xattr_get(NULL, 0, "user.x", v, sizeof(v)), -ENODATA);
	assert_int_equal(f2fs_xattr_list(NULL, 0, NULL, 0), 0);
	assert_int_equal(f2fs_xattr_validate(NULL, 0), 0);
	assert_true(f2fs_xattr_area_empty(NULL, 0));
}

/* An entry may start in the inline area and end in the node block. */
static void test_entry_straddles_inline_and_node(void **state)
{
	struct area a = area_new(AREA_BYTES, true);
	char big[300], v[300];

	memset(big, 'q', sizeof(big));
	area_add(&a, F2FS_XATTR_INDEX_USER, "first", "1", 1);
	assert_true(a.pos < INLINE_BYTES);
	area_add(&a, F2FS_XATTR_INDEX_USER, "straddler", big, sizeof(big));
	assert_true(a.pos > INLINE_BYTES);
	area_add(&a, F2FS_XATTR_INDEX_TRUSTED, "in.node", "2", 1);
	assert_int_equal(get(&a, "user.straddler", v, sizeof(v)), sizeof(big));
	assert_memory_equal(v, big, sizeof(big));
	assert_int_equal(get(&a, "trusted.in.node", v, sizeof(v)), 1);
	assert_int_equal(f2fs_xattr_list(a.buf, a.len, NULL, 0),
			 sizeof("user.first") + sizeof("user.straddler") + sizeof("trusted.in.node"));
	area_free(&a);
}

/* A list that fills the area to the last byte needs no terminator. */
static void test_entry_fills_area(void **state)
{
	const size_t len = 64;
	struct area a = area_new(len, true);
	char val[64], v[64];

	memset(val, 'z', sizeof(val));
	/* 24 header + 4 entry header + 4 name + 32 value = 64 */
	area_add(&a, F2FS_XATTR_INDEX_USER, "full", val, 32);
	assert_int_equal(a.pos, len);
	assert_int_equal(get(&a, "user.full", v, sizeof(v)), 32);
	assert_int_equal(get(&a, "user.none", v, sizeof(v)), -ENODATA);
	assert_int_equal(f2fs_xattr_list(a.buf, a.len, NULL, 0), sizeof("user.full"));
	assert_int_equal(f2fs_xattr_validate(a.buf, a.len), 0);
	area_free(&a);
}

static void test_empty_value_and_duplicates(void **state)
{
	struct area a = area_new(AREA_BYTES, true);
	char v[8] = "xxxxxxx";

	area_add(&a, F2FS_XATTR_INDEX_USER, "empty", "", 0);
	area_add(&a, F2FS_XATTR_INDEX_USER, "dup", "one", 3);
	area_add(&a, F2FS_XATTR_INDEX_USER, "dup", "two!", 4);
	assert_int_equal(get(&a, "user.empty", v, sizeof(v)), 0);
	assert_int_equal(get(&a, "user.empty", NULL, 0), 0);
	assert_int_equal(get(&a, "user.dup", v, sizeof(v)), 3);
	assert_memory_equal(v, "one", 3);
	area_free(&a);
}

/* /// POSIX ACLs /// */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

/* An on-disk ACL: the f2fs header, then short or long entries by tag. */
static size_t disk_acl(uint8_t *out, const uint16_t (*e)[3], size_t n)
{
	size_t pos = 4;

	put32(out, F2FS_ACL_VERSION);
	for (size_t i = 0; i < n; i++) {
		put16(out + pos, e[i][0]);
		put16(out + pos + 2, e[i][1]);
		if (e[i][0] == T_USER || e[i][0] == T_GROUP) {
			put32(out + pos + 4, e[i][2]);
			pos += 8;
		} else {
			pos += 4;
		}
	}
	return pos;
}

static void test_acl_conversion(void **state)
{
	static const uint16_t ents[][3] = {
		{ T_USER_OBJ, 6, 0 }, { T_USER, 4, 1000 }, { T_GROUP_OBJ, 4, 0 },
		{ T_GROUP, 6, 100 }, { T_MASK, 6, 0 }, { T_OTHER, 4, 0 },
	};
	static const uint8_t want[] = {
		0x02, 0x00, 0x00, 0x00,
		0x01, 0x00, 0x06, 0x00, 0xff, 0xff, 0xff, 0xff,
		0x02, 0x00, 0x04, 0x00, 0xe8, 0x03, 0x00, 0x00,
		0x04, 0x00, 0x04, 0x00, 0xff, 0xff, 0xff, 0xff,
		0x08, 0x00, 0x06, 0x00, 0x64, 0x00, 0x00, 0x00,
		0x10, 0x00, 0x06, 0x00, 0xff, 0xff, 0xff, 0xff,
		0x20, 0x00, 0x04, 0x00, 0xff, 0xff, 0xff, 0xff,
	};
	struct area a = area_new(AREA_BYTES, true);
	uint8_t acl[64], v[64];
	size_t n = disk_acl(acl, ents, ARRAY_SIZE(ents));

	assert_int_equal(n, 4 + 4 * 4 + 2 * 8);
	area_add(&a, F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, "", acl, n);
	memset(v, 0x55, sizeof(v));
	assert_int_equal(get(&a, "system.posix_acl_access", v, sizeof(v)), sizeof(want));
	assert_memory_equal(v, want, sizeof(want));
	assert_int_equal(get(&a, "system.posix_acl_access", v, sizeof(want)), sizeof(want));
	assert_int_equal(get(&a, "system.posix_acl_access", v, sizeof(want) - 1), -ERANGE);
	assert_int_equal(get(&a, "system.posix_acl_default", v, sizeof(v)), -ENODATA);
	area_free(&a);
}

static void expect_acl(const uint8_t *acl, size_t n, ssize_t want)
{
	struct area a = area_new(AREA_BYTES, true);
	uint8_t v[128];

	area_add(&a, F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT, "", acl, n);
	assert_int_equal(get(&a, "system.posix_acl_default", v, sizeof(v)), want);
	assert_int_equal(get(&a, "system.posix_acl_default", NULL, 0), want);
	/* the xattr area itself is sound either way */
	assert_int_equal(f2fs_xattr_validate(a.buf, a.len), 0);
	area_free(&a);
}

static void test_acl_corrupt(void **state)
{
	static const uint16_t ok[][3] = {
		{ T_USER_OBJ, 7, 0 }, { T_GROUP_OBJ, 5, 0 }, { T_MASK, 5, 0 }, { T_OTHER, 5, 0 },
		{ T_USER, 7, 5 },
	};
	static const uint16_t bad_tag[][3] = {
		{ T_USER_OBJ, 7, 0 }, { 0x40, 5, 0 }, { T_OTHER, 5, 0 },
	};
	/* 3 short + 1 long: entries tile the value, but not the way Linux counts */
	static const uint16_t odd[][3] = {
		{ T_USER_OBJ, 7, 0 }, { T_USER, 7, 5 }, { T_GROUP_OBJ, 5, 0 }, { T_OTHER, 5, 0 },
	};
	static const uint16_t two_long[][3] = { { T_USER, 7, 5 }, { T_GROUP, 5, 6 } };
	static const uint16_t short_long[][3] = { { T_USER_OBJ, 7, 0 }, { T_USER, 7, 5 } };
	static const uint16_t cut_long[][3] = {
		{ T_USER_OBJ, 7, 0 }, { T_GROUP_OBJ, 5, 0 }, { T_OTHER, 5, 0 }, { T_USER, 7, 5 },
	};
	uint8_t acl[128];
	size_t n;

	n = disk_acl(acl, ok, ARRAY_SIZE(ok));
	expect_acl(acl, n, 4 + 5 * 8);
	/* truncated long entry */
	expect_acl(acl, n - 4, -EIO);
	/* a trailing partial entry */
	expect_acl(acl, n - 2, -EIO);
	/* wrong version */
	put32(acl, 2);
	expect_acl(acl, n, -EIO);

	/* sized like four entries, but only two long ones */
	n = disk_acl(acl, two_long, ARRAY_SIZE(two_long));
	assert_int_equal(n, 20);
	expect_acl(acl, n, -EIO);
	/* sized like three short ones, but one short and one long */
	n = disk_acl(acl, short_long, ARRAY_SIZE(short_long));
	assert_int_equal(n, 16);
	expect_acl(acl, n, -EIO);
	/* sized like four entries, the fourth a long one cut to four bytes */
	n = disk_acl(acl, cut_long, ARRAY_SIZE(cut_long));
	expect_acl(acl, n - 4, -EIO);

	n = disk_acl(acl, bad_tag, ARRAY_SIZE(bad_tag));
	expect_acl(acl, n, -EIO);
	n = disk_acl(acl, odd, ARRAY_SIZE(odd));
	expect_acl(acl, n, -EIO);

	/* only a header: no ACL, as the kernel reads it */
	put32(acl, F2FS_ACL_VERSION);
	expect_acl(acl, 4, -ENODATA);
	/* shorter than the header */
	expect_acl(acl, 2, -EIO);
	expect_acl(acl, 0, -EIO);
}

/* /// Corruption /// */

static void test_value_past_end(void **state)
{
	struct area a = area_new(AREA_BYTES, true);
	char v[16];

	area_add(&a, F2FS_XATTR_INDEX_USER, "ok", "1", 1);
	area_add(&a, F2FS_XATTR_INDEX_USER, "liar", "2", 1);
	area_add(&a, F2FS_XATTR_INDEX_USER, "after", "3", 1);
	/* make "liar" claim a value that runs off the area */
	a.buf[sizeof(struct f2fs_xattr_header) + 8 + 2] = 0xff;
	a.buf[sizeof(struct f2fs_xattr_header) + 8 + 3] = 0xff;
	assert_int_equal(get(&a, "user.ok", v, sizeof(v)), 1);
	assert_int_equal(get(&a, "user.after", v, sizeof(v)), -EIO);
	assert_int_equal(get(&a, "user.missing", v, sizeof(v)), -EIO);
	assert_int_equal(f2fs_xattr_list(a.buf, a.len, NULL, 0), -EIO);
	assert_int_equal(f2fs_xattr_validate(a.buf, a.len), -EIO);
	area_free(&a);
}

static void test_bad_magic(void **state)
{
	struct area a = area_new(AREA_BYTES, true);
	char v[16];

	area_add(&a, F2FS_XATTR_INDEX_USER, "k", "v", 1);
	a.buf[0] ^= 1;
	assert_int_equal(get(&a, "user.k", v, sizeof(v)), -EIO);
	assert_int_equal(f2fs_xattr_list(a.buf, a.len, NULL, 0), -EIO);
	assert_int_equal(f2fs_xattr_validate(a.buf, a.len), -EIO);
	/* a zeroed header in front of entries is no better */
	memset(a.buf, 0, sizeof(struct f2fs_xattr_header));
	assert_int_equal(get(&a, "user.k", v, sizeof(v)), -EIO);
	assert_int_equal(f2fs_xattr_validate(a.buf, a.len), -EIO);
	area_free(&a);

	/* garbage in the header alone */
	a = area_new(AREA_BYTES, false);
	a.buf[12] = 1;
	assert_int_equal(f2fs_xattr_validate(a.buf, a.len), -EIO);
	area_free(&a);
}

/* Bytes after the last whole entry that cannot be a terminator. */
static void test_ragged_tail(void **state)
{
	const size_t len = 24 + 8 + 2;
	struct area a = area_new(len, true);

	area_add(&a, F2FS_XATTR_INDEX_USER, "ab", "", 0);
	assert_int_equal(f2fs_xattr_validate(a.buf, a.len), 0);
	a.buf[len - 1] = 9;
	assert_int_equal(f2fs_xattr_validate(a.buf, a.len), -EIO);
	assert_int_equal(f2fs_xattr_list(a.buf, a.len, NULL, 0), -EIO);
	area_free(&a);

	/* a buffer too short for a header: empty if zero, corrupt if not */
	{
		uint8_t *tiny = calloc(1, 10);

		assert_int_equal(f2fs_xattr_validate(tiny, 10), 0);
		tiny[9] = 1;
		assert_int_equal(f2fs_xattr_validate(tiny, 10), -EIO);
		assert_int_equal(f2fs_xattr_get(tiny, 10, "user.a", NULL, 0), -EIO);
		free(tiny);
	}
}

static uint32_t rng_state = 99;

static uint32_t rng(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

/*
 * Mutate a valid area and every truncation of it. Whatever the verdict, a
 * listing must fit the buffer it was given and a value its size, and
 * AddressSanitizer must stay quiet. validate and list must agree on -EIO.
 */
static void test_mutations(void **state)
{
	static const char *const names[] = {
		"user.foo", "trusted.t", "security.selinux", "system.posix_acl_access",
		"system.posix_acl_default", "user.dup",
	};
	struct area good = area_every_kind();

	for (int iter = 0; iter < 20000; iter++) {
		size_t len = iter % 4 ? good.len : rng() % (good.pos + 8);
		uint8_t *buf = malloc(len ? len : 1);
		char list[600], v[100];
		ssize_t ln;
		int val;

		memcpy(buf, good.buf, len);
		for (int k = 0, flips = 1 + rng() % 3; k < flips && len; k++)
			buf[rng() % MIN(len, good.pos + 8)] ^= (uint8_t)(1u << (rng() % 8));

		val = f2fs_xattr_validate(buf, len);
		assert_true(val == 0 || val == -EIO);
		ln = f2fs_xattr_list(buf, len, list, sizeof(list));
		assert_true(ln == -EIO || ln == -ERANGE || (ln >= 0 && ln <= (ssize_t)sizeof(list)));
		if (ln != -ERANGE)
			assert_int_equal(val == -EIO, ln == -EIO);
		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			ssize_t r = f2fs_xattr_get(buf, len, names[i], v, sizeof(v));

			assert_true(r == -EIO || r == -ENODATA || r == -ERANGE ||
				    (r >= 0 && r <= (ssize_t)sizeof(v)));
		}
		free(buf);
	}
	area_free(&good);
}

/* /// f2fs_xattr_set: what the kernel did /// */

struct kxo_op {
	char kind;		/* 'S' setxattr, 'X' removexattr, 'G' getxattr, 'L' listxattr */
	const char *name;
	const char *val;	/* NULL: len bytes of fill */
	uint16_t len;
	uint8_t fill;
	uint8_t flags;
	int ret;
};

struct kxo_run {
	uint16_t off, len;
	const char *bytes;
	bool rep;		/* bytes[0], len times */
};

struct kxo_file {
	const char *name;
	uint16_t inline_size, mode0, mode;
	bool xnode;
	const struct kxo_op *ops;
	size_t nr_ops;
	const struct kxo_run *area;
	size_t nr_area;
};

/*
 * Kernel oracle for f2fs_xattr_set: Linux 6.1.0-57-amd64 ran these setxattr/removexattr
 * sequences on fresh files of an image made by mkfs.f2fs -O extra_attr,
 * inode_checksum,flexible_inline_xattr,compression,sb_checksum (the "ni" files were
 * created under -o noinline_xattr); ret is what each call returned (for G and L
 * the length or -errno of getxattr/listxattr at that point), and area, xnode and
 * mode are the inode's xattr area, whether it had an xattr node, and i_mode after
 * the last call. Generated by a script kept outside the tree (see the report);
 * do not edit.
 */

#define KXO_N50 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
#define KXO_N250 KXO_N50 KXO_N50 KXO_N50 KXO_N50 KXO_N50

static const struct kxo_op kxo_a_ops[] = {
	{ 'S', "user.a", "\x31", 1, 0, 0, 0 },
	{ 'S', "user.b", "\x32\x32", 2, 0, 0, 0 },
	{ 'S', "user.c", "\x33\x33\x33", 3, 0, 0, 0 },
	{ 'S', "user.a", "\x34\x34\x34\x34", 4, 0, 0, 0 },
	{ 'S', "user.b", "\x32\x32", 2, 0, 0, 0 },
	{ 'S', "user.b", "\x78", 1, 0, 1, -EEXIST },
	{ 'S', "user.zz", "\x79", 1, 0, 2, -ENODATA },
	{ 'X', "user.c", NULL, 0, 0, 0, 0 },
	{ 'X', "user.c", NULL, 0, 0, 0, -ENODATA },
	{ 'S', "trusted.t", "\x74", 1, 0, 0, 0 },
	{ 'S', "security.s", "\x73\x65\x63", 3, 0, 0, 0 },
	{ 'S', "user.e", "", 0, 0, 0, 0 },
	{ 'S', "user.e", "", 0, 0, 1, -EEXIST },
	{ 'S', "user.b", "\x32", 1, 0, 2, 0 },
	{ 'S', "user.", "\x76", 1, 0, 0, -EINVAL },
	{ 'S', "foo.bar", "\x76", 1, 0, 0, -EOPNOTSUPP },
	{ 'S', "system.foo", "\x76", 1, 0, 0, -EOPNOTSUPP },
	{ 'S', "security.", "\x76", 1, 0, 0, -EINVAL },
	{ 'S', "user." KXO_N250, "\x76", 1, 0, 0, 0 },
	{ 'S', "user.big", NULL, 4245, 0x42, 0, -E2BIG },
	{ 'S', "user.big", NULL, 3000, 0x42, 0, 0 },
	{ 'S', "user.big2", NULL, 1000, 0x43, 0, -E2BIG },
	{ 'X', "user." KXO_N250, NULL, 0, 0, 0, 0 },
	{ 'S', "user.a", "\x35", 1, 0, 1, -EEXIST },
	{ 'G', "user.a", NULL, 0, 0, 0, 4 },
	{ 'G', "user.nope", NULL, 0, 0, 0, -ENODATA },
	{ 'L', NULL, NULL, 0, 0, 0, 51 },
};

static const struct kxo_run kxo_a_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
	{   24,   16, "\x01\x01\x04\x00\x61\x34\x34\x34\x34\x00\x00\x00\x04\x01\x01\x00", false },
	{   40,   16, "\x74\x74\x00\x00\x06\x01\x03\x00\x73\x73\x65\x63\x01\x01\x00\x00", false },
	{   56,   16, "\x65\x00\x00\x00\x01\x01\x01\x00\x62\x32\x00\x00\x01\x03\xb8\x0b", false },
	{   72,    3, "\x62\x69\x67", false },
	{   75, 3000, "\x42", true },
};

static const struct kxo_op kxo_full_ops[] = {
	{ 'S', "user.f00", NULL, 349, 0x41, 0, 0 },
	{ 'S', "user.f01", NULL, 349, 0x42, 0, 0 },
	{ 'S', "user.f02", NULL, 349, 0x43, 0, 0 },
	{ 'S', "user.f03", NULL, 349, 0x44, 0, 0 },
	{ 'S', "user.f04", NULL, 349, 0x45, 0, 0 },
	{ 'S', "user.f05", NULL, 349, 0x46, 0, 0 },
	{ 'S', "user.f06", NULL, 349, 0x47, 0, 0 },
	{ 'S', "user.f07", NULL, 349, 0x48, 0, 0 },
	{ 'S', "user.f08", NULL, 349, 0x49, 0, 0 },
	{ 'S', "user.f09", NULL, 349, 0x4a, 0, 0 },
	{ 'S', "user.f10", NULL, 349, 0x4b, 0, 0 },
	{ 'S', "user.g", NULL, 327, 0x67, 0, 0 },
	{ 'S', "user.h", "", 0, 0, 0, -E2BIG },
	{ 'G', "user.nope", NULL, 0, 0, 0, -ENODATA },
	{ 'G', "user.g", NULL, 0, 0, 0, 327 },
	{ 'G', "user.f00", NULL, 0, 0, 0, 349 },
	{ 'L', NULL, NULL, 0, 0, 0, 106 },
	{ 'S', "user.f03", NULL, 349, 0x7a, 0, 0 },
	{ 'S', "user.f04", NULL, 350, 0x7a, 0, -E2BIG },
	{ 'S', "user.f05", NULL, 346, 0x79, 2, 0 },
	{ 'S', "user.h", "", 0, 0, 0, -E2BIG },
	{ 'G', "user.h", NULL, 0, 0, 0, -ENODATA },
	{ 'L', NULL, NULL, 0, 0, 0, 106 },
};

static const struct kxo_run kxo_full_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
	{   24,    7, "\x01\x03\x5d\x01\x66\x30\x30", false },
	{   31,  349, "\x41", true },
	{  380,    7, "\x01\x03\x5d\x01\x66\x30\x31", false },
	{  387,  349, "\x42", true },
	{  736,    7, "\x01\x03\x5d\x01\x66\x30\x32", false },
	{  743,  349, "\x43", true },
	{ 1092,    7, "\x01\x03\x5d\x01\x66\x30\x34", false },
	{ 1099,  349, "\x45", true },
	{ 1448,    7, "\x01\x03\x5d\x01\x66\x30\x36", false },
	{ 1455,  349, "\x47", true },
	{ 1804,    7, "\x01\x03\x5d\x01\x66\x30\x37", false },
	{ 1811,  349, "\x48", true },
	{ 2160,    7, "\x01\x03\x5d\x01\x66\x30\x38", false },
	{ 2167,  349, "\x49", true },
	{ 2516,    7, "\x01\x03\x5d\x01\x66\x30\x39", false },
	{ 2523,  349, "\x4a", true },
	{ 2872,    7, "\x01\x03\x5d\x01\x66\x31\x30", false },
	{ 2879,  349, "\x4b", true },
	{ 3228,    4, "\x01\x01\x47\x01", false },
	{ 3232,  328, "\x67", true },
	{ 3560,    7, "\x01\x03\x5d\x01\x66\x30\x33", false },
	{ 3567,  349, "\x7a", true },
	{ 3916,    7, "\x01\x03\x5a\x01\x66\x30\x35", false },
	{ 3923,  346, "\x79", true },
};

static const struct kxo_op kxo_sh1_ops[] = {
	{ 'S', "user.s0", NULL, 100, 0x61, 0, 0 },
	{ 'S', "user.s1", NULL, 100, 0x62, 0, 0 },
	{ 'S', "user.s2", NULL, 100, 0x63, 0, 0 },
	{ 'S', "user.s3", NULL, 100, 0x64, 0, 0 },
	{ 'X', "user.s1", NULL, 0, 0, 0, 0 },
	{ 'X', "user.s2", NULL, 0, 0, 0, 0 },
	{ 'X', "user.s3", NULL, 0, 0, 0, 0 },
};

static const struct kxo_run kxo_sh1_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
	{   24,    6, "\x01\x02\x64\x00\x73\x30", false },
	{   30,  100, "\x61", true },
};

static const struct kxo_op kxo_sh2_ops[] = {
	{ 'S', "user.s0", NULL, 100, 0x61, 0, 0 },
	{ 'S', "user.s1", NULL, 100, 0x62, 0, 0 },
	{ 'S', "user.s2", NULL, 100, 0x63, 0, 0 },
	{ 'S', "user.s3", NULL, 100, 0x64, 0, 0 },
	{ 'X', "user.s1", NULL, 0, 0, 0, 0 },
	{ 'X', "user.s2", NULL, 0, 0, 0, 0 },
	{ 'X', "user.s3", NULL, 0, 0, 0, 0 },
	{ 'S', "user.t", NULL, 50, 0x74, 0, 0 },
	{ 'S', "user.u", "\x75\x75\x75\x75", 4, 0, 0, 0 },
	{ 'G', "user.nope", NULL, 0, 0, 0, -ENODATA },
	{ 'L', NULL, NULL, 0, 0, 0, 22 },
};

static const struct kxo_run kxo_sh2_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
	{   24,    6, "\x01\x02\x64\x00\x73\x30", false },
	{   30,  100, "\x61", true },
	{  130,    6, "\x00\x00\x01\x01\x32\x00", false },
	{  136,   51, "\x74", true },
	{  187,   10, "\x00\x01\x01\x04\x00\x75\x75\x75\x75\x75", false },
};

static const struct kxo_op kxo_sh3_ops[] = {
	{ 'S', "user.s0", NULL, 100, 0x61, 0, 0 },
	{ 'S', "user.s1", NULL, 100, 0x62, 0, 0 },
	{ 'S', "user.s2", NULL, 100, 0x63, 0, 0 },
	{ 'S', "user.s3", NULL, 100, 0x64, 0, 0 },
	{ 'X', "user.s1", NULL, 0, 0, 0, 0 },
	{ 'X', "user.s2", NULL, 0, 0, 0, 0 },
	{ 'X', "user.s3", NULL, 0, 0, 0, 0 },
	{ 'S', "user.t", NULL, 50, 0x74, 0, 0 },
	{ 'S', "user.u", "\x75\x75\x75\x75", 4, 0, 0, 0 },
	{ 'G', "user.nope", NULL, 0, 0, 0, -ENODATA },
	{ 'L', NULL, NULL, 0, 0, 0, 22 },
	{ 'S', "user.v", "\x76", 1, 0, 0, 0 },
};

static const struct kxo_run kxo_sh3_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
	{   24,    6, "\x01\x02\x64\x00\x73\x30", false },
	{   30,  100, "\x61", true },
	{  130,    6, "\x00\x00\x01\x01\x32\x00", false },
	{  136,   51, "\x74", true },
	{  187,   16, "\x00\x01\x01\x04\x00\x75\x75\x75\x75\x75\x00\x00\x00\x01\x01\x01", false },
	{  203,    3, "\x00\x76\x76", false },
};

static const struct kxo_op kxo_sh4_ops[] = {
	{ 'S', "user.s0", NULL, 100, 0x61, 0, 0 },
	{ 'S', "user.s1", NULL, 100, 0x62, 0, 0 },
	{ 'S', "user.s2", NULL, 100, 0x63, 0, 0 },
	{ 'S', "user.s3", NULL, 100, 0x64, 0, 0 },
	{ 'X', "user.s1", NULL, 0, 0, 0, 0 },
	{ 'X', "user.s2", NULL, 0, 0, 0, 0 },
	{ 'X', "user.s3", NULL, 0, 0, 0, 0 },
	{ 'S', "user.t", NULL, 50, 0x74, 0, 0 },
	{ 'S', "user.u", "\x75\x75\x75\x75", 4, 0, 0, 0 },
	{ 'G', "user.nope", NULL, 0, 0, 0, -ENODATA },
	{ 'L', NULL, NULL, 0, 0, 0, 22 },
	{ 'S', "user.v", "\x76", 1, 0, 0, 0 },
	{ 'X', "user.v", NULL, 0, 0, 0, 0 },
};

static const struct kxo_run kxo_sh4_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
	{   24,    6, "\x01\x02\x64\x00\x73\x30", false },
	{   30,  100, "\x61", true },
	{  130,    6, "\x00\x00\x01\x01\x32\x00", false },
	{  136,   51, "\x74", true },
	{  187,   10, "\x00\x01\x01\x04\x00\x75\x75\x75\x75\x75", false },
};

static const struct kxo_op kxo_d_ops[] = {
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  28, 0, 0, 0 },
	{ 'S', "user.x", "\x78", 1, 0, 0, 0 },
	{ 'S', "system.posix_acl_default",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x20\x00\x05\x00\xff\xff\xff\xff",
	  28, 0, 0, 0 },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x02\x00\x05\x00"
	  "\xe8\x03\x00\x00\x04\x00\x05\x00\xff\xff\xff\xff\x08\x00\x07\x00"
	  "\x64\x00\x00\x00\x10\x00\x07\x00\xff\xff\xff\xff\x20\x00\x05\x00"
	  "\xff\xff\xff\xff",
	  52, 0, 0, 0 },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x02\x00\x05\x00"
	  "\xe8\x03\x00\x00\x04\x00\x05\x00\xff\xff\xff\xff\x08\x00\x07\x00"
	  "\x64\x00\x00\x00\x10\x00\x07\x00\xff\xff\xff\xff\x20\x00\x05\x00"
	  "\xff\xff\xff\xff",
	  52, 0, 1, 0 },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x02\x00\x05\x00"
	  "\xe8\x03\x00\x00\x02\x00\x06\x00\x07\x00\x00\x00\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x08\x00\x07\x00\x64\x00\x00\x00\x10\x00\x05\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  60, 0, 2, 0 },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x02\x00\x05\x00"
	  "\xe8\x03\x00\x00\x04\x00\x05\x00\xff\xff\xff\xff\x20\x00\x05\x00"
	  "\xff\xff\xff\xff",
	  36, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access",
	  "\x03\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  28, 0, 0, -EOPNOTSUPP },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x08\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  28, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access", "\x02\x00\x00\x00\x01", 5, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x04\x00\x05\x00\xff\xff\xff\xff\x01\x00\x07\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  28, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x02\x00\x05\x00"
	  "\xff\xff\xff\xff\x04\x00\x05\x00\xff\xff\xff\xff\x10\x00\x07\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  44, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x40\x00\x05\x00"
	  "\xff\xff\xff\xff\x04\x00\x05\x00\xff\xff\xff\xff\x20\x00\x00\x00"
	  "\xff\xff\xff\xff",
	  36, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x04\x00\x05\x00\xff\xff\xff\xff\x20\x00\x00\x00"
	  "\xff\xff\xff\xff",
	  36, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_default",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x10\x00\x07\x00\xff\xff\xff\xff\x20\x00\x05\x00"
	  "\xff\xff\xff\xff",
	  36, 0, 0, 0 },
	{ 'G', "system.posix_acl_access", NULL, 0, 0, 0, 60 },
	{ 'G', "system.posix_acl_default", NULL, 0, 0, 0, 36 },
	{ 'L', NULL, NULL, 0, 0, 0, 56 },
};

static const struct kxo_run kxo_d_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
	{   24,   16, "\x01\x01\x01\x00\x78\x78\x00\x00\x02\x00\x2c\x00\x01\x00\x00\x00", false },
	{   40,   16, "\x01\x00\x07\x00\x02\x00\x05\x00\xe8\x03\x00\x00\x02\x00\x06\x00", false },
	{   56,   16, "\x07\x00\x00\x00\x04\x00\x05\x00\x08\x00\x07\x00\x64\x00\x00\x00", false },
	{   72,   16, "\x10\x00\x05\x00\x20\x00\x00\x00\x03\x00\x14\x00\x01\x00\x00\x00", false },
	{   88,   15, "\x01\x00\x07\x00\x04\x00\x05\x00\x10\x00\x07\x00\x20\x00\x05", false },
};

static const struct kxo_op kxo_d2_ops[] = {
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  28, 0, 0, 0 },
	{ 'S', "user.x", "\x78", 1, 0, 0, 0 },
	{ 'S', "system.posix_acl_default",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x20\x00\x05\x00\xff\xff\xff\xff",
	  28, 0, 0, 0 },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x02\x00\x05\x00"
	  "\xe8\x03\x00\x00\x04\x00\x05\x00\xff\xff\xff\xff\x08\x00\x07\x00"
	  "\x64\x00\x00\x00\x10\x00\x07\x00\xff\xff\xff\xff\x20\x00\x05\x00"
	  "\xff\xff\xff\xff",
	  52, 0, 0, 0 },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x02\x00\x05\x00"
	  "\xe8\x03\x00\x00\x04\x00\x05\x00\xff\xff\xff\xff\x08\x00\x07\x00"
	  "\x64\x00\x00\x00\x10\x00\x07\x00\xff\xff\xff\xff\x20\x00\x05\x00"
	  "\xff\xff\xff\xff",
	  52, 0, 1, 0 },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x02\x00\x05\x00"
	  "\xe8\x03\x00\x00\x02\x00\x06\x00\x07\x00\x00\x00\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x08\x00\x07\x00\x64\x00\x00\x00\x10\x00\x05\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  60, 0, 2, 0 },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x02\x00\x05\x00"
	  "\xe8\x03\x00\x00\x04\x00\x05\x00\xff\xff\xff\xff\x20\x00\x05\x00"
	  "\xff\xff\xff\xff",
	  36, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access",
	  "\x03\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  28, 0, 0, -EOPNOTSUPP },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x08\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  28, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access", "\x02\x00\x00\x00\x01", 5, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x04\x00\x05\x00\xff\xff\xff\xff\x01\x00\x07\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  28, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x02\x00\x05\x00"
	  "\xff\xff\xff\xff\x04\x00\x05\x00\xff\xff\xff\xff\x10\x00\x07\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  44, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x40\x00\x05\x00"
	  "\xff\xff\xff\xff\x04\x00\x05\x00\xff\xff\xff\xff\x20\x00\x00\x00"
	  "\xff\xff\xff\xff",
	  36, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x04\x00\x05\x00\xff\xff\xff\xff\x20\x00\x00\x00"
	  "\xff\xff\xff\xff",
	  36, 0, 0, -EINVAL },
	{ 'S', "system.posix_acl_default",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x10\x00\x07\x00\xff\xff\xff\xff\x20\x00\x05\x00"
	  "\xff\xff\xff\xff",
	  36, 0, 0, 0 },
	{ 'G', "system.posix_acl_access", NULL, 0, 0, 0, 60 },
	{ 'G', "system.posix_acl_default", NULL, 0, 0, 0, 36 },
	{ 'L', NULL, NULL, 0, 0, 0, 56 },
	{ 'S', "system.posix_acl_access", "\x02\x00\x00\x00", 4, 0, 0, 0 },
	{ 'X', "system.posix_acl_default", NULL, 0, 0, 0, 0 },
	{ 'X', "system.posix_acl_default", NULL, 0, 0, 0, 0 },
	{ 'X', "system.posix_acl_access", NULL, 0, 0, 0, 0 },
	{ 'G', "system.posix_acl_access", NULL, 0, 0, 0, -ENODATA },
	{ 'L', NULL, NULL, 0, 0, 0, 7 },
};

static const struct kxo_run kxo_d2_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
	{   24,    6, "\x01\x01\x01\x00\x78\x78", false },
};

static const struct kxo_op kxo_f2_ops[] = {
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x06\x00\xff\xff\xff\xff\x04\x00\x04\x00"
	  "\xff\xff\xff\xff\x10\x00\x05\x00\xff\xff\xff\xff\x20\x00\x04\x00"
	  "\xff\xff\xff\xff",
	  36, 0, 0, 0 },
	{ 'S', "system.posix_acl_default",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff\x20\x00\x05\x00\xff\xff\xff\xff",
	  28, 0, 0, -EACCES },
	{ 'X', "system.posix_acl_default", NULL, 0, 0, 0, 0 },
	{ 'S', "system.posix_acl_default",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x05\x00"
	  "\xff\xff\xff\xff",
	  20, 0, 0, -EACCES },
	{ 'S', "system.posix_acl_default",
	  "\x03\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff",
	  12, 0, 0, -EOPNOTSUPP },
	{ 'S', "user.k", "\x6b", 1, 0, 0, 0 },
	{ 'S', "system.posix_acl_access",
	  "\x02\x00\x00\x00\x01\x00\x07\x00\xff\xff\xff\xff\x04\x00\x00\x00"
	  "\xff\xff\xff\xff\x20\x00\x00\x00\xff\xff\xff\xff",
	  28, 0, 0, 0 },
	{ 'G', "system.posix_acl_access", NULL, 0, 0, 0, -ENODATA },
	{ 'L', NULL, NULL, 0, 0, 0, 7 },
};

static const struct kxo_run kxo_f2_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
	{   24,    6, "\x01\x01\x01\x00\x6b\x6b", false },
};

static const struct kxo_op kxo_fresh_ops[] = {
	{ 'X', "system.posix_acl_access", NULL, 0, 0, 0, 0 },
	{ 'X', "system.posix_acl_default", NULL, 0, 0, 0, 0 },
	{ 'X', "user.a", NULL, 0, 0, 0, -ENODATA },
	{ 'G', "system.posix_acl_access", NULL, 0, 0, 0, -ENODATA },
	{ 'L', NULL, NULL, 0, 0, 0, 0 },
};

static const struct kxo_run kxo_fresh_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
};

static const struct kxo_op kxo_ni_ops[] = {
	{ 'S', "user.a", "\x31", 1, 0, 0, 0 },
	{ 'S', "user.b", "\x32", 1, 0, 0, 0 },
	{ 'X', "user.a", NULL, 0, 0, 0, 0 },
	{ 'X', "user.b", NULL, 0, 0, 0, 0 },
	{ 'L', NULL, NULL, 0, 0, 0, 0 },
};

static const struct kxo_run kxo_ni_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
};

static const struct kxo_op kxo_ni2_ops[] = {
	{ 'X', "system.posix_acl_access", NULL, 0, 0, 0, 0 },
};

static const struct kxo_run kxo_ni2_area[] = {
	{    0,    5, "\x11\x20\xf5\xf2\x01", false },
};

static const struct kxo_op kxo_ni3_ops[] = {
	{ 'X', "user.q", NULL, 0, 0, 0, -ENODATA },
};

static const struct kxo_run kxo_ni3_area[] = {
};

#define KXO(f) f##_ops, ARRAY_SIZE(f##_ops), f##_area, ARRAY_SIZE(f##_area)

static const struct kxo_file kxo_files[] = {
	{ "a", 200, 0100644, 0100644, true, KXO(kxo_a) },
	{ "full", 200, 0100644, 0100644, true, KXO(kxo_full) },
	{ "sh1", 200, 0100644, 0100644, false, KXO(kxo_sh1) },
	{ "sh2", 200, 0100644, 0100644, false, KXO(kxo_sh2) },
	{ "sh3", 200, 0100644, 0100644, true, KXO(kxo_sh3) },
	{ "sh4", 200, 0100644, 0100644, false, KXO(kxo_sh4) },
	{ "d", 200, 040755, 040750, false, KXO(kxo_d) },
	{ "d2", 200, 040755, 040750, false, KXO(kxo_d2) },
	{ "f2", 200, 0100644, 0100700, false, KXO(kxo_f2) },
	{ "fresh", 200, 0100644, 0100644, false, KXO(kxo_fresh) },
	{ "ni", 0, 0100644, 0100644, true, KXO(kxo_ni) },
	{ "ni2", 0, 0100644, 0100644, true, KXO(kxo_ni2) },
	{ "ni3", 0, 0100644, 0100644, false, KXO(kxo_ni3) },
};

#define S_DIR	0040755
#define S_REG	0100644
#define S_LNK	0120777

static int set(uint8_t *buf, size_t inl, size_t total, uint16_t mode, const char *name,
	       const void *v, size_t n, int flags, struct f2fs_xattr_update *up)
{
	return f2fs_xattr_set(buf, inl, total, mode, name, v, n, flags, false, up);
}

static int rm(uint8_t *buf, size_t inl, size_t total, uint16_t mode, const char *name,
	      struct f2fs_xattr_update *up)
{
	return f2fs_xattr_set(buf, inl, total, mode, name, NULL, 0, 0, true, up);
}

static bool zero_from(const uint8_t *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Replay each sequence: every call returns what the kernel's did, and at the
 * end the area is byte for byte the kernel's, the xattr node is needed
 * exactly when the kernel had one, and i_mode is the kernel's.
 */
static void test_kernel_set_sequences(void **state)
{
	static uint8_t val[65536];

	for (size_t f = 0; f < ARRAY_SIZE(kxo_files); f++) {
		const struct kxo_file *kf = &kxo_files[f];
		size_t total = kf->inline_size + VALID_XATTR_BLOCK_SIZE;
		uint8_t *buf = calloc(1, total), *want = calloc(1, total);
		uint16_t mode = kf->mode0;
		bool node = false;

		assert_non_null(buf);
		assert_non_null(want);
		for (size_t i = 0; i < kf->nr_ops; i++) {
			const struct kxo_op *op = &kf->ops[i];
			struct f2fs_xattr_update up;
			const void *v = op->val;
			ssize_t ret;

			if (!v)
				v = memset(val, op->fill, op->len);
			switch (op->kind) {
			case 'S':
				ret = f2fs_xattr_set(buf, kf->inline_size, total, mode, op->name, v,
						     op->len, op->flags, false, &up);
				break;
			case 'X':
				ret = f2fs_xattr_set(buf, kf->inline_size, total, mode, op->name, NULL,
						     0, 0, true, &up);
				break;
			case 'G':
				ret = f2fs_xattr_get(buf, total, op->name, val, sizeof(val));
				break;
			default:
				ret = f2fs_xattr_list(buf, total, (char *)val, sizeof(val));
				break;
			}
			if (ret != op->ret)
				print_error("/%s, call %zu (%c %s): %zd, the kernel %d\n", kf->name, i,
					    op->kind, op->name ? op->name : "", ret, op->ret);
			assert_int_equal(ret, op->ret);
			if ((op->kind == 'S' || op->kind == 'X') && !ret) {
				if (up.set_mode)
					mode = up.mode;
				if (up.dirty)
					node = up.need_node;
				assert_int_equal(up.need_node, up.used > kf->inline_size);
			}
		}
		for (size_t r = 0; r < kf->nr_area; r++) {
			const struct kxo_run *run = &kf->area[r];

			assert_true((size_t)run->off + run->len <= total);
			if (run->rep)
				memset(want + run->off, run->bytes[0], run->len);
			else
				memcpy(want + run->off, run->bytes, run->len);
		}
		if (memcmp(buf, want, total))
			print_error("/%s: the area differs from the kernel's\n", kf->name);
		assert_memory_equal(buf, want, total);
		assert_int_equal(node, kf->xnode);
		assert_int_equal(mode, kf->mode);
		free(buf);
		free(want);
	}
}

/* /// f2fs_xattr_set: entries /// */

static void expect_list(const uint8_t *buf, size_t len, const char *want, size_t want_len)
{
	char list[1024];

	assert_int_equal(f2fs_xattr_validate(buf, len), 0);
	assert_int_equal(f2fs_xattr_list(buf, len, list, sizeof(list)), want_len);
	assert_memory_equal(list, want, want_len);
}

static void expect_xattr(const uint8_t *buf, size_t len, const char *name, const void *want,
			 size_t want_len)
{
	char v[4096];

	assert_int_equal(f2fs_xattr_get(buf, len, name, v, sizeof(v)), want_len);
	assert_memory_equal(v, want, want_len);
}

static void test_set_round_trip(void **state)
{
	uint8_t *buf = calloc(1, AREA_BYTES), *copy = malloc(AREA_BYTES);
	struct f2fs_xattr_update up;
	static const char l1[] = "user.a\0trusted.t\0security.selinux\0user.empty";
	static const char l2[] = "trusted.t\0security.selinux\0user.empty\0user.a";
	static const char l3[] = "security.selinux\0user.empty\0user.a";
	char v[8];

	assert_non_null(buf);
	assert_non_null(copy);
	/* a never-used area reads as empty and gets its header with the first entry */
	expect_list(buf, AREA_BYTES, "", 0);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.a", "1", 1, 0, &up), 0);
	assert_true(up.dirty && up.touched && !up.need_node && !up.set_mode);
	assert_int_equal(up.mode, S_REG);
	assert_int_equal(up.used, 24 + 8);
	assert_memory_equal(buf, "\x11\x20\xf5\xf2\x01\0\0\0", 8);
	assert_memory_equal(buf + 24, "\x01\x01\x01\x00" "a1\0\0", 8);
	assert_true(zero_from(buf, 8, 24) && zero_from(buf, 32, AREA_BYTES));
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "trusted.t", "tt", 2, 0, &up), 0);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "security.selinux", "ctx", 3,
			     XATTR_CREATE, &up), 0);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.empty", NULL, 0, 0, &up),
			 0);
	assert_int_equal(up.used, 24 + 8 + 8 + 16 + 12);
	expect_list(buf, AREA_BYTES, l1, sizeof(l1));
	expect_xattr(buf, AREA_BYTES, "user.empty", "", 0);
	expect_xattr(buf, AREA_BYTES, "security.selinux", "ctx", 3);

	/* the same value again: nothing written, but a success */
	memcpy(copy, buf, AREA_BYTES);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "trusted.t", "tt", 2,
			     XATTR_REPLACE, &up), 0);
	assert_true(!up.dirty && up.touched);
	assert_int_equal(up.used, 24 + 8 + 8 + 16 + 12);
	assert_memory_equal(buf, copy, AREA_BYTES);

	/* a new value: the entry moves to the end */
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.a", "xyz", 3,
			     XATTR_REPLACE, &up), 0);
	assert_true(up.dirty);
	expect_list(buf, AREA_BYTES, l2, sizeof(l2));
	expect_xattr(buf, AREA_BYTES, "user.a", "xyz", 3);
	assert_int_equal(up.used, 24 + 8 + 16 + 12 + 8);
	assert_true(zero_from(buf, up.used, AREA_BYTES));

	/* removal closes the gap and zeroes what it leaves */
	assert_int_equal(rm(buf, INLINE_BYTES, AREA_BYTES, S_REG, "trusted.t", &up), 0);
	assert_true(up.dirty && !up.need_node);
	assert_int_equal(up.used, 24 + 16 + 12 + 8);
	expect_list(buf, AREA_BYTES, l3, sizeof(l3));
	assert_int_equal(f2fs_xattr_get(buf, AREA_BYTES, "trusted.t", v, sizeof(v)), -ENODATA);
	assert_true(zero_from(buf, up.used, AREA_BYTES));
	for (const char *n = l3; n < l3 + sizeof(l3); n += strlen(n) + 1)
		assert_int_equal(rm(buf, INLINE_BYTES, AREA_BYTES, S_REG, n, &up), 0);
	assert_int_equal(up.used, 24);
	expect_list(buf, AREA_BYTES, "", 0);
	assert_true(zero_from(buf, 8, AREA_BYTES));
	free(buf);
	free(copy);
}

static void test_set_flags(void **state)
{
	uint8_t *buf = calloc(1, AREA_BYTES), *copy = malloc(AREA_BYTES);
	struct f2fs_xattr_update up;

	assert_non_null(buf);
	assert_non_null(copy);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.x", "1", 1, XATTR_REPLACE,
			     &up), -ENODATA);
	assert_true(zero_from(buf, 0, AREA_BYTES));
	assert_false(up.touched || up.dirty);
	assert_int_equal(rm(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.x", &up), -ENODATA);
	assert_true(zero_from(buf, 0, AREA_BYTES));
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.x", "1", 1, XATTR_CREATE,
			     &up), 0);
	memcpy(copy, buf, AREA_BYTES);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.x", "2", 1, XATTR_CREATE,
			     &up), -EEXIST);
	/* the same value is still an existing one */
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.x", "1", 1, XATTR_CREATE,
			     &up), -EEXIST);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.x", "2", 1,
			     XATTR_CREATE | XATTR_REPLACE, &up), -EEXIST);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.y", "2", 1,
			     XATTR_CREATE | XATTR_REPLACE, &up), -ENODATA);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.y", "2", 1, 4, &up),
			 -EINVAL);
	/* same suffix, other namespace: another attribute */
	assert_int_equal(rm(buf, INLINE_BYTES, AREA_BYTES, S_REG, "trusted.x", &up), -ENODATA);
	assert_memory_equal(buf, copy, AREA_BYTES);
	free(buf);
	free(copy);
}

static void test_set_names(void **state)
{
	static const struct {
		const char *name;
		int index;
		const char *suffix;
	} ok[] = {
		{ "user.x", F2FS_XATTR_INDEX_USER, "x" },
		{ "trusted.overlay.opaque", F2FS_XATTR_INDEX_TRUSTED, "overlay.opaque" },
		{ "security.selinux", F2FS_XATTR_INDEX_SECURITY, "selinux" },
		{ "system.posix_acl_access", F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, "" },
		{ "system.posix_acl_default", F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT, "" },
	};
	static const struct {
		const char *name;
		int err;
	} bad[] = {
		{ "user.", -EINVAL }, { "trusted.", -EINVAL }, { "security.", -EINVAL },
		{ "foo.bar", -EOPNOTSUPP }, { "system.foo", -EOPNOTSUPP },
		{ "system.advise", -EOPNOTSUPP }, { "system.posix_acl_access.x", -EOPNOTSUPP },
		{ "lustre.lma", -EOPNOTSUPP }, { "User.x", -EOPNOTSUPP }, { "user", -EOPNOTSUPP },
	};
	uint8_t *buf = calloc(1, AREA_BYTES);
	struct f2fs_xattr_update up;
	char name[300] = "user.";
	const char *suffix;

	assert_non_null(buf);
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		suffix = NULL;
		assert_int_equal(f2fs_xattr_prefix_index(ok[i].name, &suffix), ok[i].index);
		assert_string_equal(suffix, ok[i].suffix);
		assert_int_equal(f2fs_xattr_prefix_index(ok[i].name, NULL), ok[i].index);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(f2fs_xattr_prefix_index(bad[i].name, &suffix), bad[i].err);
		assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, bad[i].name, "v", 1, 0,
				     &up), bad[i].err);
		assert_int_equal(rm(buf, INLINE_BYTES, AREA_BYTES, S_REG, bad[i].name, &up),
				 bad[i].err);
	}
	assert_int_equal(f2fs_xattr_prefix_index(NULL, &suffix), -EINVAL);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, NULL, "v", 1, 0, &up), -EINVAL);
	/* the stored name is the suffix, at most F2FS_NAME_LEN bytes */
	memset(name + 5, 'n', 255);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, name, "v", 1, 0, &up), 0);
	assert_int_equal(buf[24], F2FS_XATTR_INDEX_USER);
	assert_int_equal(buf[25], 255);
	assert_int_equal(up.used, 24 + XATTR_ALIGN(4 + 255 + 1));
	assert_true(up.need_node);
	expect_xattr(buf, AREA_BYTES, name, "v", 1);
	name[5 + 255] = 'n';
	assert_int_equal(f2fs_xattr_prefix_index(name, &suffix), -ERANGE);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, name, "v", 1, 0, &up), -ERANGE);
	free(buf);
}

static void test_set_args(void **state)
{
	uint8_t *buf = calloc(1, AREA_BYTES);
	struct f2fs_xattr_update up;

	assert_non_null(buf);
	/* the area is the inline part, or the inline part and a whole node block */
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES - 4, S_REG, "user.a", "1", 1, 0, &up),
			 -EINVAL);
	assert_int_equal(set(buf, INLINE_BYTES, INLINE_BYTES + 4, S_REG, "user.a", "1", 1, 0, &up),
			 -EINVAL);
	assert_int_equal(set(buf, INLINE_BYTES + 2, INLINE_BYTES + 2, S_REG, "user.a", "1", 1, 0,
			     &up), -EINVAL);
	assert_int_equal(set(NULL, INLINE_BYTES, AREA_BYTES, S_REG, "user.a", "1", 1, 0, &up),
			 -EINVAL);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.a", NULL, 1, 0, &up),
			 -EINVAL);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.a", "1", 1, 0, NULL),
			 -EINVAL);
	assert_true(zero_from(buf, 0, AREA_BYTES));
	/* a value may be anything, NULL with size 0 included */
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.a", "\0\xff", 2, 0, &up),
			 0);
	expect_xattr(buf, AREA_BYTES, "user.a", "\0\xff", 2);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.a", NULL, 0, 0, &up), 0);
	expect_xattr(buf, AREA_BYTES, "user.a", "", 0);
	free(buf);
}

/* /// f2fs_xattr_set: space /// */

/*
 * Without an xattr node the list must end within the inline part: -ENOSPC
 * (the kernel's failed nid allocation), after the -E2BIG checks, which count
 * the node as if it were there.
 */
static void test_set_inline_only(void **state)
{
	uint8_t *buf = malloc(INLINE_BYTES), *copy = malloc(INLINE_BYTES);
	static uint8_t big[4096];
	struct f2fs_xattr_update up;
	const size_t max_value = INLINE_BYTES + VALID_XATTR_BLOCK_SIZE - 24 - 4;
	char name[32];
	int i;

	assert_non_null(buf);
	assert_non_null(copy);
	memset(buf, 0, INLINE_BYTES);
	memset(big, 'v', sizeof(big));
	for (i = 0;; i++) {
		int ret;

		snprintf(name, sizeof(name), "user.i%d", i);	/* 4 + 2 + 20: 28 bytes */
		memcpy(copy, buf, INLINE_BYTES);
		ret = set(buf, INLINE_BYTES, INLINE_BYTES, S_REG, name, big, 20, 0, &up);
		if (ret) {
			assert_int_equal(ret, -ENOSPC);
			assert_memory_equal(buf, copy, INLINE_BYTES);
			break;
		}
		assert_false(up.need_node);
		assert_int_equal(up.used, 24 + 28 * (i + 1));
	}
	assert_int_equal(i, (INLINE_BYTES - 24) / 28);
	/* 192 used: an 8-byte entry fills the inline part exactly, no end word */
	assert_int_equal(set(buf, INLINE_BYTES, INLINE_BYTES, S_REG, "user.z", "zz", 2, 0, &up), 0);
	assert_int_equal(up.used, INLINE_BYTES);
	assert_false(up.need_node);
	expect_xattr(buf, INLINE_BYTES, "user.z", "zz", 2);
	expect_xattr(buf, INLINE_BYTES, "user.i0", big, 20);
	assert_int_equal(f2fs_xattr_list(buf, INLINE_BYTES, NULL, 0), 6 * 8 + 7);
	assert_int_equal(set(buf, INLINE_BYTES, INLINE_BYTES, S_REG, "user.y", "", 0, 0, &up),
			 -ENOSPC);
	/* growing an entry in place of itself is no different */
	assert_int_equal(set(buf, INLINE_BYTES, INLINE_BYTES, S_REG, "user.z", "zzz", 3, 0, &up),
			 0);
	assert_int_equal(set(buf, INLINE_BYTES, INLINE_BYTES, S_REG, "user.z", "zzzzzzz", 7, 0,
			     &up), -ENOSPC);
	/* too big even with a node: -E2BIG, not -ENOSPC */
	assert_int_equal(set(buf, INLINE_BYTES, INLINE_BYTES, S_REG, "user.b", big, max_value + 1,
			     0, &up), -E2BIG);
	assert_int_equal(set(buf, INLINE_BYTES, INLINE_BYTES, S_REG, "user.b", big, 1000, 0, &up),
			 -ENOSPC);
	assert_int_equal(rm(buf, INLINE_BYTES, INLINE_BYTES, S_REG, "user.i3", &up), 0);
	assert_int_equal(up.used, INLINE_BYTES - 28);
	assert_int_equal(set(buf, INLINE_BYTES, INLINE_BYTES, S_REG, "user.b", big, 21, 0, &up), 0);
	assert_int_equal(up.used, INLINE_BYTES);
	free(buf);
	free(copy);

	/* no inline xattrs and no node: nothing fits, not even the header */
	assert_int_equal(set(NULL, 0, 0, S_REG, "user.a", "1", 1, 0, &up), -ENOSPC);
	assert_int_equal(rm(NULL, 0, 0, S_REG, "user.a", &up), -ENODATA);
	assert_int_equal(rm(NULL, 0, 0, S_REG, "system.posix_acl_access", &up), -ENOSPC);
	assert_int_equal(f2fs_xattr_get(NULL, 0, "user.a", NULL, 0), -ENODATA);
}

/* With the node: fill until -E2BIG; need_node follows the end of the list. */
static void test_set_with_node(void **state)
{
	static uint8_t v[4096];
	static const size_t inls[] = { INLINE_BYTES, 0, 24, MAX_INLINE_XATTR_SIZE * 4 };

	memset(v, 'q', sizeof(v));
	for (size_t k = 0; k < ARRAY_SIZE(inls); k++) {
		size_t inl = inls[k], total = inl + VALID_XATTR_BLOCK_SIZE;
		uint8_t *buf = calloc(1, total);
		struct f2fs_xattr_update up;
		char name[32];
		size_t used = 24;
		int i, ret;

		assert_non_null(buf);
		/* MAX_VALUE_LEN */
		assert_int_equal(set(buf, inl, total, S_REG, "user.m", v, total - 28 + 1, 0, &up),
				 -E2BIG);
		for (i = 0;; i++) {
			snprintf(name, sizeof(name), "trusted.%03d", i);	/* 4 + 3 + 97 */
			ret = set(buf, inl, total, S_REG, name, v, 97, 0, &up);
			if (ret)
				break;
			used += 104;
			assert_int_equal(up.used, used);
			assert_int_equal(up.need_node, used > inl);
		}
		assert_int_equal(ret, -E2BIG);
		assert_true(used + 104 > total);
		/* exactly to the end: the area itself ends the list */
		if (used + 8 <= total) {
			snprintf(name, sizeof(name), "user.%s", "e");
			assert_int_equal(set(buf, inl, total, S_REG, name, v, total - used - 5, 0, &up),
					 0);
			assert_int_equal(up.used, total);
			assert_int_equal(set(buf, inl, total, S_REG, "user.f", "", 0, 0, &up), -E2BIG);
			assert_int_equal(f2fs_xattr_get(buf, total, "user.nope", NULL, 0), -ENODATA);
			assert_int_equal(f2fs_xattr_validate(buf, total), 0);
			assert_int_equal(rm(buf, inl, total, S_REG, "user.e", &up), 0);
		}
		for (int j = 0; j < i; j++) {
			snprintf(name, sizeof(name), "trusted.%03d", j);
			expect_xattr(buf, total, name, v, 97);
			assert_int_equal(rm(buf, inl, total, S_REG, name, &up), 0);
			used -= 104;
			assert_int_equal(up.used, used);
			assert_int_equal(up.need_node, used > inl);
		}
		/* with no inline part, even an empty list lives in the node */
		assert_int_equal(up.used, 24);
		assert_int_equal(up.need_node, inl < 24);
		assert_true(zero_from(buf, 8, total));
		free(buf);
	}
}

/* /// f2fs_xattr_set: POSIX ACLs /// */

static size_t vfs_acl(uint8_t *out, const uint32_t (*e)[3], size_t n, uint32_t version)
{
	put32(out, version);
	for (size_t i = 0; i < n; i++) {
		put16(out + 4 + 8 * i, (uint16_t)e[i][0]);
		put16(out + 6 + 8 * i, (uint16_t)e[i][1]);
		put32(out + 8 + 8 * i, e[i][2]);
	}
	return 4 + 8 * n;
}

#define UNDEF 0xffffffffu

/* The stored entry of an ACL index: its value, or NULL. */
static const uint8_t *raw_entry(const uint8_t *buf, size_t len, unsigned int index, size_t *vlen)
{
	size_t pos = 24;

	while (pos + 4 <= len && (buf[pos] | buf[pos + 1] | buf[pos + 2] | buf[pos + 3])) {
		size_t nl = buf[pos + 1], vl = buf[pos + 2] | (buf[pos + 3] << 8);

		if (buf[pos] == index && nl == 0) {
			*vlen = vl;
			return buf + pos + 4;
		}
		pos += XATTR_ALIGN(4 + nl + vl);
	}
	return NULL;
}

static void test_acl_set_round_trip(void **state)
{
	static const uint32_t access[][3] = {
		{ T_USER_OBJ, 6, UNDEF }, { T_USER, 4, 1000 }, { T_USER, 7, 0 },
		{ T_GROUP_OBJ, 4, UNDEF }, { T_GROUP, 6, 100 }, { T_MASK, 6, UNDEF },
		{ T_OTHER, 4, UNDEF },
	};
	static const uint16_t access_disk[][3] = {
		{ T_USER_OBJ, 6, 0 }, { T_USER, 4, 1000 }, { T_USER, 7, 0 },
		{ T_GROUP_OBJ, 4, 0 }, { T_GROUP, 6, 100 }, { T_MASK, 6, 0 }, { T_OTHER, 4, 0 },
	};
	/* short entries' ids mean nothing: they come back as ACL_UNDEFINED_ID */
	static const uint32_t def[][3] = {
		{ T_USER_OBJ, 7, 0 }, { T_GROUP_OBJ, 5, 12 }, { T_OTHER, 1, UNDEF },
	};
	static const uint32_t def_read[][3] = {
		{ T_USER_OBJ, 7, UNDEF }, { T_GROUP_OBJ, 5, UNDEF }, { T_OTHER, 1, UNDEF },
	};
	uint8_t *buf = calloc(1, AREA_BYTES);
	uint8_t acl[128], want[128], disk[128];
	struct f2fs_xattr_update up;
	size_t n, m, vlen;
	const uint8_t *raw;

	assert_non_null(buf);
	n = vfs_acl(acl, access, ARRAY_SIZE(access), 2);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, 0102755, "system.posix_acl_access", acl,
			     n, 0, &up), 0);
	/* the mask stands for the group bits; type and set-id bits stay */
	assert_true(up.set_mode && up.dirty);
	assert_int_equal(up.mode, 0102664);
	expect_xattr(buf, AREA_BYTES, "system.posix_acl_access", acl, n);
	raw = raw_entry(buf, AREA_BYTES, F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, &vlen);
	assert_non_null(raw);
	m = disk_acl(disk, access_disk, ARRAY_SIZE(access_disk));
	assert_int_equal(vlen, m);
	assert_int_equal(m, 4 + 4 * 4 + 3 * 8);
	assert_memory_equal(raw, disk, m);

	n = vfs_acl(acl, def, ARRAY_SIZE(def), 2);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_DIR, "system.posix_acl_default", acl,
			     n, 0, &up), 0);
	assert_false(up.set_mode);
	assert_int_equal(up.mode, S_DIR);
	m = vfs_acl(want, def_read, ARRAY_SIZE(def_read), 2);
	expect_xattr(buf, AREA_BYTES, "system.posix_acl_default", want, m);
	raw = raw_entry(buf, AREA_BYTES, F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT, &vlen);
	assert_non_null(raw);
	assert_int_equal(vlen, 4 + 3 * 4);
	/* the ACL path ignores XATTR_CREATE and XATTR_REPLACE, as f2fs_set_acl does */
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_DIR, "system.posix_acl_default", acl,
			     n, XATTR_CREATE, &up), 0);
	assert_false(up.dirty);
	assert_int_equal(rm(buf, INLINE_BYTES, AREA_BYTES, S_DIR, "system.posix_acl_default", &up),
			 0);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_DIR, "system.posix_acl_default", acl,
			     n, XATTR_REPLACE, &up), 0);
	assert_true(up.dirty);
	expect_xattr(buf, AREA_BYTES, "system.posix_acl_default", want, m);
	free(buf);
}

/*
 * posix_acl_update_mode: an access ACL sets the permission bits; one that
 * says no more than they do is not stored (an old one is removed).
 */
static void test_acl_mode_equivalent(void **state)
{
	static const uint32_t equiv[][3] = {
		{ T_USER_OBJ, 7, UNDEF }, { T_GROUP_OBJ, 5, UNDEF }, { T_OTHER, 0, UNDEF },
	};
	static const uint32_t masked[][3] = {
		{ T_USER_OBJ, 6, UNDEF }, { T_GROUP_OBJ, 7, UNDEF }, { T_MASK, 4, UNDEF },
		{ T_OTHER, 4, UNDEF },
	};
	uint8_t *buf = calloc(1, AREA_BYTES);
	uint8_t acl[64], v[64];
	struct f2fs_xattr_update up;
	size_t n, vlen;

	assert_non_null(buf);
	n = vfs_acl(acl, equiv, ARRAY_SIZE(equiv), 2);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, 0104666, "system.posix_acl_access", acl,
			     n, 0, &up), 0);
	assert_true(up.set_mode && up.touched);
	assert_int_equal(up.mode, 0104750);
	/* removing the absent xattr still writes the area back, header and all */
	assert_true(up.dirty);
	assert_int_equal(up.used, 24);
	assert_memory_equal(buf, "\x11\x20\xf5\xf2\x01\0\0\0", 8);
	assert_int_equal(f2fs_xattr_get(buf, AREA_BYTES, "system.posix_acl_access", v, sizeof(v)),
			 -ENODATA);

	/* a MASK makes it more than mode bits, even without named entries */
	n = vfs_acl(acl, masked, ARRAY_SIZE(masked), 2);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "system.posix_acl_access", acl,
			     n, 0, &up), 0);
	assert_int_equal(up.mode, 0100644);
	expect_xattr(buf, AREA_BYTES, "system.posix_acl_access", acl, n);
	/* the same ACL again: nothing to write, the mode is still applied */
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, 0100600, "system.posix_acl_access", acl,
			     n, 0, &up), 0);
	assert_true(!up.dirty && up.set_mode && up.touched);
	assert_int_equal(up.mode, 0100644);
	/* an equivalent ACL replaces it with nothing */
	n = vfs_acl(acl, equiv, ARRAY_SIZE(equiv), 2);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "system.posix_acl_access", acl,
			     n, 0, &up), 0);
	assert_true(up.dirty && up.set_mode);
	assert_int_equal(up.mode, 0100750);
	assert_int_equal(up.used, 24);
	assert_int_equal(f2fs_xattr_get(buf, AREA_BYTES, "system.posix_acl_access", v, sizeof(v)),
			 -ENODATA);

	/* no entries, an empty value, removal: no ACL, the mode untouched */
	n = vfs_acl(acl, masked, ARRAY_SIZE(masked), 2);
	for (int how = 0; how < 3; how++) {
		assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "system.posix_acl_access",
				     acl, n, 0, &up), 0);
		assert_non_null(raw_entry(buf, AREA_BYTES, F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, &vlen));
		assert_int_equal(vlen, 4 + 4 * 4);
		if (how == 0)
			assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG,
					     "system.posix_acl_access", acl, 4, 0, &up), 0);
		else if (how == 1)
			assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG,
					     "system.posix_acl_access", NULL, 0, 0, &up), 0);
		else
			assert_int_equal(rm(buf, INLINE_BYTES, AREA_BYTES, S_REG,
					    "system.posix_acl_access", &up), 0);
		assert_true(up.dirty && !up.set_mode);
		assert_int_equal(up.mode, S_REG);
		assert_int_equal(up.used, 24);
	}
	/* removing an absent ACL is no error */
	assert_int_equal(rm(buf, INLINE_BYTES, AREA_BYTES, S_REG, "system.posix_acl_access", &up),
			 0);
	assert_true(up.dirty && up.touched);

	/* default ACLs: directories only, and never reduced to mode bits */
	n = vfs_acl(acl, equiv, ARRAY_SIZE(equiv), 2);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "system.posix_acl_default", acl,
			     n, 0, &up), -EACCES);
	assert_int_equal(rm(buf, INLINE_BYTES, AREA_BYTES, S_REG, "system.posix_acl_default", &up),
			 0);
	assert_false(up.dirty || up.touched || up.set_mode);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_DIR, "system.posix_acl_default", acl,
			     n, 0, &up), 0);
	assert_false(up.set_mode);
	expect_xattr(buf, AREA_BYTES, "system.posix_acl_default", acl, n);
	/* symlinks have no ACLs */
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_LNK, "system.posix_acl_access", acl,
			     n, 0, &up), -EOPNOTSUPP);
	assert_int_equal(rm(buf, INLINE_BYTES, AREA_BYTES, S_LNK, "system.posix_acl_default", &up),
			 -EOPNOTSUPP);
	free(buf);
}

/*
 * One posix_acl_create_masq case: the ACL of n entries masked with mode; the
 * result, the new mode and (when want is given) the new entries.
 */
static void masq_case(const uint32_t (*e)[3], size_t n, uint32_t mode, int ret,
		      uint32_t want_mode, const uint32_t (*want)[3])
{
	uint8_t acl[64], want_acl[64];
	size_t len = vfs_acl(acl, e, n, 2);

	assert_int_equal(f2fs_acl_create_masq(acl, len, &mode), ret);
	assert_int_equal(mode, want_mode);
	if (want) {
		vfs_acl(want_acl, want, n, 2);
		assert_memory_equal(acl, want_acl, len);
	}
}

/*
 * posix_acl_create_masq: cases worked out by hand from fs/posix_acl.c. A
 * file created 0666 under a default ACL with a mask and a named user: the
 * entries keep what mode allows, the mode what the entries allow.
 */
static void test_acl_create_masq(void **state)
{
	static const uint32_t dflt[][3] = {
		{ T_USER_OBJ, 7, UNDEF }, { T_USER, 7, 65534 }, { T_GROUP_OBJ, 5, UNDEF },
		{ T_MASK, 7, UNDEF }, { T_OTHER, 0, UNDEF },
	};
	static const uint32_t want_file[][3] = {
		{ T_USER_OBJ, 6, UNDEF }, { T_USER, 7, 65534 }, { T_GROUP_OBJ, 5, UNDEF },
		{ T_MASK, 6, UNDEF }, { T_OTHER, 0, UNDEF },
	};
	static const uint32_t plain[][3] = {
		{ T_USER_OBJ, 5, UNDEF }, { T_GROUP_OBJ, 7, UNDEF }, { T_OTHER, 1, UNDEF },
	};
	static const uint32_t want_plain[][3] = {
		{ T_USER_OBJ, 4, UNDEF }, { T_GROUP_OBJ, 6, UNDEF }, { T_OTHER, 0, UNDEF },
	};
	static const uint32_t no_group[][3] = { { T_USER_OBJ, 7, UNDEF }, { T_OTHER, 0, UNDEF } };
	uint8_t acl[64];
	uint32_t mode = 0644;
	size_t n;

	masq_case(dflt, ARRAY_SIZE(dflt), S_IFREG | 0666, 1, S_IFREG | 0660, want_file);
	/* directories keep setgid and sticky; 0777 under the same ACL */
	masq_case(dflt, ARRAY_SIZE(dflt), S_IFDIR | S_ISGID | 0777, 1, S_IFDIR | S_ISGID | 0770,
		  NULL);
	/* no mask, no named entries: equivalent to the mode, group_obj masked */
	masq_case(plain, ARRAY_SIZE(plain), S_IFREG | 0662, 0, S_IFREG | 0460, want_plain);
	/* no group entry at all: the kernel's -EIO; a bad header too */
	masq_case(no_group, ARRAY_SIZE(no_group), 0644, -EIO, 0644, NULL);
	n = vfs_acl(acl, plain, ARRAY_SIZE(plain), 1);
	assert_int_equal(f2fs_acl_create_masq(acl, n, &mode), -EIO);
	assert_int_equal(f2fs_acl_create_masq(acl, 5, &mode), -EIO);
}

/* posix_acl_chmod on the stored ACL: owner, mask (or group) and other follow. */
static void test_acl_chmod(void **state)
{
	static const uint32_t named[][3] = {
		{ T_USER_OBJ, 7, UNDEF }, { T_USER, 4, 1000 }, { T_GROUP_OBJ, 5, UNDEF },
		{ T_GROUP, 6, 100 }, { T_MASK, 7, UNDEF }, { T_OTHER, 5, UNDEF },
	};
	static const uint32_t after[][3] = {
		{ T_USER_OBJ, 6, UNDEF }, { T_USER, 4, 1000 }, { T_GROUP_OBJ, 5, UNDEF },
		{ T_GROUP, 6, 100 }, { T_MASK, 4, UNDEF }, { T_OTHER, 0, UNDEF },
	};
	uint8_t *buf = calloc(1, AREA_BYTES);
	uint8_t acl[128], want[128];
	struct f2fs_xattr_update up;
	size_t n;

	assert_non_null(buf);
	/* no xattrs at all, then xattrs but no ACL: nothing to do */
	assert_int_equal(f2fs_xattr_acl_chmod(buf, INLINE_BYTES, AREA_BYTES, 0640, &up), 0);
	assert_false(up.dirty || up.touched || up.need_node || up.set_mode);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "user.a", "b", 1, 0, &up), 0);
	assert_int_equal(f2fs_xattr_acl_chmod(buf, INLINE_BYTES, AREA_BYTES, 0640, &up), 0);
	assert_false(up.dirty);

	n = vfs_acl(acl, named, ARRAY_SIZE(named), 2);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "system.posix_acl_access", acl,
			     n, 0, &up), 0);
	assert_int_equal(f2fs_xattr_acl_chmod(buf, INLINE_BYTES, AREA_BYTES, 0640, &up), 0);
	assert_true(up.dirty && up.touched && !up.set_mode && !up.need_node);
	n = vfs_acl(want, after, ARRAY_SIZE(after), 2);
	expect_xattr(buf, AREA_BYTES, "system.posix_acl_access", want, n);
	/* the same mode again changes nothing */
	assert_int_equal(f2fs_xattr_acl_chmod(buf, INLINE_BYTES, AREA_BYTES, 0640, &up), 0);
	assert_false(up.dirty);
	free(buf);
}

static void test_acl_set_invalid(void **state)
{
	static const struct {
		uint32_t e[8][3];
		size_t n;
		int err;
	} cases[] = {
		/* named entries need a mask */
		{ { { T_USER_OBJ, 7, UNDEF }, { T_USER, 5, 1 }, { T_GROUP_OBJ, 5, UNDEF },
		    { T_OTHER, 0, UNDEF } }, 4, -EINVAL },
		{ { { T_USER_OBJ, 8, UNDEF }, { T_GROUP_OBJ, 5, UNDEF }, { T_OTHER, 0, UNDEF } },
		  3, -EINVAL },
		{ { { T_GROUP_OBJ, 5, UNDEF }, { T_USER_OBJ, 7, UNDEF }, { T_OTHER, 0, UNDEF } },
		  3, -EINVAL },
		{ { { T_USER_OBJ, 7, UNDEF }, { T_GROUP_OBJ, 5, UNDEF } }, 2, -EINVAL },
		{ { { T_USER_OBJ, 7, UNDEF }, { T_USER_OBJ, 7, UNDEF }, { T_GROUP_OBJ, 5, UNDEF },
		    { T_OTHER, 0, UNDEF } }, 4, -EINVAL },
		{ { { T_USER_OBJ, 7, UNDEF }, { T_GROUP_OBJ, 5, UNDEF }, { T_MASK, 5, UNDEF },
		    { T_MASK, 5, UNDEF }, { T_OTHER, 0, UNDEF } }, 5, -EINVAL },
		{ { { T_USER_OBJ, 7, UNDEF }, { T_GROUP_OBJ, 5, UNDEF }, { T_OTHER, 0, UNDEF },
		    { T_OTHER, 0, UNDEF } }, 4, -EINVAL },
		/* an id of -1 has no kuid */
		{ { { T_USER_OBJ, 7, UNDEF }, { T_USER, 5, UNDEF }, { T_GROUP_OBJ, 5, UNDEF },
		    { T_MASK, 5, UNDEF }, { T_OTHER, 0, UNDEF } }, 5, -EINVAL },
		{ { { T_USER_OBJ, 7, UNDEF }, { 0x40, 5, UNDEF }, { T_GROUP_OBJ, 5, UNDEF },
		    { T_OTHER, 0, UNDEF } }, 4, -EINVAL },
		{ { { T_USER_OBJ, 7, UNDEF }, { T_GROUP, 5, 3 }, { T_GROUP_OBJ, 5, UNDEF },
		    { T_MASK, 5, UNDEF }, { T_OTHER, 0, UNDEF } }, 5, -EINVAL },
		/* valid: named ids in any order, repeated even (the kernel does not sort) */
		{ { { T_USER_OBJ, 7, UNDEF }, { T_USER, 5, 9 }, { T_USER, 4, 3 }, { T_USER, 4, 3 },
		    { T_GROUP_OBJ, 5, UNDEF }, { T_MASK, 5, UNDEF }, { T_OTHER, 0, UNDEF } }, 7, 0 },
	};
	uint8_t *buf = calloc(1, AREA_BYTES), *copy = malloc(AREA_BYTES);
	uint8_t acl[128];
	struct f2fs_xattr_update up;
	size_t n;

	assert_non_null(buf);
	assert_non_null(copy);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_DIR, "user.keep", "k", 1, 0, &up), 0);
	memcpy(copy, buf, AREA_BYTES);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		n = vfs_acl(acl, cases[i].e, cases[i].n, 2);
		for (int d = 0; d < 2; d++) {
			const char *name = d ? "system.posix_acl_default" : "system.posix_acl_access";

			assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_DIR, name, acl, n, 0,
					     &up), cases[i].err);
			if (cases[i].err) {
				assert_false(up.set_mode || up.dirty || up.touched);
				assert_int_equal(up.mode, S_DIR);
				assert_memory_equal(buf, copy, AREA_BYTES);
			} else {
				expect_xattr(buf, AREA_BYTES, name, acl, n);
			}
		}
	}
	memcpy(buf, copy, AREA_BYTES);
	n = vfs_acl(acl, cases[1].e, 3, 2);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_DIR, "system.posix_acl_access", acl, 3,
			     0, &up), -EINVAL);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_DIR, "system.posix_acl_access", acl,
			     n - 1, 0, &up), -EINVAL);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_DIR, "system.posix_acl_access", acl,
			     n + 4, 0, &up), -EINVAL);
	n = vfs_acl(acl, cases[1].e, 3, 1);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_DIR, "system.posix_acl_access", acl, n,
			     0, &up), -EOPNOTSUPP);
	/* the value is parsed before the file type is looked at */
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "system.posix_acl_default", acl,
			     n, 0, &up), -EOPNOTSUPP);
	n = vfs_acl(acl, cases[1].e, 3, 2);
	assert_int_equal(set(buf, INLINE_BYTES, AREA_BYTES, S_REG, "system.posix_acl_default", acl,
			     n, 0, &up), -EACCES);
	assert_memory_equal(buf, copy, AREA_BYTES);
	free(buf);
	free(copy);
}

static uint8_t *put_vfs_entry(uint8_t *p, uint16_t tag, uint16_t perm, uint32_t id)
{
	put16(p, tag);
	put16(p + 2, perm);
	put32(p + 4, id);
	return p + 8;
}

/* An ACL whose compact form exceeds MAX_VALUE_LEN: -E2BIG. */
static void test_acl_set_too_big(void **state)
{
	const size_t max_value = VALID_XATTR_BLOCK_SIZE - 24 - 4;
	size_t named = (max_value - 4 - 16) / 8, n;
	uint8_t *acl = malloc(4 + 8 * (named + 5)), *buf = calloc(1, VALID_XATTR_BLOCK_SIZE);
	struct f2fs_xattr_update up;
	uint8_t *p;

	assert_non_null(acl);
	assert_non_null(buf);
	for (int extra = 0; extra < 2; extra++) {
		size_t cnt = named + extra;

		put32(acl, 2);
		p = put_vfs_entry(acl + 4, T_USER_OBJ, 7, UNDEF);
		for (size_t i = 0; i < cnt; i++)
			p = put_vfs_entry(p, T_USER, 5, (uint32_t)i);
		p = put_vfs_entry(p, T_GROUP_OBJ, 5, UNDEF);
		p = put_vfs_entry(p, T_MASK, 7, UNDEF);
		p = put_vfs_entry(p, T_OTHER, 0, UNDEF);
		n = (size_t)(p - acl);
		assert_int_equal(set(buf, 0, VALID_XATTR_BLOCK_SIZE, S_DIR, "system.posix_acl_default",
				     acl, n, 0, &up), extra ? -E2BIG : 0);
	}
	free(acl);
	free(buf);
}

/* /// f2fs_xattr_set: a model of the entry list /// */

struct model_ent {
	unsigned int index;
	char name[8];
	size_t len;
	uint8_t val[300];
};

static size_t model_used(const struct model_ent *m, size_t n)
{
	size_t used = 24;

	for (size_t i = 0; i < n; i++)
		used += XATTR_ALIGN(4 + strlen(m[i].name) + m[i].len);
	return used;
}

/*
 * Random setxattr/removexattr on the assembled area, against a list that
 * knows the kernel's rules: first match, a changed entry moves to the end,
 * removal closes the gap, the list may reach the end of the area. The
 * area must then be the list, byte for byte, followed by zeros.
 */
static void test_set_model(void **state)
{
	static const char *const prefixes[] = { "user.", "trusted.", "security." };
	static const unsigned int indexes[] = {
		F2FS_XATTR_INDEX_USER, F2FS_XATTR_INDEX_TRUSTED, F2FS_XATTR_INDEX_SECURITY,
	};
	static struct model_ent m[64];
	static uint8_t want[AREA_BYTES];
	const size_t inls[] = { INLINE_BYTES, 0 };
	size_t n = 0;

	for (size_t k = 0; k < ARRAY_SIZE(inls); k++) {
		size_t inl = inls[k], total = inl + VALID_XATTR_BLOCK_SIZE;
		uint8_t *buf = calloc(1, total);

		assert_non_null(buf);
		n = 0;
		for (int iter = 0; iter < 30000; iter++) {
			struct f2fs_xattr_update up;
			struct model_ent e = { .index = 0 };
			unsigned int p = rng() % 3;
			char full[32];
			size_t i, pos;
			int flags = (int)(rng() % 4), ret, expect;
			bool remove = rng() % 3 == 0;

			e.index = indexes[p];
			snprintf(e.name, sizeof(e.name), "%c%u", 'a' + (int)(rng() % 3), rng() % 5);
			snprintf(full, sizeof(full), "%s%s", prefixes[p], e.name);
			e.len = rng() % 8 ? rng() % 300 : 0;
			for (i = 0; i < n; i++)
				if (m[i].index == e.index && !strcmp(m[i].name, e.name))
					break;
			if (i < n && rng() % 4 == 0) {
				e.len = m[i].len;
				memcpy(e.val, m[i].val, e.len);	/* the same value */
			} else {
				memset(e.val, 'A' + rng() % 26, e.len);
			}
			if (remove)
				flags = XATTR_REPLACE;

			if (i < n && (flags & XATTR_CREATE))
				expect = -EEXIST;
			else if (i == n && (flags & XATTR_REPLACE))
				expect = -ENODATA;
			else if (!remove && i < n && m[i].len == e.len &&
				 !memcmp(m[i].val, e.val, e.len))
				expect = 1;	/* unchanged */
			else if (!remove && model_used(m, n) - (i < n ? XATTR_ALIGN(4 + strlen(
				 m[i].name) + m[i].len) : 0) + XATTR_ALIGN(4 + strlen(e.name) + e.len) >
				 total)
				expect = -E2BIG;
			else
				expect = 0;

			if (remove)
				ret = f2fs_xattr_set(buf, inl, total, S_REG, full, NULL, 0, 0, true, &up);
			else
				ret = f2fs_xattr_set(buf, inl, total, S_REG, full, e.val, e.len, flags,
						     false, &up);
			assert_int_equal(ret, expect == 1 ? 0 : expect);
			if (expect < 0)
				continue;
			assert_int_equal(up.dirty, expect == 0);
			if (expect == 0) {
				if (i < n) {
					memmove(&m[i], &m[i + 1], (n - i - 1) * sizeof(m[0]));
					n--;
				}
				if (!remove) {
					assert_true(n < ARRAY_SIZE(m));
					m[n++] = e;
				}
			}
			assert_int_equal(up.used, model_used(m, n));
			assert_int_equal(up.need_node, up.used > inl);

			memset(want, 0, total);
			put32(want, F2FS_XATTR_MAGIC);
			put32(want + 4, 1);
			for (i = 0, pos = 24; i < n; i++) {
				size_t nl = strlen(m[i].name);

				want[pos] = (uint8_t)m[i].index;
				want[pos + 1] = (uint8_t)nl;
				put16(want + pos + 2, (uint16_t)m[i].len);
				memcpy(want + pos + 4, m[i].name, nl);
				memcpy(want + pos + 4 + nl, m[i].val, m[i].len);
				pos += XATTR_ALIGN(4 + nl + m[i].len);
			}
			assert_memory_equal(buf, want, total);
		}
		free(buf);
	}
}

/*
 * Corrupt areas: every failure leaves the buffer as it was, -EIO when the
 * list does not hold together; every success leaves a list that does.
 */
static void test_set_mutations(void **state)
{
	static const char *const names[] = {
		"user.foo", "trusted.t", "security.selinux", "user.dup", "user.new",
		"system.posix_acl_default",
	};
	struct area good = area_every_kind();
	uint8_t *copy = malloc(good.len);

	assert_non_null(copy);
	for (int iter = 0; iter < 20000; iter++) {
		uint8_t *buf = malloc(good.len);
		struct f2fs_xattr_update up;
		const char *name = names[rng() % ARRAY_SIZE(names)];
		char v[64];
		int val, ret;

		memcpy(buf, good.buf, good.len);
		for (int k = 0, flips = 1 + rng() % 3; k < flips; k++)
			buf[rng() % (good.pos + 8)] ^= (uint8_t)(1u << (rng() % 8));
		memset(v, 'm', sizeof(v));
		memcpy(copy, buf, good.len);
		val = f2fs_xattr_validate(buf, good.len);
		if (rng() % 3)
			ret = set(buf, INLINE_BYTES, good.len, S_DIR, name, v, rng() % sizeof(v),
				  (int)(rng() % 3), &up);
		else
			ret = rm(buf, INLINE_BYTES, good.len, S_DIR, name, &up);
		/* names and ACL values are checked before the area is read */
		if (val)
			assert_true(ret == -EIO || ret == -EINVAL || ret == -EOPNOTSUPP);
		if (ret) {
			if (!(ret == -EIO || ret == -EEXIST || ret == -ENODATA || ret == -E2BIG ||
			      ret == -EINVAL || ret == -EOPNOTSUPP))
				print_error("%s: %d\n", name, ret);
			assert_true(ret == -EIO || ret == -EEXIST || ret == -ENODATA || ret == -E2BIG ||
				    ret == -EINVAL || ret == -EOPNOTSUPP);
			assert_memory_equal(buf, copy, good.len);
		} else {
			assert_int_equal(f2fs_xattr_validate(buf, good.len), 0);
			assert_true(zero_from(buf, up.used, good.len));
		}
		free(buf);
	}
	free(copy);
	area_free(&good);
}

int main(void)
{
	const struct CMUnitTest kernel[] = {
		cmocka_unit_test(test_kernel_file_xattrs),
		cmocka_unit_test(test_kernel_dir_acls),
	};
	const struct CMUnitTest ns[] = {
		cmocka_unit_test(test_list_every_namespace),
		cmocka_unit_test(test_list_erange),
		cmocka_unit_test(test_get_every_namespace),
		cmocka_unit_test(test_get_hidden),
		cmocka_unit_test(test_get_enodata),
		cmocka_unit_test(test_get_size_rules),
		cmocka_unit_test(test_name_rules),
	};
	const struct CMUnitTest layout[] = {
		cmocka_unit_test(test_empty_areas),
		cmocka_unit_test(test_entry_straddles_inline_and_node),
		cmocka_unit_test(test_entry_fills_area),
		cmocka_unit_test(test_empty_value_and_duplicates),
	};
	const struct CMUnitTest acl[] = {
		cmocka_unit_test(test_acl_conversion),
		cmocka_unit_test(test_acl_corrupt),
	};
	const struct CMUnitTest corrupt[] = {
		cmocka_unit_test(test_value_past_end),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_ragged_tail),
		cmocka_unit_test(test_mutations),
	};
	const struct CMUnitTest setx[] = {
		cmocka_unit_test(test_kernel_set_sequences),
		cmocka_unit_test(test_set_round_trip),
		cmocka_unit_test(test_set_flags),
		cmocka_unit_test(test_set_names),
		cmocka_unit_test(test_set_args),
		cmocka_unit_test(test_set_inline_only),
		cmocka_unit_test(test_set_with_node),
		cmocka_unit_test(test_acl_set_round_trip),
		cmocka_unit_test(test_acl_mode_equivalent),
		cmocka_unit_test(test_acl_set_invalid),
		cmocka_unit_test(test_acl_create_masq),
		cmocka_unit_test(test_acl_chmod),
		cmocka_unit_test(test_acl_set_too_big),
		cmocka_unit_test(test_set_model),
		cmocka_unit_test(test_set_mutations),
	};
	int fails = 0;

	fails += cmocka_run_group_tests_name("kernel", kernel, NULL, NULL);
	fails += cmocka_run_group_tests_name("namespaces", ns, NULL, NULL);
	fails += cmocka_run_group_tests_name("layout", layout, NULL, NULL);
	fails += cmocka_run_group_tests_name("acl", acl, NULL, NULL);
	fails += cmocka_run_group_tests_name("corrupt", corrupt, NULL, NULL);
	fails += cmocka_run_group_tests_name("set", setx, NULL, NULL);
	return fails ? 1 : 0;
}
