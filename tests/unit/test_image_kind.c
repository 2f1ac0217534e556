// SPDX-License-Identifier: GPL-2.0
/*
 * uf2fs_image_kind (lib/dev/nbd.c): which images go to libnbd. VM disks made
 * by qemu-img itself (the oracle for their headers) in every format it can
 * create and uf2fs probes must be VM disks; a raw file (zeros, as an f2fs
 * image starts) and a missing file must not; -o format= must override the
 * probe both ways; NBD URIs of every scheme must be NBD, and file names that
 * merely start like one must not.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "uf2fs/uf2fs.h"

static char dir[] = "/tmp/uf2fs-image-kind.XXXXXX";

static int kind(const char *image, const char *format)
{
	struct uf2fs_options opts;

	uf2fs_default_options(&opts);
	opts.image_format = format;
	return uf2fs_image_kind(image, &opts);
}

static void test_vm_formats(void **state)
{
	static const char *const formats[] = {
		"qcow2", "qcow", "qed", "vmdk", "vdi", "vhdx", "vpc", "parallels",
	};
	char path[128], cmd[512];

	if (system("command -v qemu-img >/dev/null 2>&1"))
		skip();
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		snprintf(path, sizeof(path), "%s/disk.%s", dir, formats[i]);
		snprintf(cmd, sizeof(cmd), "qemu-img create -q -f %s %s 64M", formats[i], path);
		assert_int_equal(system(cmd), 0);
		if (kind(path, NULL) != UF2FS_IMAGE_VMDISK)
			fail_msg("%s made by qemu-img not probed as a VM disk", formats[i]);
		/* format=raw opens the bytes as they are */
		assert_int_equal(kind(path, "raw"), UF2FS_IMAGE_FILE);
		unlink(path);
	}
}

static void test_raw_files(void **state)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/raw.img", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), 1 << 20), 0);
	fclose(f);
	assert_int_equal(kind(path, NULL), UF2FS_IMAGE_FILE);
	assert_int_equal(kind(path, "qcow2"), UF2FS_IMAGE_VMDISK);
	snprintf(path, sizeof(path), "%s/missing.img", dir);
	assert_int_equal(kind(path, NULL), UF2FS_IMAGE_FILE);
	assert_int_equal(kind(NULL, NULL), UF2FS_IMAGE_FILE);
}

static void test_uris(void **state)
{
	static const char *const nbd[] = {
		"nbd://localhost/export", "nbd://127.0.0.1:10809", "nbds://host/e",
		"nbd+unix:///?socket=/tmp/s", "nbds+unix:///e?socket=s", "nbd+vsock:///",
	};
	static const char *const files[] = { "nbd.img", "./nbd://x", "nbdx", "/nbd://" };

	for (size_t i = 0; i < sizeof(nbd) / sizeof(nbd[0]); i++)
		assert_int_equal(kind(nbd[i], NULL), UF2FS_IMAGE_NBD);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		assert_int_equal(kind(files[i], NULL), UF2FS_IMAGE_FILE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vm_formats),
		cmocka_unit_test(test_raw_files),
		cmocka_unit_test(test_uris),
	};
	int ret;

	if (!mkdtemp(dir))
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return ret;
}
