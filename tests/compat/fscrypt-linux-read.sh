#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fscrypt, Linux -> uf2fs: encrypted trees that only the Linux kernel wrote,
# read by uf2fs with and without the keys. Two images: mkfs.f2fs -O encrypt
# (plain) and -O encrypt,casefold -C utf8 (cf; there every policy directory
# is also +F, which Linux allows for v2 policies only).
#
# (a) One guest boot: for every policy of fscrypt_policy_table
#     (tests/compat/fscrypt-tree.sh: v1 and v2; AES-256-XTS/AES-256-CTS,
#     AES-256-XTS/AES-256-HCTR2, AES-128-CBC/AES-128-CTS, Adiantum; padding
#     4, 8, 16, 32; DIRECT_KEY; IV_INO_LBLK_64 and _32), Linux adds the key
#     (the v2 identifier must be the one computed on the host), sets the
#     policy on a new directory and writes fscrypt_populate's tree. After a
#     remount with all keys it writes the manifest (names, modes, sizes,
#     sha256, link targets, flags); after a remount with no key the no-key
#     listing (names byte for byte, sizes, no-key link targets, inode
#     numbers, ENOKEY on open). fsck.f2fs -f is clean on both images.
# (b) With the keys: `uf2fs get -o keyfile=K` and `uf2fs mount -o
#     ro,keyfile=K` show exactly the manifest; the encrypt and casefold inode
#     flags are Linux's; `uf2fs fscrypt get_policy` names each policy;
#     casefolded names answer to other spellings through the mount.
# (c) Without the keys: `uf2fs ls -lRi` and a read-only mount show Linux's
#     no-key listing exactly; files refuse open with ENOKEY.
# (d) Through a read-write mount without the keys: a no-key name is looked up
#     and stat'ed, the file `victim` is unlinked and the empty `victimdir`
#     removed by their no-key names (found by inode number), a create in a
#     no-key directory fails as on Linux (ENOKEY); fsck.f2fs -f is clean.
# (e) Second guest boot with the keys: Linux's manifest is the first one less
#     the deleted entries (directory sizes and times aside).
#
# The guest kernel (Debian's 6.1) lacks hctr2(aes): fscrypt_oracle_table
# builds Linux's hctr2 modules for it (fscrypt_hctr2_modules), or, when it
# cannot, leaves HCTR2 out with a "NOTE: ... not covered". A policy the
# guest then still refuses is reported as UNSUPPORTED and fails the test.
# The run ends with one POLICY line per image and policy (ok, or FAIL with
# the number and kinds of findings).
#
# Env: BUILD, UF2FS, TOP (from make check); KEEP_TMP=1;
#   FSCRYPT_BIG=1    more policies, a 300-entry directory and a 3 MiB file each
#   FSCRYPT_TIMEOUT  seconds per guest boot (default 400)
#   FSCRYPT_CACHE=DIR  keep Linux's images and lists from (a) in DIR and reuse
#                    them on the next run with the same policies (to iterate
#                    on uf2fs without the first boot)
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
tmpdir_init fscrypt-read
FL="$PY tests/compat/fscrypt-list.py"
VERIFY="$PY tests/compat/verify-tree.py"
fails=0
bad() { echo "FAIL: $*" >&2; echo "$*" >> "$TMP/bad.log"; fails=$((fails + 1)); }

mkdir -p "$TMP/in"
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

# guest NAME SCRIPT: boot with plain as vda and cf as vdc; outputs in $TMP/NAME.d
guest() {
	local name=$1 t=$SECONDS badmsg
	rm -f "$TMP/$name.out"
	QEMU_IN=$TMP/in QEMU_EXTRA=${IMG[cf]} qemu_run "${IMG[plain]}" "$2" "$TMP/$name.out" "$TMO" \
		> "$TMP/$name.console" || { tail -30 "$TMP/$name.console" >&2; fail "guest $name failed"; }
	log "guest $name: $((SECONDS - t))s"
	if grep -q '^GUEST:' "$TMP/$name.console"; then
		grep '^GUEST:' "$TMP/$name.console" >&2
		fail "guest $name: checks failed"
	fi
	rm -rf "$TMP/$name.d"
	mkdir -p "$TMP/$name.d"
	tar xf "$TMP/$name.out" -C "$TMP/$name.d" || fail "no output from guest $name"
	badmsg=$(grep -iE 'f2fs.*(error|inconsist|corrupt|fsck|invalid|bad |mismatch|fail)|fscrypt.*(error|fail)' \
		"$TMP/$name.d/dmesg" | grep -vE "$FSCRYPT_DMESG_SKIP" || true)
	[ -z "$badmsg" ] || { printf '%s\n' "$badmsg" >&2; fail "kernel messages ($name)"; }
}

