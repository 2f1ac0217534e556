# tests/compat/fscrypt-tree.sh — the tree the fscrypt compat tests write into
# each encrypted directory, the same in the guest (busybox sh, Linux writes)
# and on the host (bash, through a uf2fs FUSE mount). Sourced, not run.
#
#   fscrypt_populate DIR SEED CF BIG
#     DIR   an empty directory that already has its policy (and +F if CF=1)
#     SEED  a number; the content depends only on it
#     CF    1: the directory is casefolded: also mixed-case names
#     BIG   1: also a 300-entry directory (multi-block dentries) and a 3 MiB file
# Needs `gh` (tests/compat/guest-helper.c) on the PATH.
#
# What it makes: files of 0, 1, 4095, 4096 bytes and a 70000-byte file with a
# 60 KiB hole; names of 1, 15, 16, 17, 31, 32, 33, 200 and 255 bytes (past 149
# bytes of ciphertext a no-key name is a hash), UTF-8 names; symlinks with a
# short and a 2000-byte target; nested subdirectories, a hard link; and
# victim / victimdir, which the tests delete through no-key names.
fscrypt_populate() {
	_d=$1 _s=$2 _cf=$3 _big=$4
	_l200=L$(printf '%0199d' 0 | tr 0 l)
	_l255=$(printf '%0255d' 0 | tr 0 m)
	_t2000=$(printf '%01990d' 0 | tr 0 t)/target
	: > "$_d/empty" &&
	gh gen "$_d/One.txt" 1 "$_s" rand &&
	gh gen "$_d/f4095" 4095 $((_s + 1)) rand &&
	gh gen "$_d/f4096" 4096 $((_s + 2)) text &&
	gh gen "$_d/holes" 4096 $((_s + 3)) rand 0 &&
	gh gen "$_d/holes" 4000 $((_s + 4)) rand 66000 &&
	gh gen "$_d/a" 3 $((_s + 5)) text &&
	gh gen "$_d/fifteen-bytes-1" 15 $((_s + 6)) text &&
	gh gen "$_d/sixteen-bytes-12" 16 $((_s + 7)) text &&
	gh gen "$_d/seventeen-bytes-1" 17 $((_s + 8)) text &&
	gh gen "$_d/thirty-one-bytes-0123456789abcd" 31 $((_s + 9)) text &&
	gh gen "$_d/thirty-two-bytes-0123456789abcde" 32 $((_s + 10)) text &&
	gh gen "$_d/thirty-three-bytes-0123456789abcd" 33 $((_s + 11)) text &&
	gh gen "$_d/$_l200" 100 $((_s + 12)) text &&
	gh gen "$_d/$_l255" 8191 $((_s + 13)) rand &&
	gh gen "$_d/ünïcödé-名前-ファイル.txt" 500 $((_s + 14)) text &&
	gh gen "$_d/Ελληνικά" 7 $((_s + 15)) text &&
	ln -s One.txt "$_d/sym-short" &&
	ln -s "$_t2000" "$_d/sym-long" &&
	ln -s "ünï/名前" "$_d/sym-utf8" &&
	mkdir "$_d/sub" "$_d/sub/deeper" "$_d/emptydir" "$_d/victimdir" &&
	gh gen "$_d/sub/inner" 5000 $((_s + 16)) text &&
	gh gen "$_d/sub/deeper/leaf" 1 $((_s + 17)) rand &&
	ln "$_d/One.txt" "$_d/sub/link-to-one" &&
	gh gen "$_d/victim" 10 $((_s + 18)) text || return 1
	if [ "$_cf" = 1 ]; then
		gh gen "$_d/MixedCase.TXT" 12 $((_s + 19)) text &&
		gh gen "$_d/Straße" 13 $((_s + 20)) text || return 1
	fi
	if [ "$_big" = 1 ]; then
		mkdir "$_d/many" && gh mkfiles "$_d/many" 300 "$_s" &&
		gh gen "$_d/big" 3145728 $((_s + 21)) rand || return 1
	fi
	return 0
}

# fscrypt_check_cf DIR: in a casefolded DIR, names answer to other spellings.
fscrypt_check_cf() {
	cmp "$1/MixedCase.TXT" "$1/mixedcase.txt" && cmp "$1/Straße" "$1/STRASSE" &&
		cmp "$1/sub/inner" "$1/SUB/INNER"
}

