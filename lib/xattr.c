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
 *
 * f2fs_xattr_set rewrites the same buffer the way the kernel's
 * __f2fs_setxattr does (fs/f2fs/xattr.c), and converts VFS POSIX ACLs to
 * the compact on-disk form the way fs/f2fs/acl.c and fs/posix_acl.c do.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>

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

/* A value to the caller: its length alone for size 0, -ERANGE if it does not fit. */
static ssize_t copy_value(const struct xattr_ent *e, void *value, size_t size)
{
	if (size == 0)
		return (ssize_t)e->value_len;
	if (size < e->value_len)
		return -ERANGE;
	memcpy(value, e->value, e->value_len);
	return (ssize_t)e->value_len;
}

/* No entry at all: a zeroed area, or a header and the end word. */
bool f2fs_xattr_area_empty(const void *buf, size_t len)
{
	struct xattr_iter it;
	struct xattr_ent e;

	return !xattr_iter_start(&it, buf, len) && xattr_iter_next(&it, &e) == 0;
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
	return copy_value(&e, value, size);
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

/* /// Names /// */

int f2fs_xattr_prefix_index(const char *name, const char **suffix)
{
	unsigned int index;
	const char *s;
	size_t len;
	int ret;

	if (!name)
		return -EINVAL;
	ret = resolve_name(name, &index, &s, &len);
	if (ret)
		return ret;
	if (suffix)
		*suffix = s;
	return (int)index;
}

/* /// setxattr / removexattr /// */

/*
 * The kernel's bounds (fs/f2fs/xattr.h). The list may grow up to
 * MIN_OFFSET = XATTR_ALIGN(inline_size + VALID_XATTR_BLOCK_SIZE), the end of
 * the area with its xattr node: a full list has no zero word after it, the
 * end of the area ends it (the kernel reads into a buffer padded with one
 * zero word). One value may be at most MAX_VALUE_LEN = MIN_OFFSET - header -
 * entry header. Both are computed as if the node were there even when the
 * caller cannot have one: the kernel checks space first (-E2BIG) and only
 * fails to allocate the node afterwards (-ENOSPC).
 */
static size_t xattr_min_offset(size_t inline_size)
{
	return XATTR_ALIGN(inline_size + VALID_XATTR_BLOCK_SIZE);
}

static void put_entry(uint8_t *p, size_t entry_size, unsigned int index, const char *name,
		      size_t name_len, const void *value, size_t size)
{
	memset(p, 0, entry_size);
	p[0] = (uint8_t)index;
	p[1] = (uint8_t)name_len;
	put_le16(p + 2, (uint16_t)size);
	memcpy(p + XATTR_ENTRY_HDR, name, name_len);
	if (size)
		memcpy(p + XATTR_ENTRY_HDR + name_len, value, size);
}

/*
 * __f2fs_setxattr on the assembled area: find the first entry of (index,
 * name) and the end of the list, check the flags and the space, cut the old
 * entry out (what follows moves down, the freed tail is zeroed), append the
 * new one at the end. An unchanged value writes nothing. With remove, an
 * absent entry is an error only under XATTR_REPLACE, as in the kernel (the
 * VFS passes XATTR_REPLACE for removexattr; the ACL code passes 0 and the
 * area is then written back as it is, header included).
 */
static int xattr_store(uint8_t *buf, size_t inline_size, size_t total_size, unsigned int index,
		       const char *name, size_t name_len, const void *value, size_t size,
		       bool remove, int flags, struct f2fs_xattr_update *up)
{
	const size_t min_offset = xattr_min_offset(inline_size);
	size_t here = 0, here_size = 0, last, newsize = 0, hsize;
	struct xattr_iter it;
	struct xattr_ent e;
	bool found = false, same = false;
	int ret;

	if (name_len > F2FS_NAME_LEN)
		return -ERANGE;
	if (!remove && size > min_offset - XATTR_HDR_SIZE - XATTR_ENTRY_HDR)
		return -E2BIG;

	ret = xattr_iter_start(&it, buf, total_size);
	if (ret)
		return ret;
	for (;;) {
		size_t pos = it.pos;

		ret = xattr_iter_next(&it, &e);
		if (ret < 0)
			return ret;
		if (ret == 0)
			break;
		if (!found && e.index == index && e.name_len == name_len &&
		    !memcmp(e.name, name, name_len)) {
			found = true;
			here = pos;
			here_size = it.pos - pos;
			same = !remove && e.value_len == size && (!size || !memcmp(e.value, value, size));
		}
	}
	/* A never-used (all-zero) area walks as empty from offset 0. */
	last = it.len ? it.pos : XATTR_HDR_SIZE;

	if (found) {
		if (flags & XATTR_CREATE)
			return -EEXIST;
		if (same) {
			up->need_node = last > inline_size;
			up->used = last;
			up->touched = true;
			return 0;
		}
	} else if (flags & XATTR_REPLACE) {
		return -ENODATA;
	}

	if (!remove) {
		newsize = XATTR_ALIGN(XATTR_ENTRY_HDR + name_len + size);
		if (min_offset - last + (found ? here_size : 0) < newsize)
			return -E2BIG;
	}
	hsize = last - (found ? here_size : 0) + newsize;
	/* Past the inline part with no xattr node allowed: the nid allocation fails. */
	if (hsize > total_size)
		return -ENOSPC;

	if (!it.len) {
		/* The kernel's read_all_xattrs: a header on a never-used area. */
		memset(buf, 0, total_size);
		put_le32(buf, F2FS_XATTR_MAGIC);
		put_le32(buf + 4, 1);
	}
	if (found) {
		memmove(buf + here, buf + here + here_size, last - here - here_size);
		last -= here_size;
	}
	if (!remove) {
		put_entry(buf + last, newsize, index, name, name_len, value, size);
		last += newsize;
	}
	/*
	 * The kernel zeroes the bytes the removed entry leaves behind; past the
	 * list an area it wrote is zero anyway. Zeroing the whole tail is the
	 * same for such areas and keeps the list ended on any other.
	 */
	memset(buf + last, 0, total_size - last);

	up->dirty = true;
	up->touched = true;
	up->need_node = hsize > inline_size;
	up->used = hsize;
	return 0;
}

/*
 * A VFS POSIX ACL as posix_acl_from_xattr parses it: the header version
 * (-EOPNOTSUPP if not 2), whole entries, known tags, and a valid id for
 * named entries ((uid_t)-1 has no kuid). Returns the entry count; 0 is an
 * ACL without entries, which the kernel treats as no ACL at all.
 */
static long acl_vfs_parse(const uint8_t *v, size_t size)
{
	size_t i, n;

	if (size < POSIX_ACL_XATTR_HDR)
		return -EINVAL;
	if (get_le32(v) != POSIX_ACL_XATTR_VERSION)
		return -EOPNOTSUPP;
	if ((size - POSIX_ACL_XATTR_HDR) % POSIX_ACL_XATTR_ENTRY)
		return -EINVAL;
	n = (size - POSIX_ACL_XATTR_HDR) / POSIX_ACL_XATTR_ENTRY;
	for (i = 0; i < n; i++) {
		const uint8_t *p = v + POSIX_ACL_XATTR_HDR + i * POSIX_ACL_XATTR_ENTRY;
		unsigned int tag = get_le16(p);

		if (acl_tag_is_short(tag))
			continue;
		if ((tag != ACL_USER && tag != ACL_GROUP) || get_le32(p + 4) == ACL_UNDEFINED_ID)
			return -EINVAL;
	}
	return (long)n;
}

static const uint8_t *acl_vfs_entry(const uint8_t *v, size_t i, unsigned int *tag,
				    unsigned int *perm)
{
	const uint8_t *p = v + POSIX_ACL_XATTR_HDR + i * POSIX_ACL_XATTR_ENTRY;

	*tag = get_le16(p);
	*perm = get_le16(p + 2);
	return p;
}

/*
 * posix_acl_valid: permissions rwx only; USER_OBJ, USER..., GROUP_OBJ,
 * GROUP..., MASK, OTHER in that order, each object entry once; a MASK is
 * required when there are named entries. Named ids need not be sorted.
 */
static int acl_vfs_valid(const uint8_t *v, size_t n)
{
	unsigned int state = ACL_USER_OBJ;
	bool needs_mask = false;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int tag, perm;

		acl_vfs_entry(v, i, &tag, &perm);
		if (perm & ~7u)
			return -EINVAL;
		switch (tag) {
		case ACL_USER_OBJ:
			if (state != ACL_USER_OBJ)
				return -EINVAL;
			state = ACL_USER;
			break;
		case ACL_USER:
			if (state != ACL_USER)
				return -EINVAL;
			needs_mask = true;
			break;
		case ACL_GROUP_OBJ:
			if (state != ACL_USER)
				return -EINVAL;
			state = ACL_GROUP;
			break;
		case ACL_GROUP:
			if (state != ACL_GROUP)
				return -EINVAL;
			needs_mask = true;
			break;
		case ACL_MASK:
			if (state != ACL_GROUP)
				return -EINVAL;
			state = ACL_OTHER;
			break;
		case ACL_OTHER:
			if (state != ACL_OTHER && (state != ACL_GROUP || needs_mask))
				return -EINVAL;
			state = 0;
			break;
		default:
			return -EINVAL;
		}
	}
	return state == 0 ? 0 : -EINVAL;
}

