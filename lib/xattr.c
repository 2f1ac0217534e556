// SPDX-License-Identifier: GPL-2.0
/*
 * Extended attributes: lookup and listing over an inode's assembled xattr
 * area (inline xattr space followed by the xattr node block), and the
 * conversion of f2fs's compact POSIX ACLs to the VFS xattr format. These
 * functions are pure: they take a buffer, trust nothing in it, and turn
 * any entry that does not fit into -EIO.
 *
 * Which names exist follows the kernel's f2fs_xattr_handler_map: user,
 * trusted, security and the two POSIX ACLs. Entries of other indexes
 * (lustre, the encryption context, verity, advise) are internal to the
 * filesystem: never listed and never returned, as on Linux.
 */
#include "f2fs.h"

/* The VFS representation of a POSIX ACL (linux/posix_acl_xattr.h). */
#define POSIX_ACL_XATTR_VERSION	0x0002
#define ACL_UNDEFINED_ID	0xFFFFFFFFu
#define POSIX_ACL_XATTR_HDR	4
#define POSIX_ACL_XATTR_ENTRY	8

/* ACL tags (linux/posix_acl.h). */
#define ACL_USER_OBJ		0x01
#define ACL_USER		0x02
#define ACL_GROUP_OBJ		0x04
#define ACL_GROUP		0x08
#define ACL_MASK		0x10
#define ACL_OTHER		0x20

#define XATTR_HDR_SIZE		sizeof(struct f2fs_xattr_header)
#define XATTR_ENTRY_HDR		sizeof(struct f2fs_xattr_entry)

struct xattr_ns {
	uint8_t index;
	const char *prefix;
	/* The prefix is the whole name (the ACLs); the entry name is empty. */
	bool whole_name;
};

static const struct xattr_ns xattr_namespaces[] = {
	{ F2FS_XATTR_INDEX_USER, "user.", false },
	{ F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, "system.posix_acl_access", true },
	{ F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT, "system.posix_acl_default", true },
	{ F2FS_XATTR_INDEX_TRUSTED, "trusted.", false },
	{ F2FS_XATTR_INDEX_SECURITY, "security.", false },
};

static const struct xattr_ns *ns_by_index(unsigned int index)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(xattr_namespaces); i++)
		if (xattr_namespaces[i].index == index)
			return &xattr_namespaces[i];
	return NULL;
}

