# SPDX-License-Identifier: MIT
# sdswarm: one non-recursive Makefile. `make`, `make test`, `make bench`,
# `make run`, `make install PREFIX=...`. V=1 for verbose, WERROR=0 to relax,
# SANITIZE=address for ASan+UBSan (make test uses it by default),
# SANITIZE=thread for ThreadSanitizer, SANITIZE=fuzz (clang) for libFuzzer.
# B=DIR builds under DIR (default build/; each SANITIZE in its own folder).

PREFIX ?= /usr/local
DESTDIR ?=
WERROR ?= 1
SANITIZE ?=
CC ?= cc
PKG_CONFIG ?= pkg-config
CONFIG ?= configs/default.conf

# B: the build root; each SANITIZE build has its own folder under it (O).
B ?= build
ifeq ($(SANITIZE),)
O ?= $(B)
else
O ?= $(B)/$(SANITIZE)
endif
# Where `make SANITIZE=x` puts its build, for the rules that use several.
out = $(abspath $(B))$(if $(1),/$(1))

ifeq ($(V),1)
Q :=
say :=
else
Q := @
say = @printf '  %-6s %s\n' $(1) $(2);
endif

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wvla -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wundef -Wwrite-strings -Wpointer-arith \
	-Wimplicit-fallthrough -fno-common
ifeq ($(WERROR),1)
WARN += -Werror
endif
BASE_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
	-MMD -MP -I. -Icommon -Inumbering -Itarget -fPIC
ifeq ($(SANITIZE),address)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
endif
# ThreadSanitizer with clang too: gcc 12 under -fsanitize=thread warns
# falsely (-Wnonnull on posix_memalign()'s buffer).
ifeq ($(SANITIZE),thread)
ifeq ($(origin CC),default)
CC := clang
endif
SAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
endif
# libFuzzer needs clang: every object gets the fuzzer's coverage hooks, only
# the harnesses link its main() (tests/fuzz/fuzz.mk).
ifeq ($(SANITIZE),fuzz)
ifeq ($(origin CC),default)
CC := clang
endif
SAN_FLAGS := -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer
endif
# A shared library names every library it needs (-z defs), except under
# clang's sanitizers, whose runtime only an executable links.
ifneq ($(filter thread fuzz,$(SANITIZE)),)
SO_DEFS :=
else
SO_DEFS := -Wl,-z,defs
endif
ALL_CFLAGS = $(BASE_CFLAGS) $(SAN_FLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SAN_FLAGS) $(LDFLAGS)

# pkg-config is asked once per set of libraries (memoised), only for the
# libraries a component uses; `check-deps`, which every object waits on,
# names a missing one (run scripts/install-deps) instead of letting the
# compiler fail on its header.
pc_memo = $(if $(filter undefined,$(origin pc_$(1)_$(2))),$(eval pc_$(1)_$(2) := \
	$(shell $(PKG_CONFIG) --$(1) $(3) 2>/dev/null)))$(pc_$(1)_$(2))
pc_cflags = $(call pc_memo,cflags,$(subst $(space),_,$(strip $(1))),$(1))
pc_libs = $(call pc_memo,libs,$(subst $(space),_,$(strip $(1))),$(1))
empty :=
space := $(empty) $(empty)

# --- the version: `git describe` in a repository, else VERSION -----------
# Only common/cli.c sees it: a new commit rebuilds one object, not all.
VERSION := 0.1.0
SDSWARM_VERSION := $(shell git describe --always --dirty 2>/dev/null || echo $(VERSION))
# The full commit the build was made from (benchmark JSON records it); empty
# outside a repository.
SDSWARM_COMMIT := $(shell git rev-parse --verify -q HEAD 2>/dev/null)