/*
 * posix_acl_equiv_mode: the permission bits the ACL implies (the MASK
 * stands in for the group bits) go into *mode; 0 if the ACL says no more
 * than those bits, 1 if it does.
 */
static int acl_equiv_mode(const uint8_t *v, size_t n, uint16_t *mode_p)
{
	unsigned int mode = 0;
	int not_equiv = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int tag, perm;

		acl_vfs_entry(v, i, &tag, &perm);
		perm &= 7;
		switch (tag) {
		case ACL_USER_OBJ:
			mode |= perm << 6;
			break;
		case ACL_GROUP_OBJ:
			mode |= perm << 3;
			break;
		case ACL_OTHER:
			mode |= perm;
			break;
		case ACL_MASK:
			mode = (mode & ~0070u) | (perm << 3);
			not_equiv = 1;
			break;
		default:	/* ACL_USER, ACL_GROUP */
			not_equiv = 1;
			break;
		}
	}
	*mode_p = (uint16_t)((*mode_p & ~0777u) | mode);
	return not_equiv;
}

/* f2fs_acl_to_disk: version 1, then 4-byte entries, 8-byte ones for named entries. */
static size_t acl_to_disk(const uint8_t *v, size_t n, uint8_t *out)
{
	size_t i, pos = sizeof(struct f2fs_acl_header);

	put_le32(out, F2FS_ACL_VERSION);
	for (i = 0; i < n; i++) {
		unsigned int tag, perm;
		const uint8_t *p = acl_vfs_entry(v, i, &tag, &perm);

		put_le16(out + pos, (uint16_t)tag);
		put_le16(out + pos + 2, (uint16_t)perm);
		if (tag == ACL_USER || tag == ACL_GROUP) {
			put_le32(out + pos + 4, get_le32(p + 4));
			pos += sizeof(struct f2fs_acl_entry);
		} else {
			pos += sizeof(struct f2fs_acl_entry_short);
		}
	}
	return pos;
}

