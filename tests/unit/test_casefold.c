// SPDX-License-Identifier: GPL-2.0
/*
 * Casefolded directories (mkfs.f2fs -O casefold -C utf8, chattr +F), through
 * the library API on fresh images: lookups by any case and by canonically
 * equivalent spellings, EEXIST across cases, rename, link, unlink and rmdir
 * by another case, flag inheritance, the chattr +F rules, invalid UTF-8 in
 * normal and strict mode, a directory large enough for several hash levels,
 * and roll-forward recovery of a new name. Each image ends with fsck.f2fs
 * -f, which recomputes every dentry hash of a casefolded directory with
 * f2fs-tools' own Unicode tables and checks that each entry sits in the
 * bucket its hash selects: a clean fsck proves the folding and the hash.
 *
 * What counts as "the same name" is Linux's rule (fs/unicode "nfdicf", the
 * Unicode 12.1 tables of the kernel and of f2fs-tools 1.15): canonical
 * decomposition, full case folding (ß and ẞ fold to "ss"), Default_Ignorable
 * code points dropped.
 *
 * Env: UF2FS_TMPDIR/TMPDIR for the images, KEEP_TMP=1 keeps them.
 */
#include "test_rw_common.h"

#include "uf2fs/format.h"

#define NAME(s) (s), strlen(s)

struct ctx {
	char img[PATH_MAX];
	struct uf2fs *fs;
	struct model m;
};

static struct ctx C;

#define FS (C.fs)
#define M (&C.m)

/* rw_mkfs hands its feature string to the shell after -O: the encoding rides along. */
#define CF_UTF8		"casefold -C utf8"
#define CF_STRICT	"casefold -C utf8:strict"

static void begin_img(const char *name, const char *mkfs_args)
{
	memset(&C, 0, sizeof(C));
	snprintf(rw_context, sizeof(rw_context), "test %s", name);
	rw_img_path(C.img, sizeof(C.img), name);
	rw_mkfs(C.img, 256, mkfs_args);
	C.fs = rw_mount(C.img, false);
	model_init(&C.m);
}

/* Verify; then unmount, fsck, remount read-write, verify; again read-only. */
static void end(void (*extra)(const char *when))
{
	static const char *const when[] = { "rw, before unmount", "rw remount", "ro remount" };

	for (int i = 0; i < 3; i++) {
		if (i) {
			rw_unmount(FS);
			RW_FSCK(C.img);
			C.fs = rw_mount(C.img, i == 2);
		}
		RW_VERIFY(FS, M, when[i]);
		if (extra)
			extra(when[i]);
	}
	rw_unmount(FS);
	C.fs = NULL;
	model_free(&C.m);
	rw_context[0] = 0;
}

static uint32_t flags_of(uint32_t ino)
{
	uint32_t fl = 0;

	RW_OK(uf2fs_get_flags(FS, ino, &fl));
	return fl;
}

/* A directory made casefolded with chattr +F while empty, in the model. */
static uint32_t mk_cf_dir(const char *path)
{
	uint32_t ino = rw_create(FS, M, path, S_IFDIR | 0755, 0, NULL);

	RW_OK(uf2fs_set_flags(FS, ino, flags_of(ino) | FS_CASEFOLD_FL));
	if (!(flags_of(ino) & FS_CASEFOLD_FL))
		RW_FAIL("chattr +F %s did not stick", path);
	return ino;
}

static uint32_t lookup_ino(uint32_t dir, const char *name)
{
	uint32_t ino = 0;
	int ret = uf2fs_lookup(FS, dir, NAME(name), &ino);

	if (ret)
		RW_FAIL("lookup '%s' = %d (%s)", name, ret, strerror(-ret));
	return ino;
}

/* Each name in alts finds the inode that want names. */
static void same_file(uint32_t dir, const char *want, const char *const *alts)
{
	uint32_t ino = lookup_ino(dir, want);

	for (; *alts; alts++)
		if (lookup_ino(dir, *alts) != ino)
			RW_FAIL("'%s' and '%s' are different entries", *alts, want);
}

static void expect_enoent(uint32_t dir, const char *name)
{
	uint32_t ino;

	RW_EXPECT(uf2fs_lookup(FS, dir, NAME(name), &ino), -ENOENT);
}

