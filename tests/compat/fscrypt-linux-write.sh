#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fscrypt, uf2fs -> Linux: encrypted trees that uf2fs wrote, read by the Linux
# kernel with and without the keys. Two images: mkfs.f2fs -O encrypt (plain)
# and -O encrypt,casefold -C utf8 (cf: every policy directory is also +F).
#
# (a) uf2fs mount -o rw,keyfile=K; for every policy of fscrypt_policy_table
#     (tests/compat/fscrypt-tree.sh) `uf2fs fscrypt set_policy` on a new
#     directory (+F through the mount on cf), fscrypt_populate's tree, then
#     a 1 MiB sequential file, a write into a hole, a truncate to a partial
#     block, renames within the directory and into a subdirectory (short and
#     long names), unlinks, and a symlink made after the renames. The
#     manifest is taken through the mount; after an unmount, a mount without
#     keys gives uf2fs's no-key view. fsck.f2fs -f is clean.
# (a2) `uf2fs fscrypt add_key` (raw key on stdin; v1 with --descriptor) on a
#     mount with no keyfile prints Linux's identifier, key_status says
#     Present, a file reads as written; remove_key, key_status Absent, and the
#     directory shows the no-key names. fsck.f2fs -f is clean.
# (b) Linux in QEMU, without keys first: its no-key view (names byte for
#     byte, no-key symlink targets, sizes, inode numbers, ENOKEY) is uf2fs's.
#     Then with the keys (v1 by descriptor, v2 by identifier): the policy of
#     each directory is the one set, the manifest equals uf2fs's (content,
#     sizes, modes, times, link targets, inode numbers), casefolded names
#     answer to other spellings, and Linux can add a file to each directory.
#     fsck.f2fs -f is clean afterwards.
# (c) uf2fs reads back, with the keys, the files Linux added.
#
# As in fscrypt-linux-read.sh, HCTR2 runs on Linux's hctr2 modules built for
# the guest (or is printed as NOTE: not covered when they cannot be built),
# and a policy the guest refuses is a finding; the run ends with one POLICY
# line per image and policy.
#
# Env: BUILD, UF2FS, TOP (from make check); KEEP_TMP=1;
#   FSCRYPT_BIG=1    more policies, a 300-entry directory and a 3 MiB file each
#   FSCRYPT_TIMEOUT  seconds per guest boot (default 400)
set -euo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$TOP"
. tests/lib/common.sh
. tests/compat/qemu.sh
. tests/compat/fscrypt-tree.sh

if ! why=$(qemu_missing); then skip "$why"; fi
need_fuse
need_f2fs_tools
need_uf2fs
need_cmd "$PY" gcc

BIG=${FSCRYPT_BIG:-0}
TMO=${FSCRYPT_TIMEOUT:-400}
tmpdir_init fscrypt-write
GHDIR=$TMP/gh
mkdir -p "$GHDIR" "$TMP/in"
gcc -O2 -Wall -o "$GHDIR/gh" tests/compat/guest-helper.c || fail "cannot build guest-helper.c"
export PATH=$GHDIR:$PATH
FL="$PY tests/compat/fscrypt-list.py"
VERIFY="$PY tests/compat/verify-tree.py"
fails=0
bad() { echo "FAIL: $*" >&2; echo "$*" >> "$TMP/bad.log"; fails=$((fails + 1)); }

fscrypt_oracle_table "$BIG" > "$TMP/names" 2> "$TMP/not-covered" || fail "no guest kernel"
cat "$TMP/not-covered"
$FL keys "$TMP/names" "$TMP/in/policies" "$TMP/keys" || fail "key derivation"
cp tests/compat/fscrypt-tree.sh "$TMP/in/"
K=$TMP/keys
chmod 600 "$K"
declare -A IMG=([plain]=$TMP/plain.img [cf]=$TMP/cf.img)
truncate -s 256M "${IMG[plain]}" "${IMG[cf]}"
"$MKFS_F2FS" -f -q -O encrypt "${IMG[plain]}" >/dev/null || fail "mkfs.f2fs -O encrypt"
"$MKFS_F2FS" -f -q -O encrypt,casefold -C utf8 "${IMG[cf]}" >/dev/null ||
	fail "mkfs.f2fs -O encrypt,casefold -C utf8"
M=$TMP/mnt

# uf2fs_set_policy DIR VERSION CONTENTS FILENAMES PAD FLAGS KEYSPEC: the
# one place that spells the CLI (fscryptctl's order: options, KEYSPEC, DIR).
uf2fs_set_policy() {
	local args=(fscrypt set_policy "--contents=$3" "--filenames=$4" "--padding=$5")
	case $6 in *direct_key*) args+=(--direct-key);; esac
	case $6 in *iv_ino_lblk_64*) args+=(--iv-ino-lblk-64);; esac
	case $6 in *iv_ino_lblk_32*) args+=(--iv-ino-lblk-32);; esac
	"$UF2FS" "${args[@]}" "$7" "$1"
}

