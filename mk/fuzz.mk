# make fuzz (libFuzzer on the entry points, then the generator's loader fuzz) and
# make memcheck (the gnu suites under valgrind).

FUZZ_SECONDS ?= 60
FUZZ_TARGET  := $(HALF_TARGET)
FUZZ         := $(BUILD)/fuzz/fuzz_params
FUZZ_FORWARD := $(BUILD)/fuzz/fuzz_forward

.PHONY: fuzz memcheck

# libFuzzer on every entry point of $(FUZZ_TARGET) (it has fp and hp), with
# AddressSanitizer and UndefinedBehaviorSanitizer; beside it, the generator's loader fuzz.
# Artifacts (crash-*, leak-*) go to $(BUILD)/fuzz/artifacts, never into the tree; a
# finding worth keeping becomes a regression input in tests/fuzz/corpus/.
FUZZ_SOURCES := $(BNG_SOURCES_generated/$(FUZZ_TARGET)) include/host/bng_hal_host.c \
  include/host/bng_dma_engine.c
FUZZ_FLAGS := -std=gnu11 -g -O1 -march=native -Wno-psabi -ffp-contract=off \
  -fsanitize=address,undefined -fno-sanitize-recover=undefined \
  -DBNG_HOST -DBNG_VEC_BACKEND=BNG_VEC_GNU -Iinclude -Iinclude/host -Igenerated/$(FUZZ_TARGET)
# The library's objects are compiled once, with the fuzzer's coverage counters but not
# its main (fuzzer-no-link), and linked into both fuzzers.
FUZZ_OBJ := $(BUILD)/fuzz/obj
FUZZ_OBJECTS := $(addprefix $(FUZZ_OBJ)/,$(notdir $(FUZZ_SOURCES:.c=.o)))
FUZZ_HEADERS := $(wildcard generated/$(FUZZ_TARGET)/*.h) $(INCLUDE_HEADERS)
define fuzz_object_rule
$(FUZZ_OBJ)/%.o: $(1)/%.c $(FUZZ_HEADERS) $(wildcard include/host/*.h) | deps-fuzz
	@mkdir -p $$(@D)
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $$< -o $$@
endef
$(foreach d,generated/$(FUZZ_TARGET) include include/host,$(eval $(call fuzz_object_rule,$(d))))
# (kept: made by pattern rules for a pattern rule, make would remove them as intermediate)
.SECONDARY: $(FUZZ_OBJECTS)
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_support.h $(FUZZ_OBJECTS) \
  $(FUZZ_HEADERS) | deps-fuzz
	@mkdir -p $(@D)
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJECTS) -lpthread -lm -o $@

# The lines of libFuzzer's output the log keeps.
FUZZ_STATS := $(subst $(space),|,^stat::number_of_executed_units ^stat::peak_rss Done ERROR \
  SUMMARY ==[0-9]+== deadly artifact)
## libFuzzer on the entry points beside the loader fuzz [FUZZ_SECONDS=60]
## (the backward's for three quarters of it, the training forward's for the rest)
fuzz:
	@$(MAKE) --no-print-directory -j$(JOBS) -O fuzz-backward fuzz-forward fuzz-loader
# Each is one process: side by side the backward's harness takes three quarters of
# FUZZ_SECONDS while the forward's and the loader fuzz share the other CPU (the loader
# fuzz runs while the fuzzers compile).
.PHONY: fuzz-backward fuzz-forward fuzz-loader
fuzz-backward: $(FUZZ)
	@rm -rf $(BUILD)/fuzz/corpus && mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/artifacts \
	  && cp tests/fuzz/corpus/* $(BUILD)/fuzz/corpus/
	$(FUZZ) -max_total_time=$$(( $(FUZZ_SECONDS) * 3 / 4 )) -print_final_stats=1 \
	  -artifact_prefix=$(BUILD)/fuzz/artifacts/ $(BUILD)/fuzz/corpus 2>&1 | \
	  grep -E "$(FUZZ_STATS)" ; exit $${PIPESTATUS[0]}
fuzz-forward: $(FUZZ_FORWARD)
	@rm -rf $(BUILD)/fuzz/corpus-forward && mkdir -p $(BUILD)/fuzz/corpus-forward $(BUILD)/fuzz/artifacts
	$(FUZZ_FORWARD) -max_total_time=$$(( $(FUZZ_SECONDS) / 4 )) -print_final_stats=1 \
	  -artifact_prefix=$(BUILD)/fuzz/artifacts/forward- $(BUILD)/fuzz/corpus-forward 2>&1 | \
	  grep -E "$(FUZZ_STATS)" ; exit $${PIPESTATUS[0]}
fuzz-loader: deps-python
	$(PY) tests/fuzz/fuzz_generator.py --seconds $(FUZZ_SECONDS)

# Valgrind 3.19 cannot run AVX-512 code: where CFLAGS enable it (or the compiler cannot
# say), memcheck builds apart without it; elsewhere (a machine without AVX-512) it runs
# the plain build's programs, compiled once for it and make test (VALGRIND_APART,
# Makefile).
NO_AVX512 = $(if $(shell { $(CC) $(CFLAGS) -dM -E -x c /dev/null || echo __AVX512F__; } \
  2>/dev/null | grep -w __AVX512F__),-mno-avx512f)
## the Check suites (gnu flavour) under valgrind: any error fails
memcheck: deps-valgrind deps-c
	@BNG_TEST_QUICK=1 $(MAKE) --no-print-directory test-c VALGRIND=1 \
	  $(if $(NO_AVX512),CFLAGS="$(CFLAGS) $(NO_AVX512)")