/* Names whose folds the kernel and f2fs-tools define; stored as given. */
static const char *const names[] = {
	"Straße",		/* ß folds to ss (full folding) */
	"\xc3\x89" "COLE",	/* ÉCOLE, É precomposed (U+00C9) */
	"R\xc3\xa9sum\xc3\xa9.TXT",
	"\xce\xa3\xce\x8a\xce\xa3\xce\xa5\xce\xa6\xce\x9f\xce\xa3",	/* ΣΊΣΥΦΟΣ */
	"\xef\xac\x81le",	/* ﬁle: the ligature folds to "fi" */
	"\xe2\x84\xaa" "elvin",	/* Kelvin sign K (U+212A) folds to k */
	"soft\xc2\xad" "hyphen",	/* U+00AD is Default_Ignorable: dropped */
	"\xed\x95\x9c\xea\xb8\x80",	/* 한글: Hangul decomposes */
	"\xc4\xb0stanbul",	/* İ (U+0130) folds to i + U+0307 */
	"\xe1\x8e\xa0\xe1\x8e\xa1",	/* Cherokee ᎠᎡ: folds to... upper case */
	"mixed Case 123",
	NULL,
};

/* For each of names, other spellings that must find the same entry. */
static const char *const *const spellings[] = {
	(const char *const[]){ "STRASSE", "strasse", "stra\xc3\x9f" "e",
			       "STRA\xe1\xba\x9e" "E" /* ẞ U+1E9E */, NULL },
	(const char *const[]){ "\xc3\xa9" "cole", "e\xcc\x81" "cole" /* e + U+0301 */,
			       "E\xcc\x81" "COLE", NULL },
	(const char *const[]){ "r\xc3\xa9sum\xc3\xa9.txt", "RE\xcc\x81SUME\xcc\x81.txt", NULL },
	(const char *const[]){ "\xcf\x83\xce\xaf\xcf\x83\xcf\x85\xcf\x86\xce\xbf\xcf\x82",
			       /* σίσυφος, final sigma */ NULL },
	(const char *const[]){ "FILE", "file", "\xef\xac\x81LE" /* ﬁLE */, NULL },
	(const char *const[]){ "kelvin", "KELVIN", NULL },
	(const char *const[]){ "softhyphen", "SOFT\xe2\x80\x8b" "HYPHEN" /* U+200B */, NULL },
	(const char *const[]){ "\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab\xe1\x84\x80\xe1\x85\xb3"
			       "\xe1\x86\xaf" /* the same, as conjoining jamo */, NULL },
	(const char *const[]){ "i\xcc\x87stanbul", "I\xcc\x87STANBUL", NULL },
	(const char *const[]){ "\xea\xad\xb0\xea\xad\xb1" /* ꭰꭱ U+AB70 */, NULL },
	(const char *const[]){ "MIXED case 123", "mixed case 123", NULL },
};

