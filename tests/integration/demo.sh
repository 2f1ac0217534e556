#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo` must keep working: run tests/demo.sh as the Makefile does.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need_fuse
need_f2fs_tools
need_uf2fs
exec "$TOP/tests/demo.sh"