# --- common/: libsdcli, what every tool shares ----------------------------
CLI_SRCS := $(sort $(wildcard common/*.c))
CLI_OBJS := $(CLI_SRCS:%.c=$(O)/obj/%.o)
LIBSDCLI := $(O)/lib/libsdcli.a

# --- numbering/: libsdnum ------------------------------------------------
NUM_TOOL := numbering/sdnum-tool.c
NUM_SRCS := $(filter-out $(NUM_TOOL),$(sort $(wildcard numbering/*.c)))
NUM_OBJS := $(NUM_SRCS:%.c=$(O)/obj/%.o)
LIBSDNUM := $(O)/lib/libsdnum.a
LIBSDNUM_SO := $(O)/lib/libsdnum.so.0

# --- target/: libsdtarget and the daemon --------------------------------
TARGET_PKGS := $(shell cat target/pkgs 2>/dev/null)
TARGET_MAINS := target/sdswarmd.c target/sdswarm.c
TARGET_SRCS := $(filter-out $(TARGET_MAINS),$(sort $(shell find target -name '*.c' 2>/dev/null)))
TARGET_OBJS := $(TARGET_SRCS:%.c=$(O)/obj/%.o)
LIBSDTARGET := $(O)/lib/libsdtarget.a

# --- bench/ ---------------------------------------------------------------
BENCH_PKGS := $(shell cat bench/pkgs 2>/dev/null)
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_OBJS := $(BENCH_SRCS:%.c=$(O)/obj/%.o)

# --- tests/ ---------------------------------------------------------------
TEST_PKGS := cmocka libiscsi
ALL_PKGS = $(sort $(TARGET_PKGS) $(BENCH_PKGS) $(TEST_PKGS))
UNIT_SRCS := $(sort $(wildcard tests/unit/test-*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(O)/tests/unit/%)
TESTLIB_SRCS := $(sort $(wildcard tests/lib/*.c))
TESTLIB_OBJS := $(TESTLIB_SRCS:%.c=$(O)/obj/%.o)

PROGS := $(O)/bin/sdnum
ifneq ($(wildcard target/sdswarmd.c),)
PROGS += $(O)/bin/sdswarmd
endif
ifneq ($(wildcard target/sdswarm.c),)
PROGS += $(O)/bin/sdswarm
endif
ifneq ($(BENCH_SRCS),)
PROGS += $(O)/bin/sdswarm-bench
endif

LIBS_ALL := $(LIBSDCLI) $(LIBSDNUM)
ifneq ($(TARGET_SRCS),)
LIBS_ALL := $(LIBSDTARGET) $(LIBSDCLI) $(LIBSDNUM)
endif

.SECONDARY:
.PHONY: FORCE all deps check-deps test test-build test-vm bench run install clean \
	format format-check sd-module tsan-build
all: $(PROGS) $(LIBSDNUM) $(LIBSDNUM_SO)

deps:
	$(Q)scripts/install-deps all

# Every library pkg-config must know, checked once before anything compiles.
check-deps:
	@missing=; for p in $(ALL_PKGS); do \
		$(PKG_CONFIG) --exists $$p || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "make: pkg-config does not know:$$missing (run scripts/install-deps)" >&2; \
		exit 1; fi

# The version file changes only when the version does, so cli.o is rebuilt
# only then.
$(O)/version: FORCE
	@mkdir -p $(@D)
	@echo '$(SDSWARM_VERSION) $(SDSWARM_COMMIT)' | cmp -s - $@ || \
		echo '$(SDSWARM_VERSION) $(SDSWARM_COMMIT)' > $@

# Object rules: each component adds its pkg-config cflags.
$(O)/obj/common/%.o: common/%.c $(O)/version | check-deps
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -DSDSWARM_VERSION='"$(SDSWARM_VERSION)"' \
		-DSDSWARM_COMMIT='"$(SDSWARM_COMMIT)"' -c -o $@ $<

$(O)/obj/numbering/%.o: numbering/%.c | check-deps
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(O)/obj/target/%.o: target/%.c | check-deps
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(call pc_cflags,$(TARGET_PKGS)) -c -o $@ $<

$(O)/obj/bench/%.o: bench/%.c | check-deps
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(call pc_cflags,$(BENCH_PKGS) $(TARGET_PKGS)) -c -o $@ $<

$(O)/obj/tests/%.o: tests/%.c | check-deps
	$(call say,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib $(call pc_cflags,$(TEST_PKGS) $(TARGET_PKGS)) -c -o $@ $<

$(LIBSDNUM): $(NUM_OBJS)
	$(call say,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBSDNUM_SO): $(NUM_OBJS)
	$(call say,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libsdnum.so.0 \
		-Wl,--version-script=numbering/libsdnum.map $(SO_DEFS) \
		$(ALL_LDFLAGS) -o $@ $(NUM_OBJS)

$(LIBSDNUM_SO): numbering/libsdnum.map

$(LIBSDCLI): $(CLI_OBJS)
	$(call say,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBSDTARGET): $(TARGET_OBJS)
	$(call say,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/bin/sdnum: $(O)/obj/numbering/sdnum-tool.o $(LIBSDCLI) $(LIBSDNUM)
	$(call say,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^

$(O)/bin/sdswarmd: $(O)/obj/target/sdswarmd.o $(LIBS_ALL)
	$(call say,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call pc_libs,$(TARGET_PKGS)) -lpthread -lm

$(O)/bin/sdswarm: $(O)/obj/target/sdswarm.o $(LIBS_ALL)
	$(call say,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call pc_libs,$(TARGET_PKGS)) -lpthread -lm

$(O)/bin/sdswarm-bench: $(BENCH_OBJS) $(LIBS_ALL)
	$(call say,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call pc_libs,$(BENCH_PKGS) $(TARGET_PKGS)) -lpthread -lm

# test-sdnum-* need only libsdnum, so numbering tests never wait on target/.
$(O)/tests/unit/test-sdnum-%: $(O)/obj/tests/unit/test-sdnum-%.o $(LIBSDNUM)
	$(call say,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call pc_libs,$(TEST_PKGS)) -lpthread -lm

$(O)/tests/unit/%: $(O)/obj/tests/unit/%.o $(TESTLIB_OBJS) $(LIBS_ALL)
	$(call say,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call pc_libs,$(TEST_PKGS) $(TARGET_PKGS)) -lpthread -lm

# --- tests ----------------------------------------------------------------
# `make test`: install what is missing, build everything under ASan+UBSan in
# $(B)/address, build the plain programs too (benchmark smokes use them),
# the fuzz harnesses ($(B)/fuzz, clang) and the ThreadSanitizer build of
# the threaded tests ($(B)/thread), then run every test through
# tests/run.sh.
# The four builds use every core unless the caller gave -j itself (its
# jobserver then applies); the tests run one at a time either way.
TEST_JOBS = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))
test:
	$(Q)scripts/install-deps test
	$(Q)$(MAKE) --no-print-directory $(TEST_JOBS) all
	$(Q)$(MAKE) --no-print-directory $(TEST_JOBS) SANITIZE=address test-build
	$(Q)$(MAKE) --no-print-directory $(TEST_JOBS) SANITIZE=fuzz fuzz-build
	$(Q)$(MAKE) --no-print-directory $(TEST_JOBS) SANITIZE=thread tsan-build
	$(Q)SDSWARM_BIN=$(call out,address)/bin SDSWARM_PLAIN_BIN=$(call out)/bin \
		SDSWARM_UNIT=$(call out,address)/tests/unit \
		SDSWARM_FUZZ=$(call out,fuzz)/fuzz \
		SDSWARM_TSAN=$(call out,thread) tests/run.sh

test-build: all $(UNIT_BINS)

# The multi-threaded tests under ThreadSanitizer (build/thread):
# tests/integration/tsan.sh runs them.
TSAN_UNITS := test-store-mem test-store-file test-scsi-pr test-scsi-sbc \
	test-iscsi-libiscsi test-fusefe
ifeq ($(SANITIZE),thread)
tsan-build: $(O)/bin/sdswarmd $(O)/bin/sdswarm \
	$(TSAN_UNITS:%=$(O)/tests/unit/%)
else
tsan-build:
	$(Q)$(MAKE) --no-print-directory SANITIZE=thread tsan-build
endif

test-vm:
	$(Q)scripts/install-deps vm
	$(Q)$(MAKE) --no-print-directory all
	$(Q)testhost/sdswarm-testhost run all

# sdswarm's patched sd_mod for a real Debian 12 test host's kernel (default:
# the running one) into build/sd-module/KVER/ (man/sd_mod-sdswarm.4).
KVER ?= $(shell uname -r)
sd-module:
	$(Q)testhost/sdswarm-testhost sd-module --kver $(KVER)

# --- bench and run --------------------------------------------------------
bench:
	$(Q)scripts/install-deps bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bench/run $(O)/bin

run:
	$(Q)scripts/install-deps run
	$(Q)$(MAKE) --no-print-directory all
	$(Q)V=$(V) scripts/run-main $(O)/bin $(CONFIG)

# --- install --------------------------------------------------------------
MAN_PAGES := $(sort $(wildcard man/*.[1-8]))
# The test host: bin/sdswarm-testhost finds its data, the rest of testhost/,
# in ../share/sdswarm/testhost (modes kept: its scripts run from there),
# with the version it was installed at; its cache is the user's
# ($XDG_CACHE_HOME/sdswarm), never that folder.
TESTHOST_DIR = $(DESTDIR)$(PREFIX)/share/sdswarm/testhost
TESTHOST_FILES := $(sort $(filter-out testhost/sdswarm-testhost, \
	$(shell find testhost -type f 2>/dev/null)))
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	install -m 0755 testhost/sdswarm-testhost $(DESTDIR)$(PREFIX)/bin/
	rm -rf $(TESTHOST_DIR)
	for f in $(TESTHOST_FILES); do m=0644; [ -x $$f ] && m=0755; \
		install -D -m $$m $$f $(DESTDIR)$(PREFIX)/share/sdswarm/$$f; done
	echo '$(SDSWARM_VERSION)' > $(TESTHOST_DIR)/VERSION
	install -m 0644 $(LIBSDNUM) $(DESTDIR)$(PREFIX)/lib/
	install -m 0755 $(LIBSDNUM_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libsdnum.so.0 $(DESTDIR)$(PREFIX)/lib/libsdnum.so
	install -m 0644 numbering/sdnum.h $(DESTDIR)$(PREFIX)/include/
	sed 's|@PREFIX@|$(PREFIX)|' numbering/sdnum.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/sdnum.pc
	for m in $(MAN_PAGES); do s=$${m##*.}; \
		install -d $(DESTDIR)$(PREFIX)/share/man/man$$s; \
		install -m 0644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/; done
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	sed 's|@PREFIX@|$(PREFIX)|' scripts/sdswarmd.service \
		> $(DESTDIR)$(PREFIX)/lib/systemd/system/sdswarmd.service
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0644 scripts/bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/sdswarm
	for t in sdswarmd sdnum sdswarm-bench sdswarm-testhost; do \
		ln -sf sdswarm $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$t; done

include tests/fuzz/fuzz.mk

# --- formatting -----------------------------------------------------------
# The project's C sources: git's list (build/ and stray files stay out), or
# every *.c and *.h outside build/ in a tree without git. .clang-format is
# written for clang-format 14 (Debian 12's); another version formats a few
# things differently, so both targets say when they run another one.
CLANG_FORMAT ?= clang-format
FORMAT_FILES = $(or $(shell git ls-files '*.c' '*.h' 2>/dev/null), \
	$(shell find . -path ./build -prune -o -name '*.[ch]' -type f -print))
check-clang-format = @command -v $(CLANG_FORMAT) >/dev/null || { echo \
	"make: no $(CLANG_FORMAT) (run scripts/install-deps test)" >&2; exit 1; }; \
	$(CLANG_FORMAT) --version | grep -q ' version 14\.' || echo "make:" \
	".clang-format is for clang-format 14, not $$($(CLANG_FORMAT) --version)" >&2

# `make format`: split literals joined (scripts/join-strings), then
# clang-format over every file. Run it on a tree with nothing to commit.
format:
	$(check-clang-format)
	$(Q)scripts/join-strings $(FORMAT_FILES)
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_FILES)

# `make format-check`: changes nothing; fails naming each file `make format`
# would change, with how many lines it would remove and add.
format-check:
	$(check-clang-format)
	@bad=0; rm=0; add=0; for f in $(FORMAT_FILES); do \
		n=$$(scripts/join-strings --print "$$f" | \
		$(CLANG_FORMAT) --assume-filename="$$f" | diff -U0 "$$f" - | \
		awk 'NR > 2 && /^-/{r++} NR > 2 && /^\+/{a++} \
		END{if (r + a) print r + 0, a + 0}'); \
		[ -n "$$n" ] || continue; set -- $$n; \
		echo "$$f: $$1 lines removed, $$2 added" >&2; \
		bad=$$((bad + 1)); rm=$$((rm + $$1)); add=$$((add + $$2)); \
	done; \
	if [ $$bad -ne 0 ]; then echo "make: $$bad files not formatted," \
		"$$rm lines removed, $$add added (make format)" >&2; exit 1; fi

clean:
	rm -rf build

# Only the compiler's dependency files, from this build's object folder:
# the rest of build/ holds guest roots, kernel trees and a trixie toolchain
# root, whose *.d files (rules.d folders, bison's lalr1.d) are no makefiles.
-include $(shell find $(O)/obj -name '*.d' -type f -print 2>/dev/null)