static char *path2(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

/* /// Lookups, EEXIST, link, rename, unlink /// */

static void lookups_by_any_case(const char *when)
{
	uint32_t cf = rw_ino(FS, "cf"), ino;

	for (int i = 0; names[i]; i++)
		same_file(cf, names[i], spellings[i]);
	/* the root is not casefolded: case matters there */
	expect_enoent(uf2fs_root_ino(FS), "CF");
	expect_enoent(cf, "stra\xc3\x9f");	/* a prefix is not a match */
	expect_enoent(cf, "STRASSEN");
	if (strcmp(when, "ro remount"))
		RW_EXPECT(uf2fs_mknod(FS, cf, NAME("KELVIN"), S_IFREG | 0644, 0, 0, 0, &ino),
			  -EEXIST);
	RW_OK(uf2fs_resolve(FS, "cf/sub/DEEPER/leaf", &ino));
	if (ino != rw_ino(FS, "cf/Sub/Deeper/LEAF"))
		RW_FAIL("cf/sub/DEEPER/leaf is not cf/Sub/Deeper/LEAF");
}

static void t_any_case(void **state)
{
	uint32_t cf, ino, sub, root;

	begin_img("any_case", CF_UTF8);
	root = uf2fs_root_ino(FS);
	cf = mk_cf_dir("cf");
	for (int i = 0; names[i]; i++) {
		char *p = path2("cf", names[i]);

		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
		rw_write_pat(FS, M, p, 0, 100 + i, i);
		free(p);
	}
	for (int i = 0; names[i]; i++)
		same_file(cf, names[i], spellings[i]);

	/* EEXIST whatever the spelling, for every kind of creation */
	RW_EXPECT(uf2fs_mknod(FS, cf, NAME("strasse"), S_IFREG | 0644, 0, 0, 0, &ino), -EEXIST);
	RW_EXPECT(uf2fs_mkdir(FS, cf, NAME("e\xcc\x81" "cole"), 0755, 0, 0, &ino), -EEXIST);
	RW_EXPECT(uf2fs_symlink(FS, cf, NAME("KELVIN"), "t", 0, 0, &ino), -EEXIST);
	RW_EXPECT(uf2fs_link(FS, rw_ino(FS, "cf/mixed Case 123"), cf, NAME("FILE")), -EEXIST);
	RW_EXPECT(uf2fs_mknod(FS, cf, NAME("SOFTHYPHEN"), S_IFIFO | 0644, 0, 0, 0, &ino),
		  -EEXIST);

	/* the root is not casefolded: both cases live there */
	rw_create(FS, M, "abc", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "ABC", S_IFREG | 0644, 0, NULL);
	if (rw_ino(FS, "abc") == rw_ino(FS, "ABC"))
		RW_FAIL("abc and ABC are one entry in a directory without +F");
	expect_enoent(root, "Abc");

	/* a new directory inherits +F; a new file does not carry it */
	sub = rw_create(FS, M, "cf/Sub", S_IFDIR | 0755, 0, NULL);
	if (!(flags_of(sub) & FS_CASEFOLD_FL))
		RW_FAIL("cf/Sub did not inherit the casefold flag");
	if (flags_of(rw_ino(FS, "cf/FILE")) & FS_CASEFOLD_FL)
		RW_FAIL("a regular file got the casefold flag");
	rw_create(FS, M, "cf/Sub/Deeper", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "cf/Sub/Deeper/LEAF", S_IFREG | 0644, 0, NULL);
	expect_enoent(root, "CF");

	/* hard link by one spelling, unlink by another */
	RW_OK(uf2fs_link(FS, rw_ino(FS, "cf/mixed Case 123"), cf, NAME("Second Name")));
	model_add(M, "cf/Second Name", model_get(M, "cf/mixed Case 123"));
	RW_OK(uf2fs_unlink(FS, cf, NAME("SECOND NAME")));
	model_del(M, "cf/Second Name");
	expect_enoent(cf, "second name");

	/* unlink and rmdir by another case */
	rw_create(FS, M, "cf/Gone.TXT", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "cf/GoneDir", S_IFDIR | 0755, 0, NULL);
	RW_OK(uf2fs_unlink(FS, cf, NAME("gone.txt")));
	model_del(M, "cf/Gone.TXT");
	RW_EXPECT(uf2fs_rmdir(FS, cf, NAME("GONEDIR.")), -ENOENT);
	RW_OK(uf2fs_rmdir(FS, cf, NAME("gonedir")));
	model_del(M, "cf/GoneDir");
	RW_EXPECT(uf2fs_rmdir(FS, cf, NAME("SUB")), -ENOTEMPTY);
	RW_EXPECT(uf2fs_unlink(FS, cf, NAME("sub")), -EISDIR);

	end(lookups_by_any_case);
}

/*
 * Rename. Linux's VFS finds the target of "abc" -> "ABC" in a casefolded
 * directory to be the source itself and does nothing (vfs_rename: source ==
 * target), so the stored name keeps its case; the library does the same. A
 * rename onto another inode's entry under another case keeps that entry's
 * name (f2fs_set_link re-points the slot).
 */
static void t_rename(void **state)
{
	uint32_t cf, cf2, ino;
	struct rw_names c = { 0 };

	begin_img("rename", CF_UTF8);
	cf = mk_cf_dir("cf");
	cf2 = mk_cf_dir("cf2");
	rw_create(FS, M, "cf/Readme.md", S_IFREG | 0644, 0, NULL);
	rw_write_pat(FS, M, "cf/Readme.md", 0, 5000, 1);
	ino = rw_ino(FS, "cf/Readme.md");

	/* a change of case only: success, nothing changes */
	RW_OK(uf2fs_rename(FS, cf, NAME("Readme.md"), cf, NAME("README.MD"), 0));
	RW_OK(uf2fs_rename(FS, cf, NAME("readme.md"), cf, NAME("README.md"), RENAME_EXCHANGE));
	RW_EXPECT(uf2fs_rename(FS, cf, NAME("readme.md"), cf, NAME("README.md"),
			       RENAME_NOREPLACE), -EEXIST);
	RW_OK(uf2fs_readdir(FS, cf, 0, rw_collect, &c));
	if (c.n != 1 || strcmp(c.names[0], "Readme.md"))
		RW_FAIL("after case-only renames the entry reads '%s', want 'Readme.md'",
			c.n ? c.names[0] : "(none)");
	for (size_t i = 0; i < c.n; i++)
		free(c.names[i]);
	free(c.names);
	free(c.inos);

	/* to a new name, given in its new case, by a source name in another case */
	RW_OK(uf2fs_rename(FS, cf, NAME("README.MD"), cf, NAME("Notes.TXT"), 0));
	model_rename(M, "cf/Readme.md", "cf/Notes.TXT");
	if (lookup_ino(cf, "notes.txt") != ino)
		RW_FAIL("notes.txt is not the renamed file");
	expect_enoent(cf, "readme.md");

	/* across casefolded directories */
	RW_OK(uf2fs_rename(FS, cf, NAME("NOTES.txt"), cf2, NAME("Moved \xc3\x84"), 0));
	model_rename(M, "cf/Notes.TXT", "cf2/Moved \xc3\x84");
	if (lookup_ino(cf2, "MOVED a\xcc\x88") != ino)	/* A + U+0308 */
		RW_FAIL("cf2/MOVED Ä is not the moved file");

	/* over an existing entry named in another case: the slot keeps its name */
	rw_create(FS, M, "cf2/Target", S_IFREG | 0644, 0, NULL);
	RW_OK(uf2fs_rename(FS, cf2, NAME("moved \xc3\xa4"), cf2, NAME("TARGET"), 0));
	model_del(M, "cf2/Target");
	model_rename(M, "cf2/Moved \xc3\x84", "cf2/Target");
	if (lookup_ino(cf2, "target") != ino)
		RW_FAIL("cf2/target is not the renamed file");

	/* directories, and exchange across cases */
	rw_create(FS, M, "cf/DirA", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "cf/DirA/in", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "cf2/dirb", S_IFDIR | 0755, 0, NULL);
	RW_OK(uf2fs_rename(FS, cf, NAME("dira"), cf2, NAME("DIRB"), RENAME_EXCHANGE));
	model_rename(M, "cf/DirA", "tmp");
	model_rename(M, "cf2/dirb", "cf/DirA");
	model_rename(M, "tmp", "cf2/dirb");
	RW_OK(uf2fs_rename(FS, cf2, NAME("DIRB"), cf, NAME("NewDir"), 0));
	model_rename(M, "cf2/dirb", "cf/NewDir");
	RW_EXPECT(uf2fs_rename(FS, cf, NAME("dira"), cf, NAME("NEWDIR"), 0), -ENOTEMPTY);
	end(NULL);
}

/* /// chattr +F /// */

static void t_flag_rules(void **state)
{
	uint32_t d, f, fl;

	begin_img("flag_rules", CF_UTF8);
	d = rw_create(FS, M, "d", S_IFDIR | 0755, 0, NULL);
	f = rw_create(FS, M, "d/file", S_IFREG | 0644, 0, NULL);
	fl = flags_of(d);
	RW_EXPECT(uf2fs_set_flags(FS, d, fl | FS_CASEFOLD_FL), -ENOTEMPTY);
	RW_EXPECT(uf2fs_set_flags(FS, f, flags_of(f) | FS_CASEFOLD_FL), -EOPNOTSUPP);
	RW_OK(uf2fs_unlink(FS, d, NAME("file")));
	model_del(M, "d/file");
	/* empty again (inline dentries hold only "." and ".."): allowed */
	RW_OK(uf2fs_set_flags(FS, d, fl | FS_CASEFOLD_FL));
	rw_create(FS, M, "d/X", S_IFREG | 0644, 0, NULL);
	RW_EXPECT(uf2fs_set_flags(FS, d, fl), -ENOTEMPTY);
	RW_OK(uf2fs_unlink(FS, d, NAME("x")));
	model_del(M, "d/X");
	RW_OK(uf2fs_set_flags(FS, d, fl));
	if (flags_of(d) & FS_CASEFOLD_FL)
		RW_FAIL("chattr -F did not clear the flag");
	/* case-sensitive again */
	rw_create(FS, M, "d/X", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "d/x", S_IFREG | 0644, 0, NULL);

	/* a directory that grew past inline dentries and was emptied */
	rw_create(FS, M, "big", S_IFDIR | 0755, 0, NULL);
	for (int i = 0; i < 300; i++) {
		char p[64];

		snprintf(p, sizeof(p), "big/entry-%03d", i);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
	}
	RW_EXPECT(uf2fs_set_flags(FS, rw_ino(FS, "big"), FS_CASEFOLD_FL), -ENOTEMPTY);
	for (int i = 0; i < 300; i++) {
		char p[64];

		snprintf(p, sizeof(p), "entry-%03d", i);
		RW_OK(uf2fs_unlink(FS, rw_ino(FS, "big"), NAME(p)));
		snprintf(p, sizeof(p), "big/entry-%03d", i);
		model_del(M, p);
	}
	RW_OK(uf2fs_set_flags(FS, rw_ino(FS, "big"), FS_CASEFOLD_FL));
	rw_create(FS, M, "big/Again", S_IFREG | 0644, 0, NULL);
	if (lookup_ino(rw_ino(FS, "big"), "AGAIN") != rw_ino(FS, "big/Again"))
		RW_FAIL("big/AGAIN does not find big/Again");
	end(NULL);
}

/* An image without the feature refuses +F, as the kernel does. */
static void t_no_feature(void **state)
{
	uint32_t d;

	begin_img("no_feature", RW_FEATURES_DEFAULT);
	d = rw_create(FS, M, "d", S_IFDIR | 0755, 0, NULL);
	RW_EXPECT(uf2fs_set_flags(FS, d, flags_of(d) | FS_CASEFOLD_FL), -EOPNOTSUPP);
	end(NULL);
}

/* /// Invalid UTF-8 /// */

static void invalid_checks(const char *when)
{
	uint32_t cf = rw_ino(FS, "cf"), ino;

	/* the exact bytes, and nothing else, find a name that is not UTF-8 */
	ino = lookup_ino(cf, "Bad\xff");
	expect_enoent(cf, "BAD\xff");
	expect_enoent(cf, "bad\xff");
	(void)ino;
	/* a surrogate (ED A0 80) and an overlong '/' (C0 AF) are not UTF-8 either */
	lookup_ino(cf, "Sur\xed\xa0\x80");
	expect_enoent(cf, "SUR\xed\xa0\x80");
	lookup_ino(cf, "Over\xc0\xaf");
	/* valid names around them still fold */
	if (lookup_ino(cf, "VALID") != lookup_ino(cf, "Valid"))
		RW_FAIL("VALID does not find Valid");
}

static void t_invalid_utf8(void **state)
{
	uint32_t cf, ino;

	begin_img("invalid_utf8", CF_UTF8);
	cf = mk_cf_dir("cf");
	rw_create(FS, M, "cf/Bad\xff", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "cf/Sur\xed\xa0\x80", S_IFREG | 0644, 0, NULL);
	rw_create(FS, M, "cf/Over\xc0\xaf", S_IFDIR | 0755, 0, NULL);
	rw_create(FS, M, "cf/Valid", S_IFREG | 0644, 0, NULL);
	/* the raw bytes: a different case is a different name */
	rw_create(FS, M, "cf/BAD\xff", S_IFREG | 0644, 0, NULL);
	RW_EXPECT(uf2fs_mknod(FS, cf, NAME("Bad\xff"), S_IFREG | 0644, 0, 0, 0, &ino), -EEXIST);
	RW_OK(uf2fs_unlink(FS, cf, NAME("BAD\xff")));
	model_del(M, "cf/BAD\xff");
	end(invalid_checks);
}

/* Strict mode (mkfs -C utf8:strict): such names are refused with EINVAL. */
static void t_strict(void **state)
{
	uint32_t cf, ino;

	begin_img("strict", CF_STRICT);
	cf = mk_cf_dir("cf");
	RW_EXPECT(uf2fs_mknod(FS, cf, NAME("Bad\xff"), S_IFREG | 0644, 0, 0, 0, &ino), -EINVAL);
	RW_EXPECT(uf2fs_mkdir(FS, cf, NAME("Bad\xff"), 0755, 0, 0, &ino), -EINVAL);
	RW_EXPECT(uf2fs_lookup(FS, cf, NAME("Bad\xff"), &ino), -EINVAL);
	rw_create(FS, M, "cf/Good \xc3\xa9", S_IFREG | 0644, 0, NULL);
	RW_EXPECT(uf2fs_rename(FS, cf, NAME("GOOD \xc3\x89"), cf, NAME("x\xff"), 0), -EINVAL);
	if (lookup_ino(cf, "GOOD E\xcc\x81") != rw_ino(FS, "cf/Good \xc3\xa9"))
		RW_FAIL("GOOD É does not find Good é");
	/* outside casefolded directories any bytes go */
	rw_create(FS, M, "Bad\xff", S_IFREG | 0644, 0, NULL);
	end(NULL);
}

/* /// A large directory: several hash levels /// */

#define BIG_N 2400

/* Entry i as created, and as looked up (another case, another composition). */
static void big_name(int i, char *buf, size_t size, bool other)
{
	if (!other)
		snprintf(buf, size, "Fi\xc3\xa9le-%04d-\xc3\x84rger-%s", i, i % 3 ? "X" : "ß");
	else
		snprintf(buf, size, "fIE\xcc\x81LE-%04d-a\xcc\x88RGER-%s", i, i % 3 ? "x" : "SS");
}

/*
 * Every entry by its other spelling. After the changes of t_big_dir: a third
 * gone, a fifteenth back under the other spelling (found by both).
 */
static bool big_changed;

static void big_checks(const char *when)
{
	uint32_t d = rw_ino(FS, "cf/big");
	char name[128], other[128], path[160];

	for (int i = 0; i < BIG_N; i++) {
		uint32_t want;

		big_name(i, name, sizeof(name), false);
		big_name(i, other, sizeof(other), true);
		if (big_changed && i % 3 == 0) {
			if (i % 15) {
				expect_enoent(d, name);
				expect_enoent(d, other);
				continue;
			}
			snprintf(path, sizeof(path), "cf/big/%s", other);
		} else {
			snprintf(path, sizeof(path), "cf/big/%s", name);
		}
		want = rw_ino(FS, path);
		if (lookup_ino(d, name) != want || lookup_ino(d, other) != want)
			RW_FAIL("%s or %s does not find %s (%s)", name, other, path, when);
	}
}

static void t_big_dir(void **state)
{
	char name[128], path[160];
	struct uf2fs_attr a;
	uint32_t d;

	begin_img("big_dir", CF_UTF8);
	mk_cf_dir("cf");
	d = rw_create(FS, M, "cf/big", S_IFDIR | 0755, 0, NULL);
	for (int i = 0; i < BIG_N; i++) {
		big_name(i, name, sizeof(name), false);
		snprintf(path, sizeof(path), "cf/big/%s", name);
		rw_create(FS, M, path, i % 7 ? S_IFREG | 0644 : S_IFDIR | 0700, 0, NULL);
	}
	RW_OK(uf2fs_getattr(FS, d, &a));
	/* 2400 names of 3 slots in 214-slot blocks: levels 0-2 hold 14 blocks */
	if (a.size <= 14 * 4096)
		RW_FAIL("cf/big is only %" PRIu64 " bytes", a.size);
	big_changed = false;
	big_checks("rw");
	/* every third name goes, looked up by another spelling */
	for (int i = 0; i < BIG_N; i += 3) {
		big_name(i, name, sizeof(name), true);
		if (i % 7)
			RW_OK(uf2fs_unlink(FS, d, NAME(name)));
		else
			RW_OK(uf2fs_rmdir(FS, d, NAME(name)));
		big_name(i, name, sizeof(name), false);
		snprintf(path, sizeof(path), "cf/big/%s", name);
		model_del(M, path);
	}
	/* and every fifth of the rest is created again in the other spelling */
	for (int i = 0; i < BIG_N; i += 15) {
		uint32_t ino;

		big_name(i, name, sizeof(name), true);
		RW_OK(uf2fs_mknod(FS, d, NAME(name), S_IFREG | 0600, 0, 0, 0, &ino));
		snprintf(path, sizeof(path), "cf/big/%s", name);
		model_add(M, path, mnode_new(S_IFREG | 0600, 0, 0));
	}
	big_changed = true;
	end(big_checks);
}

/* /// Roll-forward recovery /// */

/*
 * A file created in a casefolded directory after the last checkpoint and
 * fsync'd comes back through roll-forward recovery, which re-adds its name
 * from the inode: the hash must be the folded one there too (fsck checks).
 */
static void t_recovery(void **state)
{
	uint32_t cf, ino;
	uint8_t buf[3000];

	begin_img("recovery", CF_UTF8);
	cf = mk_cf_dir("cf");
	rw_create(FS, M, "cf/Old", S_IFREG | 0644, 0, NULL);
	RW_OK(uf2fs_sync(FS));
	ino = rw_create(FS, M, "cf/New \xc3\x9c" "ber.LOG", S_IFREG | 0644, 0, NULL);
	rw_fill(buf, sizeof(buf), 7);
	RW_EXPECT(uf2fs_write(FS, ino, buf, sizeof(buf), 0), sizeof(buf));
	mnode_write(model_get(M, "cf/New \xc3\x9c" "ber.LOG"), 0, buf, sizeof(buf));
	RW_OK(uf2fs_fsync(FS, ino, false));
	uf2fs_test_crash(FS);
	/* the name is in the fsync'd nodes only, not in the checkpoint */
	C.fs = rw_mount(C.img, true);
	if (!uf2fs_needs_recovery(FS))
		RW_FAIL("the fsync was not left for roll-forward recovery");
	expect_enoent(rw_ino(FS, "cf"), "New \xc3\x9c" "ber.LOG");
	rw_unmount(FS);
	C.fs = rw_mount(C.img, false);
	if (lookup_ino(rw_ino(FS, "cf"), "new u\xcc\x88" "BER.log") != ino)
		RW_FAIL("the recovered file is not found by another case");
	(void)cf;
	end(NULL);
}

/* /// Names hashed under other rules /// */

/*
 * Give the dentry of name, in every dentry block that holds it, another
 * hash_code, as an implementation with other Unicode tables would have
 * stored it. Returns how many it changed.
 */
static int poke_hash(const char *img, const char *name, uint32_t hash)
{
	size_t len = strlen(name);
	uint8_t blk[F2FS_BLKSIZE];
	int fd = open(img, O_RDWR), n = 0;

	assert_true(fd >= 0);
	for (off_t off = 0; pread(fd, blk, sizeof(blk), off) == (ssize_t)sizeof(blk);
	     off += sizeof(blk)) {
		struct f2fs_dentry_block *b = (struct f2fs_dentry_block *)blk;

		for (unsigned int i = 0; i < NR_DENTRY_IN_BLOCK; i++) {
			struct f2fs_dir_entry *de = &b->dentry[i];

			if (!(b->dentry_bitmap[i / 8] & (1u << (i % 8))) || de->name_len != len ||
			    i + GET_DENTRY_SLOTS(len) > NR_DENTRY_IN_BLOCK ||
			    memcmp(b->filename[i], name, len))
				continue;
			de->hash_code = hash;
			assert_int_equal(pwrite(fd, blk, sizeof(blk), off), sizeof(blk));
			n++;
		}
	}
	close(fd);
	return n;
}

/* Set s_encoding_flags bits in both super blocks (no sb checksum on these images). */
static void set_encoding_flags(const char *img, uint16_t bits)
{
	int fd = open(img, O_RDWR);

	assert_true(fd >= 0);
	for (int i = 0; i < 2; i++) {
		off_t off = (off_t)i * F2FS_BLKSIZE + F2FS_SUPER_OFFSET +
			    offsetof(struct f2fs_super_block, s_encoding_flags);
		uint16_t fl;

		assert_int_equal(pread(fd, &fl, 2, off), 2);
		fl |= bits;
		assert_int_equal(pwrite(fd, &fl, 2, off), 2);
	}
	close(fd);
}

/*
 * Newer kernels search a casefolded directory linearly when the hashed
 * lookup misses, so that names whose stored hash came from other Unicode
 * rules are still found, unless mkfs set "hashonly" (s_encoding_flags bit 1),
 * xfstests f2fs/012. A directory in blocks, one entry with a foreign hash.
 */
static void t_foreign_hash(void **state)
{
	uint32_t cf, ino, want;
	char p[64];

	begin_img("foreign_hash", CF_UTF8);
	cf = mk_cf_dir("cf");
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof(p), "cf/Entry-%03d", i);
		rw_create(FS, M, p, S_IFREG | 0644, 0, NULL);
	}
	want = rw_create(FS, M, "cf/Foreign-Name", S_IFREG | 0644, 0, NULL);
	rw_unmount(FS);
	RW_FSCK(C.img);
	if (poke_hash(C.img, "Foreign-Name", 0x12345678) < 1)
		RW_FAIL("no dentry block holds Foreign-Name");

	C.fs = rw_mount(C.img, false);
	cf = rw_ino(FS, "cf");
	if (lookup_ino(cf, "FOREIGN-NAME") != want || lookup_ino(cf, "Foreign-Name") != want)
		RW_FAIL("the linear fallback does not find the foreign-hashed entry");
	RW_EXPECT(uf2fs_mknod(FS, cf, NAME("foreign-name"), S_IFREG | 0644, 0, 0, 0, &ino),
		  -EEXIST);
	/* still a working directory around it */
	if (lookup_ino(cf, "ENTRY-123") != rw_ino(FS, "cf/Entry-123"))
		RW_FAIL("ENTRY-123 is not Entry-123");
	RW_OK(uf2fs_unlink(FS, cf, NAME("foreign-NAME")));
	model_del(M, "cf/Foreign-Name");
	rw_unmount(FS);

	/* hashonly: no fallback, as the kernel */
	C.fs = rw_mount(C.img, false);
	want = rw_create(FS, M, "cf/Second", S_IFREG | 0644, 0, NULL);
	rw_unmount(FS);
	RW_FSCK(C.img);
	if (poke_hash(C.img, "Second", 0x12345678) < 1)
		RW_FAIL("no dentry block holds Second");
	set_encoding_flags(C.img, F2FS_ENC_NO_COMPAT_FALLBACK_FL);
	C.fs = rw_mount(C.img, true);
	cf = rw_ino(FS, "cf");
	expect_enoent(cf, "second");
	expect_enoent(cf, "Second");
	rw_unmount(FS);
	C.fs = NULL;
	model_free(&C.m);
	rw_context[0] = 0;
}

