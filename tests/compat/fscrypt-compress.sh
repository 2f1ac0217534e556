#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Compressed files in encrypted directories, both ways with Linux f2fs in
# QEMU. Linux compresses a cluster, then encrypts each compressed block as
# the file block of its slot; uf2fs must write the same layout and read
# Linux's. Four small images, one per algorithm, each mounted with the same
# compress_* options by uf2fs and by Linux:
#   lz4, lzo, lzo-rle   mkfs.f2fs -O extra_attr,encrypt,compression
#   zstd                ... ,casefold -C utf8 (the policy directories are +F)
# with three policies (v2 AES-256-XTS, v2 IV_INO_LBLK_64, v1 Adiantum
# DIRECT_KEY; v2 only on the casefolded image), each directory +c.
#
# (a) uf2fs writes text, random and mixed files, overwrites clusters,
#     appends, truncates inside a cluster (second mount); fsck.f2fs -f clean.
# (b) Linux, with the keys: its manifest equals uf2fs's, it counts
#     compressed blocks in uf2fs's files (F2FS_IOC_GET_COMPRESS_BLOCKS);
#     then it writes a new compressed file, overwrites clusters of uf2fs's
#     file and truncates another inside a cluster.
# (c) fsck.f2fs -f clean; uf2fs reads Linux's result exactly (manifest),
#     then overwrites, appends to and truncates Linux's compressed files;
#     fsck.f2fs -f clean.
# (d) Linux reads uf2fs's changes exactly.
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
tmpdir_init fscrypt-compress
GHDIR=$TMP/gh
mkdir -p "$GHDIR" "$TMP/in"
gcc -O2 -Wall -o "$GHDIR/gh" tests/compat/guest-helper.c || fail "cannot build guest-helper.c"
export PATH=$GHDIR:$PATH
FL="$PY tests/compat/fscrypt-list.py"
VERIFY=("$PY" tests/compat/verify-tree.py)

# the guest's crypto modules (QEMU_MODULES), and which policies it can use
fscrypt_oracle_table 0 > "$TMP/all" 2>/dev/null || fail "no guest kernel"
awk '$1 == "v2-xts-p32" || $1 == "v2-lblk64-p16" || $1 == "v1-adi-dk-p32"' "$TMP/all" \
	> "$TMP/names"
[ "$(wc -l < "$TMP/names")" = 3 ] || fail "policy table lacks the three policies"
$FL keys "$TMP/names" "$TMP/in/policies" "$TMP/keys" || fail "key derivation"
K=$TMP/keys
chmod 600 "$K"

DEVS=(vda vdc vdd vde)
CNAMES=(lz4 lzo lzo-rle zstd)
COPTS=("compress_algorithm=lz4,compress_log_size=2"
	"compress_algorithm=lzo,compress_log_size=3"
	"compress_algorithm=lzo-rle,compress_log_size=2,compress_chksum"
	"compress_algorithm=zstd:3,compress_log_size=3,compress_chksum")
IMGS=()
for i in "${!CNAMES[@]}"; do
	IMGS+=("$TMP/${CNAMES[$i]}.img")
	truncate -s 64M "${IMGS[$i]}"
	feat=extra_attr,encrypt,compression
	if [ "${CNAMES[$i]}" = zstd ]; then
		"$MKFS_F2FS" -f -q -O $feat,casefold -C utf8 "${IMGS[$i]}" >/dev/null ||
			fail "mkfs.f2fs -O $feat,casefold"
	else
		"$MKFS_F2FS" -f -q -O $feat "${IMGS[$i]}" >/dev/null || fail "mkfs.f2fs -O $feat"
	fi
done
is_cf() { [ "${CNAMES[$1]}" = zstd ]; }

# policies IMG_INDEX: the policy lines that image carries (v2 only when casefolded)
policies() {
	if is_cf "$1"; then awk '$2 == 2' "$TMP/in/policies"; else cat "$TMP/in/policies"; fi
}

# manifest ROOT PREFIX
manifest() { gh manifest "$1" "$2.manifest" "$2.xattrs" "$2.info" || fail "gh manifest $1"; }

# same WHAT EXPECTED GOT [verify-tree options]
same() {
	local what=$1 a=$2 b=$3 out
	shift 3
	if out=$("${VERIFY[@]}" "$@" "$a.manifest" "$a.xattrs" --manifest "$b.manifest" \
		"$b.xattrs" 2>&1); then
		log "$what: $(printf '%s\n' "$out" | tail -1)"
	else
		printf '%s\n' "$out" | head -30 >&2
		fail "$what: manifests differ"
	fi
}