# changes DIR SEED: what a user does after the first writes
changes() {
	local d=$1 s=$2
	gh gen "$d/seq-1M" 1052576 "$s" rand &&
	gh gen "$d/holes" 3000 $((s + 1)) rand 30000 &&
	truncate -s 3000 "$d/f4095" &&
	gh rename "$d/f4096" "$d/renamed-f4096" &&
	gh rename "$d/a" "$d/sub/a-moved-into-sub" &&
	gh rename "$d/$(printf '%0255d' 0 | tr 0 m)" "$d/$(printf '%0240d' 0 | tr 0 r)" &&
	gh rename "$d/sub/deeper" "$d/deeper-moved-up" &&
	rm "$d/fifteen-bytes-1" "$d/victim" &&
	rmdir "$d/victimdir" &&
	ln -s "renamed-f4096" "$d/sym-made-after" &&
	gh gen "$d/written-last" 12345 $((s + 2)) text
}

# ------------------------------------------------------------------ (a)
for i in plain cf; do
	step "(a) $i: uf2fs writes a tree under each policy"
	img=${IMG[$i]}
	mount_uf2fs "$img" "$M" "rw,keyfile=$K" || fail "$i: uf2fs mount -o rw,keyfile"
	seed=5000
	mkdir "$M/unencrypted" && gh gen "$M/unencrypted/file" 5000 9 text
	while read -r name ver cm fm pad fl imgs key spec; do
		case ,$imgs, in *,$i,*) ;; *) continue;; esac
		seed=$((seed + 100))
		d=$M/$name
		mkdir "$d"
		uf2fs_set_policy "$d" "$ver" "$cm" "$fm" "$pad" "$fl" "$spec" ||
			{ bad "$i $name: uf2fs fscrypt set_policy"; continue; }
		cf=0
		if [ $i = cf ]; then gh flags "$d" +F >/dev/null || bad "$i $name: +F"; cf=1; fi
		fscrypt_populate "$d" $seed $cf "$BIG" || { bad "$i $name: populate"; continue; }
		changes "$d" $((seed + 50)) || { bad "$i $name: changes"; continue; }
		if [ $cf = 1 ]; then fscrypt_check_cf "$d" || bad "$i $name: other spellings"; fi
	done < "$TMP/in/policies"
	gh manifest "$M" "$TMP/$i.manifest" "$TMP/$i.xattrs" "$TMP/$i.info" || bad "$i: manifest"
	umount_uf2fs "$M" || bad "$i: unmount"
	fsck_clean "$img" || bad "$i: fsck.f2fs after uf2fs wrote"
	if mount_uf2fs "$img" "$M" ro; then
		$FL walk "$M" "$TMP/$i.nokey" || bad "$i: no-key walk"
		umount_uf2fs "$M" || bad "$i: unmount"
	else
		bad "$i: uf2fs mount -o ro without keys"
	fi
