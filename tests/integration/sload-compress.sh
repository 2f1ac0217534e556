#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Compressed files made by `sload.f2fs -c` (lz4 and lzo, cluster sizes 4 to 256
# blocks, min-blocks, extension filters, released blocks), read back through a
# uf2fs mount (including odd-offset reads) and `uf2fs get`, compared with the
# source. The image must stay unchanged and pass fsck.f2fs -f. Then a
# read-write mount changes sload's clusters (not on the released image, which
# is read-only by design); fsck.f2fs -f must stay clean and the files must
# equal the source with the same changes.
#
# Debian's sload.f2fs 1.15 is built without lz4 and lzo, so this uses the one
# that tests/lib/build-f2fs-tools.sh builds from the same source (or
# $SLOAD_F2FS if that one can compress).
#
# sload's cluster rules (fsck/segment.c, f2fs_build_file): a file of at most
# 3452 bytes is inline and never compressed; a full cluster is stored
# compressed (COMPRESS_ADDR, then the compressed blocks) only if it saves at
# least -m blocks (default 1); the last, partial cluster is stored raw.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

need_fuse
need_f2fs_tools
need_uf2fs

SLOAD=
if sload_can_compress "$SLOAD_F2FS"; then
	SLOAD=$SLOAD_F2FS
elif tools=$(f2fs_tools_built) && sload_can_compress "$tools/sload.f2fs"; then
	SLOAD=$tools/sload.f2fs
else
	skip "no sload.f2fs with lz4/lzo (Debian's has none; tests/lib/build-f2fs-tools.sh failed)"
fi
echo "using $SLOAD"

tmpdir_init sload-compress
SRC=$TMP/src
step "generating compressible content"
gen_tree 5 "$SRC" --small --compressible --no-special
# Cluster-boundary sizes for every cluster size used below, a file of zeros,
# an incompressible one, and extension-filter targets.
"$PY" - "$SRC/compress" <<'EOF'
import os, random, sys
d = sys.argv[1]
os.makedirs(d)
r = random.Random(99)
text = b"".join(b"line %d of some quite repetitive text, again and again\n" % i
                for i in range(200000))