# ------------------------------------------------------------------ (a)
step "(a) uf2fs writes compressed files in encrypted directories"
for i in "${!CNAMES[@]}"; do
	img=${IMGS[$i]} M=$TMP/mnt-$i n=${CNAMES[$i]}
	o="rw,keyfile=$K,${COPTS[$i]}"
	mount_uf2fs "$img" "$M" "$o" || fail "$n: uf2fs mount -o $o"
	s=100
	while read -r name ver cm fm pad fl imgs key spec; do
		d=$M/$name s=$((s + 10))
		mkdir "$d"
		fscrypt_uf2fs_set_policy "$d" "$cm" "$fm" "$pad" "$fl" "$spec" ||
			fail "$n $name: set_policy"
		if is_cf "$i"; then gh flags "$d" +F > /dev/null || fail "$n $name: +F"; fi
		gh flags "$d" +c > /dev/null || fail "$n $name: chattr +c on the encrypted dir"
		gh gen "$d/text" 300000 $s text && gh gen "$d/rand" 50000 $((s + 1)) rand &&
			gh gen "$d/mixed" 100000 $((s + 2)) text &&
			gh gen "$d/mixed" 40000 $((s + 3)) rand 60000 && mkdir "$d/Sub" &&
			gh gen "$d/Sub/deep" 150000 $((s + 4)) text || fail "$n $name: writes"
	done < <(policies "$i")
	umount_uf2fs "$M" || fail "$n: unmount"
	fsck_clean "$img" || fail "$n: fsck.f2fs after uf2fs wrote"
	# the changes in a second mount: clusters that are on disk are rewritten
	mount_uf2fs "$img" "$M" "$o" || fail "$n: uf2fs remount"
	while read -r name ver cm fm pad fl imgs key spec; do
		d=$M/$name
		f=$(gh flags "$d/text")
		[ $((0x$f & 4)) = 4 ] || fail "$n $name: text is not +c"
		gh gen "$d/text" 3000 7 text 5000 && gh gen "$d/text" 20000 8 text 300000 &&
			gh gen "$d/rand" 16384 9 text 16384 && truncate -s 123457 "$d/Sub/deep" &&
			truncate -s 70001 "$d/mixed" || fail "$n $name: changes"
	done < <(policies "$i")
	manifest "$M" "$TMP/ua-$i"
	umount_uf2fs "$M" || fail "$n: unmount"
	fsck_clean "$img" || fail "$n: fsck.f2fs after uf2fs changed its files"
done

# ------------------------------------------------------------------ guest
# run_guest NAME BODY: BODY runs per image with D, M, O set and the keys added.
run_guest() {
	local name=$1 body=$2 i extra=()
	{
		echo 'rc=0; mkdir -p /tmp/out'
		for i in "${!IMGS[@]}"; do
			echo "D=${DEVS[$i]}; O=/tmp/out/\$D; M=/mnt/\$D; mkdir -p \$O \$M"
			echo "if mount -t f2fs -o ${COPTS[$i]} /dev/\$D \$M; then"
			echo '  while read -r name ver cm fm pad fl imgs key spec; do'
			echo '    [ -d $M/$name ] || continue'
			echo '    if [ $ver = 1 ]; then gh fscrypt add_key $M $key $spec >/dev/null'
			echo '    else gh fscrypt add_key $M $key >/dev/null; fi || { echo "GUEST: $D add_key $name"; rc=1; }'
			echo '  done < /in/policies'
			echo "$body"
			echo "  cd /; umount \$M || { echo \"GUEST: umount \$D failed\"; rc=1; }"
			echo "else echo \"GUEST: mount \$D failed\"; rc=1; fi"
		done
		echo 'dmesg > /tmp/out/dmesg'
		echo 'tar cf - -C /tmp/out . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null'
		echo 'exit $rc'
	} > "$TMP/$name.sh"
	for i in "${!IMGS[@]}"; do [ "$i" = 0 ] || extra+=("${IMGS[$i]}"); done
	local t0=$SECONDS
	QEMU_IN=$TMP/in QEMU_EXTRA="${extra[*]}" qemu_run "${IMGS[0]}" "$TMP/$name.sh" \
		"$TMP/$name.out" "$TMO" > "$TMP/$name.console" ||
		{ tail -30 "$TMP/$name.console" >&2; fail "guest run $name failed"; }
	log "guest $name: $((SECONDS - t0))s"
	mkdir -p "$TMP/$name.d"
	tar xf "$TMP/$name.out" -C "$TMP/$name.d" || fail "no output from guest run $name"
	local bad
	bad=$(grep -iE 'f2fs.*(error|inconsist|corrupt|fsck|invalid|bad |mismatch|fail)|fscrypt.*(error|fail)' \
		"$TMP/$name.d/dmesg" || true)
	[ -z "$bad" ] || { printf '%s\n' "$bad" >&2; fail "guest $name: kernel messages"; }
	grep ' cblocks ' "$TMP/$name.console" >&2 || true
	if grep -q '^GUEST:' "$TMP/$name.console"; then
		grep '^GUEST:' "$TMP/$name.console" >&2
		fail "guest run $name reported errors"
	fi
}