done
# ------------------------------------------------------------------ (a2)
# Keys added and removed on a live mount with no keyfile, by `uf2fs fscrypt`:
# the identifier add_key prints is Linux's (the host's HKDF, checked against
# Linux in (b)); with the key a file reads as written, without it the
# directory shows the same no-key names as a mount without keys.
step "(a2) plain: uf2fs fscrypt add_key, key_status, remove_key on a live mount"
if mount_uf2fs "${IMG[plain]}" "$M" rw; then
	while read -r name ver cm fm pad fl imgs key spec; do
		case $name in v2-xts-p32|v1-adi-p8) ;; *) continue;; esac
		desc=(); [ "$ver" = 1 ] && desc=(--descriptor="$spec")
		got=$($PY -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.argv[1]))' "$key" |
			"$UF2FS" fscrypt add_key "${desc[@]}" "$M" 2>&1) || bad "plain $name: add_key: $got"
		[ "$ver" = 1 ] || [ "$got" = "$spec" ] ||
			bad "plain $name: add_key printed '$got', the identifier is $spec"
		st=$("$UF2FS" fscrypt key_status "$spec" "$M" 2>&1)
		grep -qi present <<<"$st" || bad "plain $name: key_status after add_key: $st"
		want=$(awk -F'\t' -v p="$name/sub/inner" '$1 == p { print $8 }' "$TMP/plain.manifest")
		got=$(sha256sum < "$M/$name/sub/inner" | cut -d' ' -f1) || true
		[ -n "$want" ] && [ "$got" = "$want" ] ||
			bad "plain $name: sub/inner reads $got with the added key, want $want"
		"$UF2FS" fscrypt remove_key "$spec" "$M" > "$TMP/rm.out" 2>&1 ||
			bad "plain $name: remove_key: $(cat "$TMP/rm.out")"
		st=$("$UF2FS" fscrypt key_status "$spec" "$M" 2>&1)
		grep -qi absent <<<"$st" || bad "plain $name: key_status after remove_key: $st"
		[ -e "$M/$name/sub" ] && bad "plain $name: the plaintext name sub is still there"
		$FL walk "$M/$name" "$TMP/live-$name" || bad "plain $name: walk"
		awk -F'\t' -v n="$name" 'BEGIN { OFS = "\t" }
			$1 == n { $1 = "."; print; next }
			index($1, n "/") == 1 { $1 = substr($1, length(n) + 2); print }' \
			"$TMP/plain.nokey" > "$TMP/live-want-$name"
		# (sizes and open are compared with Linux's in (b))
		$FL diff "$TMP/live-want-$name" "$TMP/live-$name" --ignore size,open \
			> "$TMP/cmp-live-$name-plain" 2>&1 || { head -20 "$TMP/cmp-live-$name-plain" >&2
			bad "plain $name: no-key names after remove_key differ"; }
		sed -i "/^fscrypt-list diff:/!s|^|$name/|" "$TMP/cmp-live-$name-plain"
	done < "$TMP/in/policies"
	umount_uf2fs "$M" || bad "plain: unmount"
	fsck_clean "${IMG[plain]}" || bad "plain: fsck.f2fs after live key removal"
else
	bad "plain: uf2fs mount -o rw without keys"
fi

# the harness itself: the trees are there and the no-key view is not plain
grep -q $'^v1-xts-p32/renamed-f4096\tfile' "$TMP/plain.manifest" ||
	fail "plain.manifest lacks v1-xts-p32/renamed-f4096"
if grep -q '^v1-xts-p32/renamed-f4096' "$TMP/plain.nokey"; then
	bad "uf2fs shows plaintext names without the key"
fi

# ------------------------------------------------------------------ (b)
step "(b) Linux reads uf2fs's trees, without and with the keys"
cat > "$TMP/read.sh" <<'GUEST_READ'
. /in/fscrypt-tree.sh
rc=0
O=/tmp/out
mkdir -p $O /mnt
bad() { echo "GUEST: $*"; rc=1; }
for img in plain cf; do
	dev=/dev/vda; [ $img = cf ] && dev=/dev/vdc
	mount -t f2fs $dev /mnt || { bad "mount $img"; continue; }
	gh fscrypt nokey_list /mnt $O/$img.nokey || bad "nokey_list $img"
	while read -r name ver cm fm pad fl imgs key spec; do
		case ,$imgs, in *,$img,*) ;; *) continue;; esac
		if [ "$ver" = 1 ]; then got=$(gh fscrypt add_key /mnt "$key" "$spec")
		else got=$(gh fscrypt add_key /mnt "$key"); fi
		[ "$got" = "$spec" ] || bad "$img $name: add_key says '$got', the host computed $spec"
		want="v$ver $cm $fm pad$pad $(echo $fl | tr , +) $spec"
		got=$(gh fscrypt get_policy /mnt/$name)
		[ "$got" = "$want" ] || bad "$img $name: policy '$got', want '$want'"
		if ! (cat /mnt/$name/One.txt > /dev/null) 2> $O/probe.err; then
			if grep -q 'Package not installed' $O/probe.err; then
				echo "UNSUPPORTED $img $name: $(cat $O/probe.err)"
				echo "$img $name" >> $O/unsupported
			else
				bad "$img $name: $(cat $O/probe.err)"
			fi
		fi
	done < /in/policies
	gh manifest /mnt $O/$img.manifest $O/$img.xattrs $O/$img.info || bad "manifest $img"
	while read -r name ver cm fm pad fl imgs key spec; do
		case ,$imgs, in *,$img,*) ;; *) continue;; esac
		grep -qx "$img $name" $O/unsupported 2>/dev/null && continue
		if [ $img = cf ]; then fscrypt_check_cf /mnt/$name || bad "$img $name: other spellings"; fi
		gh gen /mnt/$name/linux-wrote 6000 77 text && mkdir /mnt/$name/linux-dir &&
			ln -s linux-wrote /mnt/$name/linux-dir/Linux-Link || bad "$img $name: Linux cannot write"
	done < /in/policies
	gh manifest /mnt $O/$img.after $O/$img.after.xattrs $O/$img.after.info || bad "manifest $img"
	cd /; umount /mnt || bad "umount $img"