# ------------------------------------------------------------------ (a)
step "(a) Linux writes a tree under each policy"
CACHE=${FSCRYPT_CACHE:-}
if [ -n "$CACHE" ] && cmp -s "$CACHE/names" "$TMP/names" &&
   cmp -s "$CACHE/fscrypt-tree.sh" tests/compat/fscrypt-tree.sh && [ -s "$CACHE/write.out" ]; then
	log "reusing Linux's images from $CACHE"
	cp --sparse=always "$CACHE/plain.img" "$CACHE/cf.img" "$TMP/"
	cp "$CACHE/write.out" "$CACHE/write.console" "$TMP/"
	mkdir -p "$TMP/write.d" && tar xf "$TMP/write.out" -C "$TMP/write.d"
else
echo "BIG=$BIG" > "$TMP/write.sh"
cat >> "$TMP/write.sh" <<'GUEST_WRITE'
. /in/fscrypt-tree.sh
rc=0
O=/tmp/out
mkdir -p $O /mnt
bad() { echo "GUEST: $*"; rc=1; }
# addkeys IMG: add the keys of IMG's policies to /mnt
addkeys() {
	while read -r name ver cm fm pad fl imgs key spec; do
		case ,$imgs, in *,$1,*) ;; *) continue;; esac
		if [ "$ver" = 1 ]; then got=$(gh fscrypt add_key /mnt "$key" "$spec")
		else got=$(gh fscrypt add_key /mnt "$key"); fi
		[ "$got" = "$spec" ] || bad "$1 $name: add_key says '$got', the host computed $spec"
	done < /in/policies
}
seed=1000
phase() { echo "PHASE $img $1 at $(cut -d' ' -f1 /proc/uptime)s"; }
for img in plain cf; do
	dev=/dev/vda; [ $img = cf ] && dev=/dev/vdc
	phase start
	mount -t f2fs $dev /mnt || { bad "mount $img"; continue; }
	addkeys $img
	mkdir /mnt/unencrypted && gh gen /mnt/unencrypted/file 5000 7 text
	while read -r name ver cm fm pad fl imgs key spec; do
		case ,$imgs, in *,$img,*) ;; *) continue;; esac
		seed=$((seed + 100))
		d=/mnt/$name
		mkdir $d
		flags=; [ "$fl" != - ] && flags=$fl
		gh fscrypt set_policy $d "$spec" $cm $fm $pad $flags || { bad "$img $name: set_policy"; continue; }
		if ! (: > $d/probe) 2>$O/probe.err; then
			echo "UNSUPPORTED $img $name: $(cat $O/probe.err)"
			echo "$img $name" >> $O/unsupported
			rmdir $d || rm -rf $d
			continue
		fi
		rm $d/probe
		cf=0
		if [ $img = cf ]; then gh flags $d +F >/dev/null || bad "$img $name: +F"; cf=1; fi
		fscrypt_populate $d $seed $cf $BIG || bad "$img $name: populate"
		[ $cf = 1 ] && { fscrypt_check_cf $d || bad "$img $name: other spellings"; }
		echo "$name $(gh fscrypt get_policy $d)" >> $O/$img.policies
	done < /in/policies
	cd /; umount /mnt || bad "umount $img"
	phase written
	# the manifest from disk, with every key
	mount -t f2fs $dev /mnt || bad "remount $img"
	addkeys $img
	gh manifest /mnt $O/$img.manifest $O/$img.xattrs $O/$img.info || bad "manifest $img"
	cd /; umount /mnt
	phase manifest
	# the no-key view, and what Linux answers to a create in a no-key dir
	mount -t f2fs $dev /mnt || bad "remount $img"
	gh fscrypt nokey_list /mnt $O/$img.nokey || bad "nokey_list $img"
	for d in /mnt/*; do
		[ "$d" = /mnt/unencrypted ] && continue
		e=$( { : > $d/new-file; } 2>&1) && bad "$img: create in no-key $d worked"
		echo "$e" | grep -q 'Required key not available' ||
			bad "$img: create in no-key $d: '$e', not ENOKEY"
	done
	cd /; umount /mnt
	phase no-key
done
dmesg > $O/dmesg
tar cf - -C $O . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null
exit $rc
GUEST_WRITE
guest write "$TMP/write.sh"
grep '^PHASE' "$TMP/write.console" >&2 || true
if [ -n "$CACHE" ]; then
	mkdir -p "$CACHE"
	cp --sparse=always "${IMG[plain]}" "${IMG[cf]}" "$TMP/write.out" "$TMP/write.console" \
		"$TMP/names" "$CACHE/" && cp tests/compat/fscrypt-tree.sh "$CACHE/"
fi
fi
G=$TMP/write.d
grep '^UNSUPPORTED' "$TMP/write.console" >&2 || true
for i in plain cf; do
	fsck_clean "${IMG[$i]}" || fail "fsck.f2fs after Linux wrote $i"
	[ -s "$G/$i.manifest" ] && [ -s "$G/$i.nokey" ] || fail "guest wrote no manifest for $i"
done
# the harness itself: Linux's view is what fscrypt_populate made
n=$(grep -c $'/victim\tfile' "$G/plain.manifest" || true)
[ "$n" -ge 5 ] || fail "plain.manifest has $n policy trees"
grep -q $'\tENOKEY$' "$G/plain.nokey" || fail "plain.nokey: no ENOKEY file"
cut -f1 "$G/cf.nokey" | grep -q '^v2-xts-p32/[A-Za-z0-9_-]\{180,\}$' ||
	fail "cf.nokey: no long (hashed) no-key name"

# the policies that Linux could not exercise
declare -A UNSUP=()
if [ -f "$G/unsupported" ]; then
	while read -r i n; do UNSUP[$i/$n]=1; done < "$G/unsupported"
fi
# fscrypt_oracle_table kept only what the guest kernel can do: a refusal now is a finding
for k in "${!UNSUP[@]}"; do bad "${k%%/*} ${k#*/}: Linux could not use this policy (UNSUPPORTED above)"; done
covered() { [ -z "${UNSUP[$1/$2]:-}" ]; }
policies_of() { awk -v i="$1" '{ if (("," $7 ",") ~ ("," i ",")) print $1 }' "$TMP/names"; }