/*
 * setxattr/removexattr of system.posix_acl_{access,default}: the VFS parses
 * the value into a struct posix_acl (an empty value or an ACL without
 * entries means no ACL), set_posix_acl and f2fs's __f2fs_set_acl decide,
 * and f2fs_setxattr stores it with flags 0, so XATTR_CREATE/XATTR_REPLACE
 * do not apply and removing an absent ACL succeeds.
 */
static int acl_set(uint8_t *buf, size_t inline_size, size_t total_size, unsigned int index,
		   uint16_t i_mode, const void *value, size_t size, bool remove,
		   struct f2fs_xattr_update *up)
{
	bool access = index == F2FS_XATTR_INDEX_POSIX_ACL_ACCESS;
	uint8_t *disk = NULL;
	size_t disk_len = 0;
	long n = 0;
	int ret;

	if (!remove && size) {
		n = acl_vfs_parse(value, size);
		if (n < 0)
			return (int)n;
	}
	if (S_ISLNK(i_mode))
		return -EOPNOTSUPP;	/* f2fs symlinks have no ->set_acl */
	if (!access && !S_ISDIR(i_mode))
		return n ? -EACCES : 0;
	if (n) {
		ret = acl_vfs_valid(value, (size_t)n);
		if (ret)
			return ret;
	}
	if (n && access) {
		/* posix_acl_update_mode: the mode follows the ACL, set or not. */
		up->set_mode = true;
		if (!acl_equiv_mode(value, (size_t)n, &up->mode))
			n = 0;
	}
	if (n) {
		disk = malloc(sizeof(struct f2fs_acl_header) +
			      (size_t)n * sizeof(struct f2fs_acl_entry));
		if (!disk)
			return -ENOMEM;
		disk_len = acl_to_disk(value, (size_t)n, disk);
	}
	ret = xattr_store(buf, inline_size, total_size, index, "", 0, disk, disk_len, n == 0, 0,
			  up);
	free(disk);
	if (ret) {
		up->set_mode = false;
		up->mode = i_mode;
	}
	return ret;
}