/* /// Encodings Linux does not know /// */

/* mkfs.f2fs -O casefold without -C leaves encoding 0, which Linux refuses to mount. */
static void t_unknown_encoding(void **state)
{
	struct uf2fs_options o;
	struct uf2fs *fs = NULL;

	memset(&C, 0, sizeof(C));
	snprintf(rw_context, sizeof(rw_context), "test unknown_encoding");
	rw_img_path(C.img, sizeof(C.img), "unknown_encoding");
	rw_mkfs(C.img, 64, "casefold");
	uf2fs_default_options(&o);
	o.device = C.img;
	o.read_only = false;
	RW_EXPECT(uf2fs_mount(&o, &fs), -EROFS);
	if (!strstr(uf2fs_last_error(NULL), "encoding"))
		RW_FAIL("the refusal does not name the encoding: %s", uf2fs_last_error(NULL));
	fs = rw_mount(C.img, true);
	rw_unmount(fs);
	RW_FSCK(C.img);
	rw_context[0] = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_any_case),
		cmocka_unit_test(t_rename),
		cmocka_unit_test(t_flag_rules),
		cmocka_unit_test(t_no_feature),
		cmocka_unit_test(t_invalid_utf8),
		cmocka_unit_test(t_strict),
		cmocka_unit_test(t_big_dir),
		cmocka_unit_test(t_recovery),
		cmocka_unit_test(t_foreign_hash),
		cmocka_unit_test(t_unknown_encoding),
	};
	int failures;

	if (system("command -v mkfs.f2fs >/dev/null && command -v fsck.f2fs >/dev/null") != 0) {
		printf("SKIP: f2fs-tools (mkfs.f2fs, fsck.f2fs) not installed\n");
		return 77;
	}
	rw_tmp_init("casefold");
	failures = cmocka_run_group_tests(tests, NULL, NULL);
	rw_tmp_done(failures);
	return failures ? 1 : 0;
}