# ------------------------------------------------------------------ (b)
V_OPTS=()
[ "$(id -u)" = 0 ] || V_OPTS=(--ignore uid,gid --skip-xattr trusted.)
M=$TMP/mnt
for i in plain cf; do
	step "(b) $i: uf2fs reads Linux's tree with the keys"
	img=${IMG[$i]}
	sum0=$(image_sum "$img")
	rm -rf "$TMP/get-$i"
	if "$UF2FS" get -o "keyfile=$K" "$img" / "$TMP/get-$i" > "$TMP/get-$i.log" 2>&1; then
		$VERIFY --extract "${V_OPTS[@]}" "$G/$i.manifest" "$G/$i.xattrs" "$TMP/get-$i" \
			> "$TMP/cmp-get-$i" 2>&1 || { head -40 "$TMP/cmp-get-$i" >&2; bad "$i: uf2fs get differs"; }
		tail -1 "$TMP/cmp-get-$i"
	else
		tail -20 "$TMP/get-$i.log" >&2; bad "$i: uf2fs get -o keyfile failed"
	fi
	if mount_uf2fs "$img" "$M" "ro,keyfile=$K"; then
		$VERIFY "${V_OPTS[@]}" "$G/$i.manifest" "$G/$i.xattrs" "$M" > "$TMP/cmp-mnt-$i" 2>&1 ||
			{ head -40 "$TMP/cmp-mnt-$i" >&2; bad "$i: the ro,keyfile mount differs"; }
		tail -1 "$TMP/cmp-mnt-$i"
		$FL flags "$G/$i.manifest" "$M" > "$TMP/cmp-flags-$i" 2>&1 ||
			{ head -20 "$TMP/cmp-flags-$i" >&2; bad "$i: encrypt/casefold flags differ"; }
		tail -1 "$TMP/cmp-flags-$i"
		# Linux's "NAME vN CONTENTS FILENAMES padN FLAGS KEYSPEC": each word
		# (the padding as a number; case, _, - and + aside) must be in
		# uf2fs's answer
		while read -r name want; do
			got=$("$UF2FS" fscrypt get_policy "$M/$name" 2>&1 | tr A-Z a-z | tr -d ' _+-') || true
			for w in $want; do
				case $w in -) continue;; pad*) w=${w#pad};; v1|v2) w=${w#v};; esac
				w=$(tr A-Z a-z <<<"$w" | tr -d ' _+-')
				grep -qF -- "$w" <<<"$got" ||
					{ bad "$i $name: uf2fs fscrypt get_policy lacks '$w': $got"; break; }
			done
		done < "$G/$i.policies"
		if [ $i = cf ]; then
			for name in $(policies_of cf); do
				covered cf "$name" || continue
				(fscrypt_check_cf "$M/$name") 2>&1 || bad "cf $name: other spellings through uf2fs"
			done
		fi
		umount_uf2fs "$M" || bad "$i: unmount"
	else
		bad "$i: uf2fs mount -o ro,keyfile failed"
	fi
	[ "$(image_sum "$img")" = "$sum0" ] || bad "$i: a read-only run changed the image"
done

# ------------------------------------------------------------------ (c)
for i in plain cf; do
	step "(c) $i: uf2fs without the keys shows Linux's no-key names"
	img=${IMG[$i]}
	if { "$UF2FS" ls -ldi "$img" / && "$UF2FS" ls -lRi "$img" /; } > "$TMP/ls-$i" 2> "$TMP/ls-$i.err"
	then
		{ $FL ls "$TMP/ls-$i" "$TMP/ls-$i.list" &&
		  $FL diff "$G/$i.nokey" "$TMP/ls-$i.list" > "$TMP/cmp-ls-$i" 2>&1; } ||
			{ head -30 "$TMP/cmp-ls-$i" >&2; bad "$i: uf2fs ls differs from Linux's no-key view"; }
		tail -1 "$TMP/cmp-ls-$i"
	else
		head -20 "$TMP/ls-$i.err" >&2; bad "$i: uf2fs ls without keys failed"
	fi
	if mount_uf2fs "$img" "$M" ro; then
		{ $FL walk "$M" "$TMP/walk-$i" &&
		  $FL diff "$G/$i.nokey" "$TMP/walk-$i" > "$TMP/cmp-walk-$i" 2>&1; } ||
			{ head -30 "$TMP/cmp-walk-$i" >&2; bad "$i: the no-key mount differs from Linux's"; }
		tail -1 "$TMP/cmp-walk-$i"
		umount_uf2fs "$M" || bad "$i: unmount"
	else
		bad "$i: uf2fs mount -o ro without keys failed"
	fi
done

# ------------------------------------------------------------------ (d)
# nokey_of IMG POLICY ENTRY: the no-key path of POLICY/ENTRY, by inode number
nokey_of() {
	local ino
	ino=$(awk -F'\t' -v p="$2/$3" '$1 == p { print $11 }' "$G/$1.manifest")
	[ -n "$ino" ] || return 1
	awk -F'\t' -v n="$ino" '$7 == n { print $1 }' "$G/$1.nokey" | head -1
}
for i in plain cf; do
	step "(d) $i: no-key lookup, unlink and rmdir through a rw mount"
	img=${IMG[$i]}
	: > "$TMP/deleted-$i"
	mount_uf2fs "$img" "$M" rw || { bad "$i: uf2fs mount -o rw without keys"; continue; }
	for name in $(policies_of "$i"); do
		covered "$i" "$name" || continue
		{ v=$(nokey_of "$i" "$name" victim) && vd=$(nokey_of "$i" "$name" victimdir) &&
		  [ -n "$v" ] && [ -n "$vd" ]; } || { bad "$i $name: victim not in Linux's lists"; continue; }
		sz=$(stat -c %s "$M/$v" 2>&1) || { bad "$i $name: stat no-key $v: $sz"; continue; }
		[ "$sz" = 10 ] || bad "$i $name: no-key victim has size $sz, want 10"
		rm "$M/$v" || { bad "$i $name: unlink by no-key name"; continue; }
		[ -e "$M/$v" ] && bad "$i $name: $v still there after unlink"
		rmdir "$M/$vd" || { bad "$i $name: rmdir by no-key name"; continue; }
		[ -e "$M/$vd" ] && bad "$i $name: $vd still there after rmdir"
		e=$( { : > "$M/$name/new-file"; } 2>&1) && bad "$i $name: create in a no-key dir worked"
		grep -q 'Required key not available' <<<"$e" ||
			bad "$i $name: create in a no-key dir: '$e', Linux says ENOKEY"
		printf '%s/victim\n%s/victimdir\n' "$name" "$name" >> "$TMP/deleted-$i"
	done
	umount_uf2fs "$M" || bad "$i: unmount"
	fsck_clean "$img" || bad "$i: fsck.f2fs after no-key deletions"
done

# ------------------------------------------------------------------ (e)
step "(e) Linux reads the tree after uf2fs's no-key deletions"
cat > "$TMP/check.sh" <<'GUEST_CHECK'
rc=0
O=/tmp/out
mkdir -p $O /mnt
for img in plain cf; do
	dev=/dev/vda; [ $img = cf ] && dev=/dev/vdc
	mount -t f2fs $dev /mnt || { echo "GUEST: mount $img"; rc=1; continue; }
	while read -r name ver cm fm pad fl imgs key spec; do
		case ,$imgs, in *,$img,*) ;; *) continue;; esac
		if [ "$ver" = 1 ]; then gh fscrypt add_key /mnt "$key" "$spec" >/dev/null
		else gh fscrypt add_key /mnt "$key" >/dev/null; fi
	done < /in/policies
	gh manifest /mnt $O/$img.manifest $O/$img.xattrs $O/$img.info || { echo "GUEST: manifest"; rc=1; }
	cd /; umount /mnt
