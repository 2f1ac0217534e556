#!/bin/bash
# Build a compression-capable sload.f2fs (and fsck/dump) from the Debian source
# of the installed f2fs-tools, without autotools.
#
# Debian's f2fs-tools 1.15 is built without liblz4 and liblzo2, so its
# `sload.f2fs -c` prints "The selected compression algorithm is not supported"
# (and still exits 0). The compression tests need a sload that can compress;
# this script builds one from the same 1.15 source with lz4 and lzo enabled.
#
#   tests/lib/build-f2fs-tools.sh [OUTDIR]     default: $BUILD/f2fs-tools
#
# Prints the path of the built fsck.f2fs multi-call binary's directory
# (sload.f2fs, fsck.f2fs, dump.f2fs symlinks inside). Idempotent: a finished
# build is reused. The source comes from Debian with `apt-get source`, using a
# private apt list directory, so the system's apt configuration is not touched.
set -euo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD;; esac
OUT=${1:-$BUILD/f2fs-tools}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

if [ -x "$OUT/sload.f2fs" ] && [ -f "$OUT/.ok" ]; then
	echo "$OUT"; exit 0
fi

log() { echo "build-f2fs-tools: $*" >&2; }

ver=$(dpkg-query -W -f='${Version}' f2fs-tools 2>/dev/null || true)
ver=${ver:-1.15.0-1}
src=$OUT/src
mkdir -p "$src"
if ! ls "$src"/f2fs-tools_*.orig.tar.* >/dev/null 2>&1; then
	# A private deb-src list for the release the system uses.
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
	apt=$OUT/apt
	mkdir -p "$apt/lists/partial"
	cat >"$apt/sources.list" <<EOS
deb-src http://deb.debian.org/debian $codename main
EOS
	O=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
	   -o "Dir::State::Lists=$apt/lists" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
	log "fetching f2fs-tools $ver source with apt-get source"
	apt-get "${O[@]}" update -qq >&2
	(cd "$src" && apt-get "${O[@]}" source --download-only "f2fs-tools=$ver" >&2) ||
	(cd "$src" && apt-get "${O[@]}" source --download-only f2fs-tools >&2)