/*
 * posix_acl_create_masq on a VFS-format ACL: each entry keeps only what mode
 * allows its class (the mask, if any, standing for the group class), and
 * mode only what the entries allow. Returns 1 when the ACL says more than the
 * mode (named entries or a mask), 0 when the mode says it all, -EIO when the
 * object entries it needs are missing.
 */
int f2fs_acl_create_masq(uint8_t *acl, size_t size, uint32_t *mode_p)
{
	uint8_t *group_obj = NULL, *mask = NULL;
	uint32_t mode = *mode_p;
	long n = acl_vfs_parse(acl, size);
	int not_equiv = 0;

	if (n < 0)
		return -EIO;
	for (long i = 0; i < n; i++) {
		uint8_t *p = acl + POSIX_ACL_XATTR_HDR + i * POSIX_ACL_XATTR_ENTRY;
		unsigned int perm = get_le16(p + 2);

		switch (get_le16(p)) {
		case ACL_USER_OBJ:
			perm &= (mode >> 6) & 7;
			mode &= ~0700u | (perm << 6);
			put_le16(p + 2, (uint16_t)perm);
			break;
		case ACL_OTHER:
			perm &= mode & 7;
			mode &= ~0007u | perm;
			put_le16(p + 2, (uint16_t)perm);
			break;
		case ACL_GROUP_OBJ:
			group_obj = p;
			break;
		case ACL_MASK:
			mask = p;
			not_equiv = 1;
			break;
		default:	/* ACL_USER, ACL_GROUP */
			not_equiv = 1;
			break;
		}
	}
	if (!mask)
		mask = group_obj;
	if (!mask)
		return -EIO;
	put_le16(mask + 2, (uint16_t)(get_le16(mask + 2) & ((mode >> 3) & 7)));
	mode &= ~0070u | ((unsigned int)get_le16(mask + 2) << 3);
	*mode_p = (*mode_p & ~0777u) | (mode & 0777);
	return not_equiv;
}

/*
 * posix_acl_chmod on the assembled area: the stored access ACL's owner,
 * other and mask (the owning group without a mask) entries take the bits of
 * mode, in place, since no entry changes size. Named entries keep theirs, so
 * the ACL stays as far from the mode as it was: it is never dropped here.
 */
int f2fs_xattr_acl_chmod(uint8_t *buf, size_t inline_size, size_t total_size, uint32_t mode,
			 struct f2fs_xattr_update *up)
{
	struct xattr_iter it;
	struct xattr_ent e;
	uint8_t *val = NULL, *group_obj = NULL, *mask = NULL;
	size_t len = 0, pos;
	int ret;