done
dmesg > $O/dmesg
tar cf - -C $O . | dd of=/dev/vdb bs=65536 conv=fsync 2>/dev/null
exit $rc
GUEST_CHECK
guest check "$TMP/check.sh"
for i in plain cf; do
	awk -F'\t' 'NR == FNR { del[$1] = 1; next } !($1 in del)' "$TMP/deleted-$i" \
		"$G/$i.manifest" > "$TMP/want-$i.manifest"
	[ -s "$TMP/deleted-$i" ] || bad "$i: nothing was deleted in (d)"
	$VERIFY --ignore dirsize,dirtime,dirnlink "$TMP/want-$i.manifest" "$G/$i.xattrs" \
		--manifest "$TMP/check.d/$i.manifest" "$TMP/check.d/$i.xattrs" > "$TMP/cmp-e-$i" 2>&1 ||
		{ head -30 "$TMP/cmp-e-$i" >&2; bad "$i: Linux's tree after the no-key deletions"; }
	tail -1 "$TMP/cmp-e-$i"
	fsck_clean "${IMG[$i]}" || bad "$i: fsck.f2fs after Linux's last mount"
done

for k in "${!UNSUP[@]}"; do
	echo "NOTE: $k not covered: the guest kernel cannot use this policy (see the console)"
done
step "per policy"
fscrypt_policy_report "$TMP/names" "$TMP"
[ "$fails" = 0 ] || fail "$fails check(s) failed"
pass "fscrypt: Linux-written trees under $(wc -l < "$TMP/names") policies, read by uf2fs with and without keys"
