#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Roll-forward of new names in encrypted directories, uf2fs -> Linux. uf2fs
# creates files in encrypted directories, fsyncs each, and is killed with
# SIGKILL before any checkpoint takes the names; Linux f2fs in QEMU must
# then recover the dentries from the inodes' i_name (the ciphertext name;
# in a casefolded directory the dirhash stored after it, which recovery
# cannot compute without the key) and read every fsync'd byte with the key.
# uf2fs recovers a copy of the same image the same way. Images:
#   plain  mkfs.f2fs -O extra_attr,encrypt: v2 AES-256-XTS and v1 Adiantum
#          DIRECT_KEY directories
#   cf     -O extra_attr,encrypt,casefold -C utf8: a v2 +F directory; the
#          names are then also looked up in other spellings
# fsck.f2fs -f is clean after each recovery.
#
# Env: BUILD, UF2FS, TOP (from make check); KEEP_TMP=1; FSCRYPT_TIMEOUT.
set -euo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP"
. tests/lib/common.sh
. tests/compat/qemu.sh
. tests/compat/fscrypt-tree.sh
. tests/compat/fscrypt-host.sh

if ! why=$(qemu_missing); then skip "$why"; fi
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd "$PY" gcc

TMO=${FSCRYPT_TIMEOUT:-400}
tmpdir_init fscrypt-fsync
mkdir -p "$TMP/in"
FL="$PY tests/compat/fscrypt-list.py"
fscrypt_oracle_table 0 > "$TMP/all" 2>/dev/null || fail "no guest kernel"
awk '$1 == "v2-xts-p32" || $1 == "v1-adi-dk-p32"' "$TMP/all" > "$TMP/names"
$FL keys "$TMP/names" "$TMP/in/policies" "$TMP/keys" || fail "key derivation"
K=$TMP/keys
chmod 600 "$K"

IMGS=(plain cf)
for i in "${IMGS[@]}"; do
	img=$TMP/$i.img M=$TMP/mnt-$i
	truncate -s 64M "$img"
	if [ $i = cf ]; then
		"$MKFS_F2FS" -f -q -O extra_attr,encrypt,casefold -C utf8 "$img" >/dev/null
	else
		"$MKFS_F2FS" -f -q -O extra_attr,encrypt "$img" >/dev/null
	fi || fail "$i: mkfs.f2fs"
	step "$i: uf2fs makes the encrypted directories, checkpointed by an unmount"
	mount_uf2fs "$img" "$M" "rw,keyfile=$K" || fail "$i: mount"
	while read -r name ver cm fm pad fl imgs key spec; do
		[ $i = cf ] && [ "$ver" = 1 ] && continue
		mkdir "$M/$name"
		if [ $i = cf ]; then
			"$PY" - "$M/$name" <<'EOF' || fail "$i $name: chattr +F"
import fcntl, struct, sys, os
fd = os.open(sys.argv[1], os.O_RDONLY)
buf = bytearray(struct.pack("I", 0))
fcntl.ioctl(fd, 0x80086601, buf)             # FS_IOC_GETFLAGS
flags = struct.unpack("I", buf)[0] | 0x40000000	# FS_CASEFOLD_FL
fcntl.ioctl(fd, 0x40086602, struct.pack("I", flags))  # FS_IOC_SETFLAGS
EOF
		fi
		fscrypt_uf2fs_set_policy "$M/$name" "$cm" "$fm" "$pad" "$fl" "$spec" ||
			fail "$i $name: set_policy"
		echo base > "$M/$name/base"
	done < "$TMP/in/policies"
	umount_uf2fs "$M" || fail "$i: unmount"

	step "$i: uf2fs creates and fsyncs new files, then is killed"
	mount_uf2fs "$img" "$M" "rw,keyfile=$K" || fail "$i: mount"
	"$PY" - "$M" "$TMP/expect-$i" "$i" "$TMP/in/policies" <<'EOF' || fail "$i: writes"