# fscrypt_policy_table BIG: "name version contents filenames pad flags images"
# lines; images: plain (mkfs -O encrypt) and/or cf (-O encrypt,casefold -C
# utf8; v2 only: Linux derives a casefolded directory's dirhash key by HKDF).
# Every mode pair, every padding, DIRECT_KEY and both IV_INO_LBLK flags, v1 and
# v2; BIG=1 adds more mode x padding combinations.
fscrypt_policy_table() {
	cat <<'TABLE'
v1-xts-p32	1	AES-256-XTS	AES-256-CTS	32	-	plain
v1-xts-p4	1	AES-256-XTS	AES-256-CTS	4	-	plain
v1-cbc-p16	1	AES-128-CBC	AES-128-CTS	16	-	plain
v1-adi-p8	1	Adiantum	Adiantum	8	-	plain
v1-adi-dk-p32	1	Adiantum	Adiantum	32	direct_key	plain
v2-xts-p32	2	AES-256-XTS	AES-256-CTS	32	-	plain,cf
v2-xts-p8	2	AES-256-XTS	AES-256-CTS	8	-	plain
v2-hctr2-p16	2	AES-256-XTS	AES-256-HCTR2	16	-	plain,cf
v2-cbc-p4	2	AES-128-CBC	AES-128-CTS	4	-	plain,cf
v2-adi-p16	2	Adiantum	Adiantum	16	-	plain,cf
v2-adi-dk-p32	2	Adiantum	Adiantum	32	direct_key	plain,cf
v2-lblk64-p16	2	AES-256-XTS	AES-256-CTS	16	iv_ino_lblk_64	plain,cf
v2-lblk32-p32	2	AES-256-XTS	AES-256-CTS	32	iv_ino_lblk_32	plain,cf
TABLE
	[ "${1:-0}" = 1 ] && cat <<'TABLE'
v1-xts-p8	1	AES-256-XTS	AES-256-CTS	8	-	plain
v1-cbc-p32	1	AES-128-CBC	AES-128-CTS	32	-	plain
v1-adi-dk-p4	1	Adiantum	Adiantum	4	direct_key	plain
v2-xts-p4	2	AES-256-XTS	AES-256-CTS	4	-	plain,cf
v2-cbc-p32	2	AES-128-CBC	AES-128-CTS	32	-	plain,cf
v2-adi-p4	2	Adiantum	Adiantum	4	-	plain,cf
v2-lblk64-p4	2	AES-256-XTS	AES-256-CTS	4	iv_ino_lblk_64	plain,cf
v2-lblk32-p8	2	AES-256-XTS	AES-256-CTS	8	iv_ino_lblk_32	cf
TABLE
	return 0
}

# The guest's crypto for fscrypt: XTS, CTS, ESSIV (AES-128-CBC), Adiantum
# (XChaCha12, NH-Poly1305), HKDF-SHA512; AES and CBC are built in.
FSCRYPT_QEMU_MODULES="ecb xts cts essiv sha512_generic hmac libchacha chacha_generic
	libpoly1305 poly1305_generic nhpoly1305 adiantum"

# fscrypt_guest_hctr2 KERNEL: the guest kernel has hctr2(aes), built in or as
# a module of its own.
fscrypt_guest_hctr2() {
	modinfo -k "$1" -F filename hctr2 >/dev/null 2>&1 ||
		grep -qx 'CONFIG_CRYPTO_HCTR2=y' "/boot/config-$1" 2>/dev/null
}

# fscrypt_hctr2_modules KERNEL: print the paths of xctr.ko, polyval-generic.ko
# and hctr2.ko built for KERNEL, in load order, or say why not on stderr and
# return 1. Debian's 6.1 leaves CONFIG_CRYPTO_HCTR2 unset (so Linux accepts an
# HCTR2 policy and then fails every create under it with ENOPKG); the three
# modules are Linux's own crypto/{xctr,polyval-generic,hctr2}.c, taken from
# Debian's linux-source package of the same kernel and built out of tree
# against its linux-headers package, so the oracle is still stock Linux code.
# The guest loads them unsigned (CONFIG_MODULE_SIG_FORCE is unset; the kernel
# only marks itself tainted). Built once per kernel into compat-cache.
fscrypt_hctr2_modules() {
	_k=$1
	_dir=$(_qemu_build_dir)/compat-cache/hctr2-$_k
	_v=$(echo "$_k" | cut -d. -f1,2)
	_src=/usr/src/linux-source-$_v.tar.xz
	if [ ! -s "$_dir/hctr2.ko" ]; then
		[ -e "/lib/modules/$_k/build/Makefile" ] ||
			{ echo "no linux-headers-$_k (/lib/modules/$_k/build)" >&2; return 1; }
		[ -s "$_src" ] || { echo "no $_src (Debian: linux-source-$_v)" >&2; return 1; }
		_sv=$(dpkg-query -W -f='${Version}' "linux-source-$_v" 2>/dev/null)
		_kv=$(dpkg-query -W -f='${Version}' "linux-image-$_k" 2>/dev/null)
		[ "$_sv" = "$_kv" ] ||
			echo "NOTE: linux-source $_sv builds hctr2 for kernel $_kv" >&2
		_t=$_dir.tmp.$$
		rm -rf "$_t" && mkdir -p "$_t" || return 1
		tar -xJf "$_src" -C "$_t" --strip-components=2 --wildcards \
			'*/crypto/xctr.c' '*/crypto/polyval-generic.c' '*/crypto/hctr2.c' ||
			{ echo "cannot extract crypto/*.c from $_src" >&2; return 1; }
		echo 'obj-m := xctr.o polyval-generic.o hctr2.o' > "$_t/Kbuild"
		make -s -C "/lib/modules/$_k/build" M="$_t" modules > "$_t/build.log" 2>&1 ||
			{ tail -20 "$_t/build.log" >&2; echo "hctr2 module build failed" >&2
			  return 1; }
		# a parallel test may have built it first: keep whichever landed
		mv -T "$_t" "$_dir" 2>/dev/null || rm -rf "$_t"
	fi
	for _m in xctr polyval-generic hctr2; do echo "$_dir/$_m.ko"; done
}