static bool is_acl_index(unsigned int index)
{
	return index == F2FS_XATTR_INDEX_POSIX_ACL_ACCESS ||
	       index == F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT;
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* /// Walking the entry list /// */

struct xattr_iter {
	const uint8_t *buf;
	size_t len;
	size_t pos;
};

/* One decoded entry; name and value point into the buffer. */
struct xattr_ent {
	unsigned int index;
	size_t name_len;
	const char *name;
	size_t value_len;
	const uint8_t *value;
};

/*
 * Start a walk. An inode that never had an xattr has a zeroed area (the
 * kernel writes the magic with the first one): that walks as an empty list.
 * A missing magic in front of anything but an empty list is corruption.
 */
static int xattr_iter_start(struct xattr_iter *it, const void *buf, size_t len)
{
	const uint8_t *b = buf;

	*it = (struct xattr_iter){ .buf = b, .len = len, .pos = XATTR_HDR_SIZE };
	if (len >= XATTR_HDR_SIZE && get_le32(b) == F2FS_XATTR_MAGIC)
		return 0;
	if (len && (!b || !all_zero(b, MIN(len, XATTR_HDR_SIZE + sizeof(__le32)))))
		return -EIO;
	it->len = it->pos = 0;
	return 0;
}

/*
 * Step to the next entry: 1 with *e filled, 0 at the end of the list (a
 * zero word or the end of the area), -EIO for an entry that does not fit.
 */
static int xattr_iter_next(struct xattr_iter *it, struct xattr_ent *e)
{
	const uint8_t *p;
	size_t left, size;

	if (it->pos >= it->len)
		return 0;
	p = it->buf + it->pos;
	left = it->len - it->pos;
	if (left < sizeof(__le32))
		return all_zero(p, left) ? 0 : -EIO;
	if (get_le32(p) == 0)
		return 0;

	e->index = p[0];
	e->name_len = p[1];
	e->value_len = get_le16(p + 2);
	size = XATTR_ALIGN(XATTR_ENTRY_HDR + e->name_len + e->value_len);
	if (size > left)
		return -EIO;
	e->name = (const char *)p + XATTR_ENTRY_HDR;
	e->value = p + XATTR_ENTRY_HDR + e->name_len;
	it->pos += size;
	return 1;
}

/* The first entry of (index, name) wins, as in the kernel's __find_xattr. */
static int xattr_find(const void *buf, size_t len, unsigned int index, const char *name,
		      size_t name_len, struct xattr_ent *e)
{
	struct xattr_iter it;
	int ret = xattr_iter_start(&it, buf, len);

	if (ret)
		return ret;
	while ((ret = xattr_iter_next(&it, e)) > 0)
		if (e->index == index && e->name_len == name_len &&
		    !memcmp(e->name, name, name_len))
			return 1;
	return ret;
}

int f2fs_xattr_validate(const void *buf, size_t len)
{
	struct xattr_iter it;
	struct xattr_ent e;
	int ret = xattr_iter_start(&it, buf, len);

	if (ret)
		return ret;
	while ((ret = xattr_iter_next(&it, &e)) > 0)
		;
	return ret;
}

/* /// POSIX ACLs /// */

static bool acl_tag_is_short(unsigned int tag)
{
	return tag == ACL_USER_OBJ || tag == ACL_GROUP_OBJ || tag == ACL_MASK ||
	       tag == ACL_OTHER;
}

/*
 * The number of entries the kernel derives from the size alone: up to four
 * short entries, then long ones. A value whose entries do not tile the
 * same way is rejected there, so it is rejected here too.
 */
static long acl_expected_count(size_t size)
{
	const size_t s4 = 4 * sizeof(struct f2fs_acl_entry_short);
	size_t body = size - sizeof(struct f2fs_acl_header);

	if (body < s4)
		return body % sizeof(struct f2fs_acl_entry_short) ?
		       -1 : (long)(body / sizeof(struct f2fs_acl_entry_short));
	if ((body - s4) % sizeof(struct f2fs_acl_entry))
		return -1;
	return (long)((body - s4) / sizeof(struct f2fs_acl_entry) + 4);
}

/*
 * Convert an on-disk ACL to the VFS format. With out == NULL only count
 * the entries. Returns the entry count or -EIO.
 */
static long acl_to_vfs(const uint8_t *val, size_t size, uint8_t *out)
{
	size_t pos = sizeof(struct f2fs_acl_header);
	long expected, n = 0;

	if (size < sizeof(struct f2fs_acl_header) || get_le32(val) != F2FS_ACL_VERSION)
		return -EIO;
	expected = acl_expected_count(size);
	if (expected < 0)
		return -EIO;

	if (out)
		put_le32(out, POSIX_ACL_XATTR_VERSION);
	while (pos < size) {
		unsigned int tag, perm;
		uint32_t id = ACL_UNDEFINED_ID;

		if (size - pos < sizeof(struct f2fs_acl_entry_short))
			return -EIO;
		tag = get_le16(val + pos);
		perm = get_le16(val + pos + 2);
		if (acl_tag_is_short(tag)) {
			pos += sizeof(struct f2fs_acl_entry_short);
		} else if (tag == ACL_USER || tag == ACL_GROUP) {
			if (size - pos < sizeof(struct f2fs_acl_entry))
				return -EIO;
			id = get_le32(val + pos + 4);
			pos += sizeof(struct f2fs_acl_entry);
		} else {
			return -EIO;
		}
		if (out) {
			uint8_t *o = out + POSIX_ACL_XATTR_HDR + n * POSIX_ACL_XATTR_ENTRY;

			put_le16(o, (uint16_t)tag);
			put_le16(o + 2, (uint16_t)perm);
			put_le32(o + 4, id);
		}
		n++;
	}
	return n == expected ? n : -EIO;
}

/* An ACL with no entries reads as no ACL at all, as on Linux. */
static ssize_t acl_get(const struct xattr_ent *e, void *value, size_t size)
{
	long n = acl_to_vfs(e->value, e->value_len, NULL);
	size_t need;

	if (n < 0)
		return n;
	if (n == 0)
		return -ENODATA;
	need = POSIX_ACL_XATTR_HDR + (size_t)n * POSIX_ACL_XATTR_ENTRY;
	if (size == 0)
		return (ssize_t)need;
	if (size < need)
		return -ERANGE;
	acl_to_vfs(e->value, e->value_len, value);
	return (ssize_t)need;
}

/* /// getxattr / listxattr /// */

/*
 * Split a full name into its f2fs index and the stored suffix, with the
 * errors the Linux VFS gives: -EOPNOTSUPP for a namespace f2fs does not
 * serve, -EINVAL for a bare prefix, -ERANGE for an overlong suffix.
 */
static int resolve_name(const char *name, unsigned int *index, const char **suffix,
			size_t *suffix_len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(xattr_namespaces); i++) {
		const struct xattr_ns *ns = &xattr_namespaces[i];
		size_t plen = strlen(ns->prefix);

		if (ns->whole_name ? strcmp(name, ns->prefix) : strncmp(name, ns->prefix, plen))
			continue;
		*index = ns->index;
		*suffix = name + plen;
		*suffix_len = strlen(*suffix);
		if (!ns->whole_name && *suffix_len == 0)
			return -EINVAL;
		return *suffix_len > F2FS_NAME_LEN ? -ERANGE : 0;
	}
	return -EOPNOTSUPP;
}

ssize_t f2fs_xattr_get(const void *buf, size_t len, const char *name, void *value, size_t size)
{
	struct xattr_ent e;
	unsigned int index;
	const char *suffix;
	size_t suffix_len;
	int ret;

	if (!name)
		return -EINVAL;
	ret = resolve_name(name, &index, &suffix, &suffix_len);
	if (ret)
		return ret;

	ret = xattr_find(buf, len, index, suffix, suffix_len, &e);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return -ENODATA;

	if (is_acl_index(index))
		return acl_get(&e, value, size);
	if (size == 0)
		return (ssize_t)e.value_len;
	if (size < e.value_len)
		return -ERANGE;
	memcpy(value, e.value, e.value_len);
	return (ssize_t)e.value_len;
}

ssize_t f2fs_xattr_list(const void *buf, size_t len, char *list, size_t size)
{
	struct xattr_iter it;
	struct xattr_ent e;
	size_t used = 0;
	int ret = xattr_iter_start(&it, buf, len);

	if (ret)
		return ret;
	while ((ret = xattr_iter_next(&it, &e)) > 0) {
		const struct xattr_ns *ns = ns_by_index(e.index);
		size_t plen, need;

		if (!ns)
			continue;
		plen = strlen(ns->prefix);
		need = plen + e.name_len + 1;
		if (size) {
			if (size - used < need)
				return -ERANGE;
			memcpy(list + used, ns->prefix, plen);
			memcpy(list + used + plen, e.name, e.name_len);
			list[used + need - 1] = '\0';
		}
		used += need;
	}
	return ret < 0 ? ret : (ssize_t)used;
}