import hashlib, os, sys
mnt, expect, img, pols = sys.argv[1:5]
rows = []
for line in open(pols):
    name, ver = line.split()[:2]
    if img == "cf" and ver == "1":
        continue
    # first, so that the last fsync is a new name's: had it checkpointed,
    # no roll-forward would be pending (checked below with uf2fs info)
    with open(f"{mnt}/{name}/base", "a") as f:
        f.write("appended")
        f.flush()
        os.fsync(f.fileno())
    rows.append((f"{name}/base", hashlib.sha256(b"base\nappended").hexdigest()))
    for k, size in enumerate((11, 5000, 70000, 300000)):
        fn = f"{name}/New-File-{k}"
        data = bytes((i * 37 + k * 11 + len(name)) & 0xff for i in range(size))
        with open(f"{mnt}/{fn}", "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        rows.append((fn, hashlib.sha256(data).hexdigest()))
    with open(f"{mnt}/{name}/lost", "w") as f:
        f.write("never fsync'd")
with open(expect, "w") as f:
    for n, h in rows:
        f.write(f"{h}  {n}\n")
EOF
	kill -9 "${_MOUNT_PID[$M]}"
	wait "${_MOUNT_PID[$M]}" 2>/dev/null || true
	unset "_MOUNT_PID[$M]"
	fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M" 2>/dev/null || true
	"$UF2FS" info "$img" 2>/dev/null | grep -qi "recovery.*needed" ||
		fail "$i: no roll-forward pending: the fsyncs checkpointed"
	cp --sparse=always "$img" "$TMP/$i-self.img"
	cp "$TMP/expect-$i" "$TMP/in/expect-$i"
done

step "Linux recovers both images and reads the files with the keys"
cat > "$TMP/guest.sh" <<'EOF'
rc=0
for img in plain cf; do
	dev=/dev/vda; [ $img = cf ] && dev=/dev/vdc
	mount -t f2fs $dev /mnt || { echo "GUEST: mount $img"; rc=1; continue; }
	while read -r name ver cm fm pad fl imgs key spec; do
		[ -d /mnt/$name ] || continue
		if [ "$ver" = 1 ]; then gh fscrypt add_key /mnt "$key" "$spec" >/dev/null
		else gh fscrypt add_key /mnt "$key" >/dev/null; fi || echo "GUEST: $img add_key $name"
		if [ $img = cf ]; then
			cmp /mnt/$name/New-File-2 /mnt/$name/new-file-2 &&
				cmp /mnt/$name/NEW-FILE-3 /mnt/$name/New-File-3 ||
				{ echo "GUEST: $img $name: other spellings"; rc=1; }
		fi
		[ ! -s /mnt/$name/lost ] || { echo "GUEST: $img $name: unsynced data survived"; rc=1; }
	done < /in/policies
	(cd /mnt && sha256sum -c /in/expect-$img) || { echo "GUEST: $img: fsync'd data lost"; rc=1; }
	ls -la /mnt/* | head -40
	cd /; umount /mnt || { echo "GUEST: umount $img"; rc=1; }
done
dmesg | grep -i f2fs | tail -20
exit $rc
EOF
QEMU_IN=$TMP/in QEMU_EXTRA=$TMP/cf.img qemu_run "$TMP/plain.img" "$TMP/guest.sh" "$TMP/guest.out" "$TMO" \
	> "$TMP/guest.console" || { tail -40 "$TMP/guest.console" >&2; fail "Linux recovery"; }
grep -q '^GUEST:' "$TMP/guest.console" && { grep '^GUEST:' "$TMP/guest.console" >&2; fail "guest"; }
for i in "${IMGS[@]}"; do
	fsck_clean "$TMP/$i.img" || fail "$i: fsck.f2fs after Linux's recovery"
done

step "uf2fs recovers its own images the same way"
for i in "${IMGS[@]}"; do
	M=$TMP/mnt-$i
	mount_uf2fs "$TMP/$i-self.img" "$M" "rw,keyfile=$K" || fail "$i: uf2fs recovery mount"
	(cd "$M" && sha256sum -c --quiet "$TMP/expect-$i") || fail "$i: uf2fs self-recovery lost data"
	for d in "$M"/*/; do
		[ ! -s "$d/lost" ] || fail "$i: unsynced data survived uf2fs recovery"
	done
	umount_uf2fs "$M" || fail "$i: unmount"
	fsck_clean "$TMP/$i-self.img" || fail "$i: fsck.f2fs after uf2fs's recovery"
done
pass "fsync'd new names in encrypted directories (plain and casefolded) roll forward, Linux and uf2fs"