# fscrypt_oracle_table BIG: fscrypt_policy_table less what the guest kernel
# cannot check (each left out is named on stderr as "NOTE: ... not covered"),
# and sets QEMU_MODULES for the guest's crypto. FSCRYPT_DMESG_SKIP is a grep
# -E pattern for kernel messages of modes left out ("^$" when none is).
fscrypt_oracle_table() {
	local k mods
	k=$(qemu_kernel) || return 1
	QEMU_MODULES="${QEMU_MODULES:-crc32_generic crc32c_generic libcrc32c lz4_compress
		lz4hc_compress zstd_compress quota_tree quota_v2 f2fs virtio_pci virtio_blk}
		$FSCRYPT_QEMU_MODULES"
	FSCRYPT_DMESG_SKIP='^$'
	if fscrypt_guest_hctr2 "$k"; then
		QEMU_MODULES="$QEMU_MODULES hctr2"
		fscrypt_policy_table "$1"
	elif mods=$(fscrypt_hctr2_modules "$k"); then
		QEMU_MODULES="$QEMU_MODULES $(echo $mods)"
		fscrypt_policy_table "$1"
	else
		FSCRYPT_DMESG_SKIP=hctr2
		fscrypt_policy_table "$1" | awk '$4 == "AES-256-HCTR2" || $3 == "AES-256-HCTR2" {
			print "NOTE: " $1 " not covered: the guest kernel has no hctr2(aes)" > "/dev/stderr"
			next } { print }'
	fi
	export QEMU_MODULES FSCRYPT_DMESG_SKIP
}

# fscrypt_policy_report NAMES DIR: one line per image and policy, "POLICY
# IMG NAME: ok" or "... FAIL: N finding(s), first: ...", from the comparison
# outputs DIR/cmp-*-IMG (lines "NAME/path: ..." or "NAME: ...") and the
# failure log DIR/bad.log (lines naming "IMG NAME:"); its "IMG: ..." lines,
# failures of a whole image, come first as "IMAGE IMG: ...".
fscrypt_policy_report() {
	local names=$1 dir=$2 i name imgs n first f c kinds
	for i in plain cf; do
		# image-wide failures (each also shows in the policies' findings)
		if [ -f "$dir/bad.log" ]; then
			grep "^$i: " "$dir/bad.log" | sed 's/^/IMAGE /' || true
		fi

		while read -r name _ _ _ _ _ imgs; do
			case ,$imgs, in *,$i,*) ;; *) continue;; esac
			f=$(mktemp)
			for c in "$dir"/cmp-*-"$i" "$dir/bad.log"; do
				[ -f "$c" ] || continue
				grep -e "^$name/" -e "^$name:" -e "$i $name:" "$c" || true
			done > "$f"
			n=$(wc -l < "$f")
			# kinds: the word after the path ("size", "open", "missing"...)
			kinds=$(awk '{ k = $2; sub(/:$/, "", k); c[k]++ }
				END { for (k in c) printf "%s%s x%d", s++ ? ", " : "", k, c[k] }' "$f")
			first=$(head -1 "$f" | cut -c1-160)
			rm -f "$f"
			if [ "$n" = 0 ]; then
				echo "POLICY $i $name: ok"
			else
				echo "POLICY $i $name: FAIL: $n finding(s) ($kinds), first: $first"
			fi
		done < "$names"
	done
}