# ------------------------------------------------------------------ (b)
step "(b) Linux reads uf2fs's files, then changes them and writes its own"
cat > "$TMP/in/linux-changes.sh" <<'EOF'
M=$1
while read -r name ver cm fm pad fl imgs key spec; do
	d=$M/$name
	[ -d "$d" ] || continue
	for f in text Sub/deep; do
		n=$(gh cblocks "$d/$f") && [ "$n" -gt 0 ] ||
			echo "GUEST: $d/$f (written by uf2fs) has no compressed blocks ($n)"
	done
	gh gen "$d/linux" 200000 61 text &&
		gh gen "$d/text" 8192 62 rand 0 && gh gen "$d/text" 10000 63 text 100000 &&
		truncate -s 50001 "$d/mixed" && gh gen "$d/Sub/linux2" 90000 64 text || 
		echo "GUEST: Linux cannot change $d"
	sync
	echo "$d cblocks linux: $(gh cblocks "$d/linux")"
	n=$(gh cblocks "$d/linux") && [ "$n" -gt 0 ] || echo "GUEST: $d/linux is not compressed"
done < /in/policies
EOF
run_guest g1 '  gh manifest $M $O/before.manifest $O/before.xattrs $O/before.info || rc=1
  sh /in/linux-changes.sh $M
  gh manifest $M $O/after.manifest $O/after.xattrs $O/after.info || rc=1'

# ------------------------------------------------------------------ (c)
step "(c) uf2fs reads Linux's changes, then overwrites and truncates Linux's files"
for i in "${!CNAMES[@]}"; do
	img=${IMGS[$i]} M=$TMP/mnt-$i n=${CNAMES[$i]} g=$TMP/g1.d/${DEVS[$i]}
	same "$n: Linux reads uf2fs's compressed encrypted files" "$TMP/ua-$i" "$g/before" \
		--ignore dirsize
	fsck_clean "$img" || fail "$n: fsck.f2fs after Linux wrote"
	o="rw,keyfile=$K,${COPTS[$i]}"
	mount_uf2fs "$img" "$M" "$o" || fail "$n: uf2fs mount after Linux"
	manifest "$M" "$TMP/uc-$i"
	same "$n: uf2fs reads Linux's compressed encrypted files" "$g/after" "$TMP/uc-$i" \
		--ignore dirsize
	while read -r name ver cm fm pad fl imgs key spec; do
		d=$M/$name
		gh gen "$d/linux" 5000 71 text 1000 && gh gen "$d/linux" 30000 72 text 200000 &&
			truncate -s 150001 "$d/Sub/linux2" && gh gen "$d/Sub/linux2" 100 73 rand 160000 &&
			gh gen "$d/text" 4096 74 text 0 || fail "$n $name: uf2fs changes Linux's files"
	done < <(policies "$i")
	manifest "$M" "$TMP/ud-$i"
	umount_uf2fs "$M" || fail "$n: unmount"
	fsck_clean "$img" || fail "$n: fsck.f2fs after uf2fs changed Linux's files"
done

# ------------------------------------------------------------------ (d)
step "(d) Linux reads uf2fs's changes to its files"
run_guest g2 '  gh manifest $M $O/m.manifest $O/m.xattrs $O/m.info || rc=1
  while read -r name ver cm fm pad fl imgs key spec; do
    [ -d $M/$name ] || continue
    n=$(gh cblocks $M/$name/linux) && [ "$n" -gt 0 ] || echo "GUEST: $name/linux lost its compressed clusters"
  done < /in/policies'
for i in "${!CNAMES[@]}"; do
	same "${CNAMES[$i]}: Linux reads uf2fs's changes" "$TMP/ud-$i" "$TMP/g2.d/${DEVS[$i]}/m" \
		--ignore dirsize
	fsck_clean "${IMGS[$i]}" || fail "${CNAMES[$i]}: fsck.f2fs at the end"
done
pass "fscrypt+compression: ${CNAMES[*]} x $(wc -l < "$TMP/names") policies, both ways with Linux"
