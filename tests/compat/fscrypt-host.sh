# SPDX-License-Identifier: GPL-2.0
# Host-side (bash) helpers of the fscrypt compat tests; fscrypt-tree.sh is
# also sourced by the guest's busybox sh and must stay POSIX.

# fscrypt_uf2fs_set_policy DIR CONTENTS FILENAMES PAD FLAGS KEYSPEC: `uf2fs
# fscrypt set_policy` on a uf2fs mount, from a policies line's fields.
fscrypt_uf2fs_set_policy() {
	local args=(fscrypt set_policy "--contents=$2" "--filenames=$3" "--padding=$4")
	case $5 in *direct_key*) args+=(--direct-key);; esac
	case $5 in *iv_ino_lblk_64*) args+=(--iv-ino-lblk-64);; esac
	case $5 in *iv_ino_lblk_32*) args+=(--iv-ino-lblk-32);; esac
	"$UF2FS" "${args[@]}" "$6" "$1"
}