done
dmesg > $O/dmesg
tar cf - -C $O . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null
exit 0	# the host counts the GUEST: lines
GUEST_READ
t=$SECONDS
QEMU_IN=$TMP/in QEMU_EXTRA=${IMG[cf]} qemu_run "${IMG[plain]}" "$TMP/read.sh" "$TMP/read.out" "$TMO" \
	> "$TMP/read.console" || { tail -30 "$TMP/read.console" >&2; fail "guest failed"; }
log "guest: $((SECONDS - t))s"
grep '^UNSUPPORTED' "$TMP/read.console" >&2 || true
if grep '^GUEST:' "$TMP/read.console" >&2; then
	grep '^GUEST:' "$TMP/read.console" >> "$TMP/bad.log"
	bad "the guest's checks failed"
fi
G=$TMP/read.d
mkdir -p "$G"
tar xf "$TMP/read.out" -C "$G" || fail "no output from the guest"
badmsg=$(grep -iE 'f2fs.*(error|inconsist|corrupt|fsck|invalid|bad |mismatch|fail)|fscrypt.*(error|fail)' \
	"$G/dmesg" | grep -vE "$FSCRYPT_DMESG_SKIP" || true)
[ -z "$badmsg" ] || { printf '%s\n' "$badmsg" >&2; bad "kernel messages"; }

# drop IMG's unsupported policies from listing FILE (paths under them)
declare -A UNSUP=()
if [ -f "$G/unsupported" ]; then
	while read -r i n; do UNSUP[$i/$n]=1; done < "$G/unsupported"
fi
# fscrypt_oracle_table kept only what the guest kernel can do: a refusal now is a finding
for k in "${!UNSUP[@]}"; do bad "${k%%/*} ${k#*/}: Linux could not use this policy (UNSUPPORTED above)"; done
covered_only() {
	local i=$1 f=$2 n
	cp "$f" "$f.all"
	for n in "${!UNSUP[@]}"; do
		[ "${n%%/*}" = "$i" ] || continue
		n=${n#*/}
		awk -F'\t' -v n="$n" '$1 != n && index($1, n "/") != 1' "$f" > "$f.tmp" && mv "$f.tmp" "$f"
	done
}
for i in plain cf; do
	covered_only $i "$TMP/$i.manifest"
	covered_only $i "$G/$i.manifest"
	covered_only $i "$TMP/$i.nokey"
	covered_only $i "$G/$i.nokey"
	$FL diff "$G/$i.nokey" "$TMP/$i.nokey" > "$TMP/cmp-nokey-$i" 2>&1 ||
		{ head -30 "$TMP/cmp-nokey-$i" >&2; bad "$i: Linux's no-key view differs from uf2fs's"; }
	tail -1 "$TMP/cmp-nokey-$i"
	$VERIFY --ino "$TMP/$i.manifest" "$TMP/$i.xattrs" --manifest "$G/$i.manifest" "$G/$i.xattrs" \
		> "$TMP/cmp-linux-$i" 2>&1 || { head -40 "$TMP/cmp-linux-$i" >&2; bad "$i: Linux's view differs from uf2fs's"; }
	tail -1 "$TMP/cmp-linux-$i"
	fsck_clean "${IMG[$i]}" || bad "$i: fsck.f2fs after Linux wrote"
done

# ------------------------------------------------------------------ (c)
for i in plain cf; do
	step "(c) $i: uf2fs reads what Linux added"
	rm -rf "$TMP/get-$i"
	if "$UF2FS" get -o "keyfile=$K" "${IMG[$i]}" / "$TMP/get-$i" > "$TMP/get-$i.log" 2>&1; then
		covered_only $i "$G/$i.after"
		for n in "${!UNSUP[@]}"; do
			[ "${n%%/*}" = "$i" ] && rm -rf "$TMP/get-$i/${n#*/}"
		done
		$VERIFY --extract "$G/$i.after" "$G/$i.after.xattrs" "$TMP/get-$i" > "$TMP/cmp-get-$i" 2>&1 ||
			{ head -30 "$TMP/cmp-get-$i" >&2; bad "$i: uf2fs get after Linux wrote"; }
		tail -1 "$TMP/cmp-get-$i"
	else
		tail -20 "$TMP/get-$i.log" >&2; bad "$i: uf2fs get -o keyfile failed"
	fi
done

for k in "${!UNSUP[@]}"; do
	echo "NOTE: $k not covered: the guest kernel cannot use this policy (see the console)"
done
step "per policy"
fscrypt_policy_report "$TMP/names" "$TMP"
[ "$fails" = 0 ] || fail "$fails check(s) failed"
pass "fscrypt: uf2fs-written trees under $(wc -l < "$TMP/names") policies, read by Linux with and without keys"
