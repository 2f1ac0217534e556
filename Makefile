# uf2fs build. GNU make.
#
#   make                 build/uf2fs (the command and FUSE daemon) and build/libuf2fs.a
#   make check           every test layer; ends with "N passed, N failed"
#   make demo            make an image, fill it, mount, use, show stats, unmount, fsck
#   make bench           side-by-side throughput ratios (never pass/fail)
#   make SAN=address,undefined check    sanitizer build in build-san/
#   make SAN=thread check
#   make install         PREFIX=/usr/local; also installs /sbin/mount.fuse.uf2fs and
#                        /sbin/umount.fuse.uf2fs (umount(8) then waits for the image)
#
# Missing Debian packages are installed with apt-get when running as root.

CC      ?= cc
NM      ?= nm
OBJCOPY ?= objcopy
PREFIX  ?= /usr/local
SAN     ?=
V       ?= 0
comma   := ,

ifeq ($(SAN),)
BUILD   := build
SANFLAGS :=
else
BUILD   := build-san-$(subst $(comma),-,$(SAN))
SANFLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

PKGS    := fuse3 liburing liblz4 libzstd lzo2 zlib cmocka libcrypto libnbd blkid
# Debian packages: build deps, then tools used by tests, demo and bench.
DEB_BUILD := libfuse3-dev fuse3 liburing-dev liblz4-dev libzstd-dev liblzo2-dev zlib1g-dev \
	libcmocka-dev pkg-config libunistring-dev libssl-dev android-libsparse-dev \
	libnbd-dev qemu-utils libblkid-dev python3 binutils
DEB_TOOLS := f2fs-tools fio fuse2fs e2fsprogs qemu-system-x86 linux-image-amd64 \
	busybox-static cpio zstd xz-utils attr acl fsverity android-sdk-libsparse-utils strace \
	python3-matplotlib quota linux-headers-amd64 linux-source-6.1 nbdkit gdisk fdisk

.DEFAULT_GOAL := all

