# SPDX-License-Identifier: MIT
# tests/fuzz/: libFuzzer harnesses (clang, ASan+UBSan), built by
# `make SANITIZE=fuzz fuzz-build` into build/fuzz/fuzz/, and the seed
# generator. `make fuzz FUZZ_S=N` runs each harness for N seconds;
# `make fuzz-corpus` regenerates tests/fuzz/corpus/.

FUZZ_S ?= 60
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz-*.c))
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(O)/fuzz/%)
FUZZ_LINK := -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined

.PHONY: fuzz fuzz-build fuzz-corpus

ifeq ($(SANITIZE),fuzz)
fuzz-build: $(FUZZ_BINS) $(O)/fuzz/gen-seeds
else
fuzz-build:
	$(Q)$(MAKE) --no-print-directory SANITIZE=fuzz fuzz-build
endif

$(O)/fuzz/fuzz-%: $(O)/obj/tests/fuzz/fuzz-%.o $(TESTLIB_OBJS) $(LIBS_ALL)
	$(call say,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(FUZZ_LINK) $(LDFLAGS) -o $@ $^ \
		$(call pc_libs,$(TEST_PKGS) $(TARGET_PKGS)) -lpthread -lm

$(O)/fuzz/gen-seeds: $(O)/obj/tests/fuzz/gen-seeds.o $(LIBS_ALL)
	$(call say,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ \
		$(call pc_libs,$(TARGET_PKGS)) -lpthread -lm

fuzz:
	$(Q)scripts/install-deps
	$(Q)$(MAKE) --no-print-directory SANITIZE=fuzz fuzz-build
	$(Q)tests/fuzz/run-fuzz.sh $(CURDIR)/build/fuzz/fuzz $(FUZZ_S)

fuzz-corpus:
	$(Q)$(MAKE) --no-print-directory SANITIZE=fuzz fuzz-build
	$(Q)tests/fuzz/gen-corpus.sh $(CURDIR)/build/fuzz/fuzz/gen-seeds