	*up = (struct f2fs_xattr_update){ .mode = (uint16_t)mode };
	ret = xattr_iter_start(&it, buf, total_size);
	if (ret)
		return ret;
	while ((ret = xattr_iter_next(&it, &e)) > 0) {
		if (!val && e.index == F2FS_XATTR_INDEX_POSIX_ACL_ACCESS && e.name_len == 0) {
			val = (uint8_t *)e.value;
			len = e.value_len;
		}
	}
	if (ret < 0)
		return ret;
	up->used = it.len ? it.pos : XATTR_HDR_SIZE;
	up->need_node = up->used > inline_size;
	if (!val)
		return 0;
	if (acl_to_vfs(val, len, NULL) < 0)
		return -EIO;
	for (pos = sizeof(struct f2fs_acl_header); pos < len;) {
		unsigned int tag = get_le16(val + pos), perm = get_le16(val + pos + 2);
		uint8_t *p = val + pos;

		pos += acl_tag_is_short(tag) ? sizeof(struct f2fs_acl_entry_short) :
		       sizeof(struct f2fs_acl_entry);
		if (tag == ACL_USER_OBJ)
			perm = (mode >> 6) & 7;
		else if (tag == ACL_OTHER)
			perm = mode & 7;
		else if (tag == ACL_GROUP_OBJ)
			group_obj = p;
		else if (tag == ACL_MASK)
			mask = p;
		if (perm != get_le16(p + 2)) {
			put_le16(p + 2, (uint16_t)perm);
			up->dirty = true;
		}
	}
	if (!mask)
		mask = group_obj;
	if (!mask)
		return -EIO;
	if (get_le16(mask + 2) != ((mode >> 3) & 7)) {
		put_le16(mask + 2, (uint16_t)((mode >> 3) & 7));
		up->dirty = true;
	}
	up->touched = up->dirty;
	return 0;
}

/*
 * The internal indexes no xattr name reaches (verity, encryption): the
 * kernel's f2fs_getxattr/f2fs_setxattr called with an index, as
 * fs/f2fs/verity.c does. Same rules and results as the named forms.
 */
ssize_t f2fs_xattr_get_indexed(const void *buf, size_t len, unsigned int index, const char *name,
			       void *value, size_t size)
{
	struct xattr_ent e;
	int ret = xattr_find(buf, len, index, name, strlen(name), &e);

	if (ret <= 0)
		return ret ? ret : -ENODATA;
	return copy_value(&e, value, size);
}

int f2fs_xattr_set_indexed(uint8_t *buf, size_t inline_size, size_t total_size,
			   unsigned int index, const char *name, const void *value, size_t size,
			   int flags, struct f2fs_xattr_update *up)
{
	*up = (struct f2fs_xattr_update){ 0 };
	return xattr_store(buf, inline_size, total_size, index, name, strlen(name), value, size,
			   false, flags, up);
}

int f2fs_xattr_set(uint8_t *buf, size_t inline_size, size_t total_size, uint16_t i_mode,
		   const char *name, const void *value, size_t size, int flags, bool remove,
		   struct f2fs_xattr_update *up)
{
	unsigned int index;
	const char *suffix;
	size_t suffix_len;
	int ret;

	if (!up)
		return -EINVAL;
	*up = (struct f2fs_xattr_update){ .mode = i_mode };
	if (!name || (total_size && !buf) || (!remove && size && !value))
		return -EINVAL;
	if (inline_size % sizeof(__le32) ||
	    (total_size != inline_size && total_size != inline_size + VALID_XATTR_BLOCK_SIZE))
		return -EINVAL;
	if (flags & ~(XATTR_CREATE | XATTR_REPLACE))
		return -EINVAL;
	ret = resolve_name(name, &index, &suffix, &suffix_len);
	if (ret)
		return ret;
	if (is_acl_index(index))
		return acl_set(buf, inline_size, total_size, index, i_mode, value, size, remove, up);
	/* __vfs_removexattr passes XATTR_REPLACE: removing an absent name is -ENODATA. */
	return xattr_store(buf, inline_size, total_size, index, suffix, suffix_len, value, size,
			   remove, remove ? XATTR_REPLACE : flags, up);
}