def put(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
for L in (2, 3, 4, 6, 8):
    cs = 4096 << L
    for n in (cs - 1, cs, cs + 1, 3 * cs, 3 * cs + 4097):
        put("c%d-%d" % (L, n), text[:n] if n <= len(text) else (text * (n // len(text) + 1))[:n])
put("zeros-4m", bytes(4 << 20))
put("random-1m", r.randbytes(1 << 20))
mixed = bytearray()
for i in range(64):
    mixed += (text[i * 65536:(i + 1) * 65536] if i % 3 else r.randbytes(65536))
put("mixed-4m", bytes(mixed))
put("big-text-9m.txt", (text * 3)[:9 * (1 << 20) + 123])
put("notes.log", text[:300000])
put("image.bin", text[:200000])
EOF

owner_opts=()
[ "$(id -u)" = 0 ] || owner_opts=(--no-owner)

# Changes to sload's compressed files, made through a read-write uf2fs mount and
# on a copy of the source: overwrites inside and across clusters, appends, a
# cut inside a cluster, growth past it, deletions. POSIX sh + python3.
MODIFY='set -e
D=$1
python3 - "$D" <<EOF
import os, sys
d = sys.argv[1]
def put(name, off, data):
    fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT, 0o644)
    os.pwrite(fd, data, off)
    os.close(fd)
text = b"".join(b"changed line %d, repeated\n" % i for i in range(20000))
put("big-text-9m.txt", 5000, text[:3000])
put("big-text-9m.txt", 1048576 - 100, bytes(range(256)) * 40)
put("mixed-4m", 65536 * 5 + 7, text[:200000])
put("zeros-4m", 123456, b"x" * 10)
put("notes.log", 300000, text[:50000])
put("c8-3145728", 1000000, text[:5000])
put("c2-16384", 0, text[:16384])
EOF
truncate -s 1000001 "$D/big-text-9m.txt"
truncate -s 70000 "$D/random-1m"
truncate -s 300000 "$D/random-1m"
truncate -s 2000000 "$D/c6-786432"
rm "$D/c4-196608" "$D/image.bin"'

# alg cluster-log extra-options
CONFIGS="lz4 2
lz4 4
lz4 8
lzo 2
lzo 6
lz4 3 -m 2
lzo 4 -m 3
lz4 2 -x bin
lz4 2 -i txt -i log
lz4 2 -r"
failures=()
n=0
while read -r alg L extra; do
	[ -n "$alg" ] || continue
	n=$((n + 1))
	step "[$n] sload.f2fs -c -a $alg -L $L $extra"
	img=$TMP/img-$n.f2fs
	feat=extra_attr,compression
	# -r (release) marks the files' compressed blocks released, as on a RO image.
	[ "$extra" = "-r" ] && feat=extra_attr,compression,ro
	# shellcheck disable=SC2086
	if ! SLOAD_F2FS=$SLOAD mk_image "$img" 512M "$feat" "$SRC" -P -c -a "$alg" -L "$L" $extra; then
		failures+=("$alg L=$L $extra: image build")
		continue
	fi
	# The point is compressed clusters: make sure there are some.
	ncomp=$(f2fsimg bmap "$img" /compress/mixed-4m | tr ',[]' '\n  ' | grep -c '^ *4294967294 *$' || true)
	nc2=$(f2fsimg bmap "$img" /compress/big-text-9m.txt | tr ',[]' '\n  ' | grep -c '^ *4294967294 *$' || true)
	echo "compressed clusters: mixed-4m $ncomp, big-text-9m.txt $nc2"
	case $extra in
	"-x bin"|"-i txt -i log") [ "$nc2" -gt 0 ] || failures+=("$alg L=$L $extra: nothing compressed");;
	*) [ "$ncomp" -gt 0 ] && [ "$nc2" -gt 0 ] || failures+=("$alg L=$L $extra: nothing compressed");;
	esac
	before=$(image_sum "$img")

	mnt=$TMP/mnt-$n
	if mount_uf2fs "$img" "$mnt" ro; then
		compare_tree "$SRC" "$mnt" --sload --no-root "${owner_opts[@]}" ||
			failures+=("$alg L=$L $extra: mount differs from source")
		"$PY" "$LIB/readcheck.py" "$SRC/compress" "$mnt/compress" --ops 40 --seed "$n" ||
			failures+=("$alg L=$L $extra: odd-offset reads")
		umount_uf2fs "$mnt" || failures+=("$alg L=$L $extra: unmount / daemon exit status")
	else
		failures+=("$alg L=$L $extra: mount")
	fi
	dest=$TMP/get-$n
	run_limited 300 "$UF2FS" get "$img" / "$dest"
	if [ "$RC" -ne 0 ]; then
		printf '%s\n' "$OUT" | tail -10
		failures+=("$alg L=$L $extra: uf2fs get exit $RC")
	elif ! compare_tree "$SRC" "$dest" --sload --no-root "${owner_opts[@]}"; then
		failures+=("$alg L=$L $extra: uf2fs get differs from source")
	fi
	rm -rf "$dest"
	want=$(sha256sum <"$SRC/compress/mixed-4m" | cut -d' ' -f1)
	got=$(timeout 60 "$UF2FS" cat "$img" /compress/mixed-4m | sha256sum | cut -d' ' -f1) || true
	[ "$want" = "$got" ] || failures+=("$alg L=$L $extra: uf2fs cat differs")

	[ "$before" = "$(image_sum "$img")" ] || failures+=("$alg L=$L $extra: the image changed")
	fsck_clean "$img" || failures+=("$alg L=$L $extra: fsck")

	# Then uf2fs changes sload's clusters (a released image is read-only by design).
	if [ "$extra" != "-r" ]; then
		ref=$TMP/ref-$n
		rm -rf "$ref"
		cp -a "$SRC/compress" "$ref"
		if mount_uf2fs "$img" "$mnt" rw; then
			sh -c "$MODIFY" sh "$mnt/compress" || failures+=("$alg L=$L $extra: changes")
			umount_uf2fs "$mnt" || failures+=("$alg L=$L $extra: rw unmount")
			sh -c "$MODIFY" sh "$ref"
			fsck_clean "$img" || failures+=("$alg L=$L $extra: fsck after uf2fs changed it")
			mount_uf2fs "$img" "$mnt" ro &&
				{ compare_tree "$ref" "$mnt/compress" --sload --no-times --no-root \
					"${owner_opts[@]}" ||
				  failures+=("$alg L=$L $extra: changed files differ"); }
			umount_uf2fs "$mnt" || true
		else
			failures+=("$alg L=$L $extra: rw mount")
		fi
		rm -rf "$ref"
	fi
	rm -f "$img"
done <<<"$CONFIGS"

step "summary"
if [ ${#failures[@]} -gt 0 ]; then
	printf 'FAILED: %s\n' "${failures[@]}"
	exit 1
fi
pass "$n compression configurations"