# Install what is missing, once per build dir (stamp), only as root.
DEPS_STAMP := $(BUILD)/.deps-ok
$(DEPS_STAMP):
	@mkdir -p $(BUILD)
	@missing=""; for p in $(DEB_BUILD) $(DEB_TOOLS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "uf2fs: installing missing Debian packages:$$missing"; \
			(apt-get update -qq || true) && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing \
				>$(BUILD)/apt.log 2>&1 || { cat $(BUILD)/apt.log; exit 1; }; \
		else \
			echo "uf2fs: missing Debian packages:$$missing (run as root to install them)"; \
		fi; \
	fi
	@echo '#include <unicase.h>' | $(CC) -E -x c - >/dev/null 2>&1 || { \
		echo "uf2fs: <unicase.h> not found: install GNU libunistring (Debian: libunistring-dev)"; \
		exit 1; }
	@touch $@

WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wno-missing-field-initializers
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(SANFLAGS) -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
	-pthread -Iinclude -Ilib $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libunistring (casefolding) and Debian's libsparse (Android sparse images, installed
# under android/ with no pkg-config file) are linked by name.
SPARSE_LIBDIR := /usr/lib/$(shell $(CC) -dumpmachine 2>/dev/null)/android
LIBS    = $(shell pkg-config --libs fuse3 liburing liblz4 libzstd lzo2 zlib libcrypto libnbd blkid 2>/dev/null) \
	-lunistring -L$(SPARSE_LIBDIR) -Wl,-rpath,$(SPARSE_LIBDIR) -lsparse -pthread -lm
LDFLAGS += $(SANFLAGS)

LIB_SRC := $(wildcard lib/*.c lib/*/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
# The f2fs core is built once per block size (docs/decisions.md, "16 KiB blocks"):
# 4 KiB objects as they are (public functions renamed b4k_uf2fs_*), 16 KiB objects
# with every global renamed b16k_*, and a generated dispatch.c picking the core
# that owns each handle. lib/dev, lib/fscrypt and lib/fsverity are shared.
CORE_SRC := $(wildcard lib/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
SHARED_OBJ := $(filter-out $(CORE_OBJ),$(LIB_OBJ))
CORE16_OBJ := $(CORE_SRC:lib/%.c=$(BUILD)/v16k/%.o)
CLI_SRC := $(wildcard cli/*.c) $(wildcard fuse/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(wildcard tests/fuzz/*.c)
FUZZ_DEFS := -DUF2FS_FUZZ_BASE_DEFAULT='"$(CURDIR)/tests/fuzz/base.img.zst"'

ifeq ($(V),0)
Q := @
else
Q :=
endif

all: $(BUILD)/uf2fs

$(BUILD)/%.o: %.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 0 ] && echo "  CC      $<" || true
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/v16k/%.o: lib/%.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 0 ] && echo "  CC16K   $<" || true
	$(Q)$(CC) $(ALL_CFLAGS) -DF2FS_BLKSIZE_BITS=14 -MMD -MP -c $< -o $@

$(BUILD)/core4k.syms: $(CORE_OBJ)
	$(Q)$(NM) -g --defined-only $^ | awk 'NF == 3 { print $$3 }' | sort -u >$@

$(BUILD)/v16k.syms: $(CORE16_OBJ)
	$(Q)$(NM) -g --defined-only $^ | awk 'NF == 3 { print $$3 " b16k_" $$3 }' | sort -u >$@

$(BUILD)/dispatch.c: include/uf2fs/uf2fs.h lib/gen_dispatch.py $(BUILD)/core4k.syms
	$(Q)python3 lib/gen_dispatch.py $< $(BUILD)/core4k.syms $@ $(BUILD)/v4k.syms

$(BUILD)/v4k.syms: $(BUILD)/dispatch.c
	@test -f $@

$(BUILD)/dispatch.o: $(BUILD)/dispatch.c
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/core4k.o: $(CORE_OBJ) $(BUILD)/v4k.syms
	$(Q)$(LD) -r -o $@.tmp $(CORE_OBJ) && $(OBJCOPY) --redefine-syms=$(BUILD)/v4k.syms $@.tmp $@
	$(Q)rm -f $@.tmp

$(BUILD)/core16k.o: $(CORE16_OBJ) $(BUILD)/v16k.syms
	$(Q)$(LD) -r -o $@.tmp $(CORE16_OBJ) && \
		$(OBJCOPY) --redefine-syms=$(BUILD)/v16k.syms $@.tmp $@
	$(Q)rm -f $@.tmp

$(BUILD)/libuf2fs.a: $(BUILD)/core4k.o $(BUILD)/core16k.o $(BUILD)/dispatch.o $(SHARED_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/uf2fs: $(CLI_OBJ) $(BUILD)/libuf2fs.a
	@[ "$(V)" = 0 ] && echo "  LD      $@" || true
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libuf2fs.a $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libuf2fs.a $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libuf2fs.a $(LIBS) $(shell pkg-config --libs cmocka)

# Replays the fuzz corpus with a plain main(), so no clang is needed.
$(BUILD)/tests/fuzz_replay: $(FUZZ_SRC) $(BUILD)/libuf2fs.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -DUF2FS_FUZZ_REPLAY $(FUZZ_DEFS) -o $@ $(FUZZ_SRC) $(BUILD)/libuf2fs.a $(LIBS)

# libFuzzer build (clang): make fuzz, then build/fuzz-image tests/fuzz/corpus
fuzz: $(DEPS_STAMP)
	@mkdir -p $(BUILD)
	clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE $(FUZZ_DEFS) \
		-D_FILE_OFFSET_BITS=64 -Iinclude -Ilib $(shell pkg-config --cflags $(PKGS)) \
		-o $(BUILD)/fuzz-image $(FUZZ_SRC) $(LIB_SRC) $(LIBS)

tests: $(UNIT_BIN) $(if $(FUZZ_SRC),$(BUILD)/tests/fuzz_replay)

check: all tests
	@BUILD=$(BUILD) SAN="$(SAN)" tests/run.sh $(TESTS)

# The sanitizer runs that CI does: ASan+UBSan over the library-level tests
# (unit, fuzz replay, the power-cut runner), TSan over the threaded stress
# and over FUSE daemons: mixed load (fuse-rx: the receive discipline), the
# read-write suite, cached directories, the flusher, writeback_cache.
check-san:
	$(MAKE) SAN=address,undefined check TESTS="unit fuzz"

check-tsan:
	$(MAKE) SAN=thread all tests
	@TEST_FILTER='threads|integration/(fuse-rx|rw-fuse|dir-cache|flusher|wbc-semantics|nbd)\.sh' \
		BUILD=build-san-thread \
		TSAN_OPTIONS=halt_on_error=1 tests/run.sh unit integration

# Long runs: the random exerciser with many operations, and every power-cut point.
stress: all tests
	@for t in tests/stress/*.sh; do [ -x "$$t" ] && BUILD=$(BUILD) "$$t" || exit 1; done

powerloss: all tests
	@BUILD=$(BUILD) tests/powerloss/run-exhaustive.sh

demo: all
	@BUILD=$(BUILD) tests/demo.sh

bench: all
	@BUILD=$(BUILD) bench/run.sh

# The quota recount at mount on a 1M-inode image (about 5 minutes): figures only.
bench-quota-recount: all
	@BUILD=$(BUILD) bench/quota-recount.sh

install: all
	install -D -m 755 $(BUILD)/uf2fs $(DESTDIR)$(PREFIX)/bin/uf2fs
	install -d $(DESTDIR)/sbin
	ln -sf $(PREFIX)/bin/uf2fs $(DESTDIR)/sbin/mount.fuse.uf2fs
	ln -sf $(PREFIX)/bin/uf2fs $(DESTDIR)/sbin/umount.fuse.uf2fs

clean:
	rm -rf build build-san-*

format-check:
	@! grep -rn --include='*.[ch]' -E '.{101,}' lib fuse cli include tests | grep -v '^\S*:\S*:.*\t' || true

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(CORE16_OBJ:.o=.d)

.PHONY: all check check-san check-tsan stress powerloss demo bench install clean tests fuzz \
	format-check bench-quota-recount