fi
tarball=$(ls "$src"/f2fs-tools_*.orig.tar.* | head -1)
rm -rf "$src/tree" && mkdir -p "$src/tree"
tar -xf "$tarball" -C "$src/tree" --strip-components=1
T=$src/tree
uver=$(head -1 "$T/VERSION")
major=${uver%%.*}; minor=${uver#*.}; minor=${minor%%.*}

# One fix: sload 1.15 leaves i_inline_xattr_size at 0 on the inodes it creates
# when the image has flexible_inline_xattr, lays out i_addr, inline data and
# inline dentries for 0 inline xattr words, and then its own fsck pass "fixes"
# the size to 50 words, which silently moves 50 i_addr slots into the xattr
# area (files over ~3.4 MiB lose blocks, xattrs turn to garbage, inline
# directories lose entries). Set the size when the inode is made, as mkfs
# does for the root.
if ! grep -q 'uf2fs-test fix' "$T/fsck/dir.c"; then
	sed -i 's|^\(\t\tnode_blk->i.i_extra_isize = cpu_to_le16(calc_extra_isize());\)$|\1\n\t\tif (c.feature \& cpu_to_le32(F2FS_FEATURE_FLEXIBLE_INLINE_XATTR)) /* uf2fs-test fix */\n\t\t\tnode_blk->i.i_inline_xattr_size = cpu_to_le16(DEFAULT_INLINE_XATTR_ADDRS);|' \
		"$T/fsck/dir.c"
	grep -q 'uf2fs-test fix' "$T/fsck/dir.c" || { log "could not apply the inline_xattr_size fix"; exit 1; }
fi

# The config.h that ./configure would write on Debian.
cat >"$T/config.h" <<EOC
#define F2FS_TOOLS_VERSION "$uver"
#define F2FS_MAJOR_VERSION $major
#define F2FS_MINOR_VERSION $minor
#define F2FS_TOOLS_DATE "$(sed -n 2p "$T/VERSION")"
#define HAVE_LIBLZO2 1
#define HAVE_LIBLZ4 1
#define HAVE_LIBUUID 1
#define HAVE_BYTESWAP_H 1
#define HAVE_DECL_BSWAP_64 1
#define HAVE_FCNTL_H 1
#define HAVE_LINUX_BLKZONED_H 1
#define HAVE_LINUX_FALLOC_H 1
#define HAVE_LINUX_FIEMAP_H 1
#define HAVE_LINUX_FS_H 1
#define HAVE_LINUX_HDREG_H 1
#define HAVE_LINUX_LIMITS_H 1
#define HAVE_LINUX_POSIX_ACL_H 1
#define HAVE_LINUX_TYPES_H 1
#define HAVE_LINUX_XATTR_H 1
#define HAVE_MNTENT_H 1
#define HAVE_SCSI_SG_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_IOCTL_H 1
#define HAVE_SYS_MOUNT_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_SYSCALL_H 1
#define HAVE_SYS_SYSMACROS_H 1
#define HAVE_SYS_UTSNAME_H 1
#define HAVE_SYS_XATTR_H 1
#define HAVE_UNISTD_H 1
#define HAVE_FALLOCATE 1
#define HAVE_FSETXATTR 1
#define HAVE_FSTAT 1
#define HAVE_FSTAT64 1
#define HAVE_FSYNC 1
#define HAVE_GETGID 1
#define HAVE_GETMNTENT 1
#define HAVE_GETUID 1
#define HAVE_LSEEK64 1
#define HAVE_MEMSET 1
#define HAVE_SETMNTENT 1
#define HAVE_CLOCK_BOOTTIME 1
#define HAVE_BLK_ZONE_REP_V2 1
EOC
# uuid is optional: only mkfs needs it, and only if its header is there.
# SELinux labels (sload -s) when libselinux's headers are there (libfuse3-dev
# depends on libselinux1-dev, so they normally are).
selinux_lib=
if [ -f /usr/include/selinux/selinux.h ] && [ -f /usr/include/selinux/label.h ]; then
	printf '#define HAVE_LIBSELINUX 1\n#define HAVE_SELINUX_SELINUX_H 1\n' >>"$T/config.h"
	selinux_lib=-lselinux
fi
uuid_lib=
if [ -f /usr/include/uuid/uuid.h ]; then
	echo '#define HAVE_UUID_UUID_H 1' >>"$T/config.h"; uuid_lib=-luuid
else
	sed -i '/HAVE_LIBUUID/d' "$T/config.h"
fi

log "compiling f2fs-tools $uver with lz4 and lzo${selinux_lib:+ and selinux}"
cc=${CC:-cc}
srcs=()
for f in main fsck dump mount defrag resize node segment dir sload xattr compress dict \
	mkquota quotaio quotaio_tree quotaio_v2; do srcs+=("$T/fsck/$f.c"); done
for f in libf2fs libf2fs_io libf2fs_zoned nls_utf8; do srcs+=("$T/lib/$f.c"); done
# lz4 >= 1.9.4 dropped LZ4_STREAMSIZE_U64, which 1.15 uses.
$cc -O1 -g -w -DHAVE_CONFIG_H "-DLZ4_STREAMSIZE=sizeof(LZ4_stream_t)" -D_FILE_OFFSET_BITS=64 -D_GNU_SOURCE -I"$T" -I"$T/include" \
	-o "$OUT/fsck.f2fs" "${srcs[@]}" -llz4 -llzo2 $uuid_lib $selinux_lib >&2
for n in sload.f2fs dump.f2fs defrag.f2fs resize.f2fs; do ln -sf fsck.f2fs "$OUT/$n"; done
"$OUT/sload.f2fs" -V >&2
touch "$OUT/.ok"
echo "$OUT"
