# batchnormgrad: generated batch-norm backward kernels for NUDT FT78NE / MT7004 DSPs.
# `make help` lists the targets; README.md explains them.
#
# This file: the settings, generation, the plan's lists and the two test tiers. The rest
# is in mk/, one job a file:
#   mk/deps.mk      Debian packages, installed on demand (every deps-* target)
#   mk/build.mk     host libraries, and the build flavours the suites run in
#   mk/test.mk      the test programs and their runs (run/<program>/<mode>)
#   mk/bench.mk     make bench, and the smoke run make test does
#   mk/model.mk     make model (the DSP cost model), the calibration's host runner, its tests
#   mk/fuzz.mk      make fuzz, make memcheck
#   mk/firmware.mk  make cross-check, vendor, report
# Scripts the recipes run are files in tests/scripts/.

SHELL := /bin/bash
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

TARGET   ?=
CHANNELS ?=
SANITIZE ?=
comma    := ,
space    := $(subst ,, )
CC      ?= cc
AR      ?= ar
# Host builds: CFLAGS is yours to override (the default tunes for this machine, as make
# bench measures it); the project flags below always apply.
CFLAGS  ?= -O2 -march=native
# Sanitized builds (SANITIZE=thread, SANITIZE=address,undefined) and the driver's
# coverage build (COVERAGE=1, make coverage) keep their own objects, but for the
# generated kernels': a sanitized or coverage build links the uninstrumented build's
# (PLAIN_BUILD; mk/build.mk, "Kernel objects"), and renders the test-only trees there
# too. A valgrind build (VALGRIND=1) is uninstrumented: it is the plain build, objects
# and programs, unless CFLAGS come from elsewhere than this file (make memcheck passes
# them with -mno-avx512f where they enable AVX-512, which valgrind cannot run; a
# caller's own), and then a build of its own, all of it (make tracks files, not flags).
VALGRIND_APART := $(and $(VALGRIND),$(filter-out file,$(origin CFLAGS)))
SANITIZE_DIR := $(if $(SANITIZE),/sanitize-$(subst $(comma),-,$(SANITIZE)))
PLAIN_BUILD  := build$(if $(VALGRIND_APART),/valgrind)
BUILD_ROOT   := build$(SANITIZE_DIR)$(if $(VALGRIND_APART),/valgrind)
BUILD        := $(BUILD_ROOT)$(if $(COVERAGE),/coverage)
# -ffp-contract=off: no FMA contraction, so the three vector backends and every kernel give
# identical bits. BNG_HOST: shared memory and the HAL are emulated (include/host/).
SANITIZE_FLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer -g)
# x86 GCC 12 copies a struct in 16-byte pieces unless allowed wider moves (x86-64-v3,
# haswell, skylake, alderlake, znver2 and znver3 tunings checked), and a struct read back
# in a 32-byte register right after such a copy stalls: the portable backend's vectors
# are structs (f32 at 4096x64 on an x86-64-v3 build 10x slower).
# The width is capped by the registers the build has; compilers without the flags skip them.
MOVE_FLAGS := $(shell $(CC) -mmove-max=512 -mstore-max=512 -x c -c /dev/null -o /dev/null \
  2>/dev/null && echo -mmove-max=512 -mstore-max=512)
UNINSTRUMENTED_CFLAGS := -std=c99 -Wall -Wextra -pedantic -Wno-psabi -ffp-contract=off \
  -Iinclude -DBNG_HOST $(MOVE_FLAGS)
BNG_CFLAGS := $(UNINSTRUMENTED_CFLAGS) $(SANITIZE_FLAGS)
# The host HAL emulation uses POSIX threads and C11's aligned_alloc.
HAL_CFLAGS := -std=gnu11 -Wall -Wextra -Iinclude -Iinclude/host -Iinclude/hal -Iinclude/programs -DBNG_HOST \
  $(SANITIZE_FLAGS)
# COVERAGE=1: the driver's rooms (include/*.c) with gcov's counters, unoptimized so
# that each line's count is its own (make coverage; mk/coverage.mk).
COVERAGE_FLAGS := $(if $(COVERAGE),-O0 --coverage -fprofile-update=atomic)
LDLIBS  := $(SANITIZE_FLAGS) $(if $(COVERAGE),--coverage) -lpthread -lm

include mk/deps.mk

# ---- generation --------------------------------------------------------------------

# TARGET, CHANNELS, DEST, HAL and CONFIG reach the shell only through the environment,
# quoted, never pasted into a command line; where make itself uses TARGET in a path, it
# must name a generated target (known_target). The generator runs with --via-make: its
# errors name these variables (CHANNELS=), not its options (--channels).
export TARGET CHANNELS DEST HAL CONFIG
GENERATOR   = $(PY) -m generator --via-make
CONFIG_ARG := $(if $(CONFIG),--config "$$CONFIG")
TARGET_ARG := $(if $(TARGET),--target "$$TARGET")
GEN_ARGS   := $(CONFIG_ARG) $(TARGET_ARG) $(if $(CHANNELS),--channels "$$CHANNELS")
known_target = $(if $(and $(filter 1,$(words $(TARGET))),$(filter $(ALL_TARGETS),$(TARGET))),,\
  $(error TARGET='$(TARGET)' is not a generated target; known: $(ALL_TARGETS)))

.PHONY: generate regen-check plan
## render generated/ from targets.yaml [TARGET=t]; CHANNELS="48 96" (with TARGET) first
## sets that target's channels: list in targets.yaml
generate: deps-python
	@$(GENERATOR) generate $(GEN_ARGS)

## list the kernels the plan emits [TARGET=t] [CHANNELS=...: a what-if, nothing written]
plan: deps-python
	@$(GENERATOR) plan $(GEN_ARGS)

## fail if a file the generator owns in generated/ differs from what targets.yaml renders
regen-check: deps-python
	@$(GENERATOR) generate $(CONFIG_ARG) --check

# Builds of generated/ stop when it no longer matches targets.yaml or the templates
# (an edit not yet rendered): the libraries would silently hold the old kernels.
.PHONY: generated-fresh
generated-fresh: deps-python
	@status=0; err=$$($(GENERATOR) generate $(CONFIG_ARG) --check 2>&1 >/dev/null) \
	  || status=$$?; \
	  case $$status:$$err in 0:*) ;; \
	    1:*"generated: stale"*) echo "error: generated/ does not match targets.yaml and" \
	      "templates/ (make regen-check shows how): run make generate first" >&2 ;; \
	    *) printf '%s\n' "$$err" >&2 ;; esac; \
	  [ $$status = 0 ] || exit 2

# ---- what to build: the plan's list ----------------------------------------------

# Each generated tree's build.mk (rendered from the plan, so the C side builds without
# Python) adds its folder to BNG_ROOTS and sets BNG_DTYPES_<folder> and
# BNG_SOURCES_<folder>: the storage types and the C sources of its library.
# The folders are those of the targets targets.yaml names (read by Python when there is
# one: a folder of a removed target is not built; a named target not generated yet is
# reported), else every generated/*/build.mk.
# ($(shell) does not see command-line variables in make's environment before 4.4: the
# value itself, quoted)
CONFIG_SHELL_ARG := $(if $(CONFIG),--config '$(subst ','\'',$(CONFIG))')
CONFIGURED_TARGETS := $(if $(PY),$(shell $(PY) -m generator targets $(CONFIG_SHELL_ARG) 2>/dev/null \
  || echo :unreadable))
ifeq ($(CONFIGURED_TARGETS),)
include $(wildcard generated/*/build.mk)
else ifneq ($(filter :unreadable,$(CONFIGURED_TARGETS)),)
# (said once, by the generator: a command that runs it prints the error with file and
# line; make help names it beside the targets)
CONFIG_UNREADABLE := 1
include $(wildcard generated/*/build.mk)
else
$(foreach t,$(CONFIGURED_TARGETS),$(if $(wildcard generated/$(t)/build.mk),,\
  $(warning generated/$(t)/ is missing: run make generate)))
include $(sort $(wildcard $(foreach t,$(CONFIGURED_TARGETS),generated/$(t)/build.mk)))
endif
GENERATED_ROOTS := $(BNG_ROOTS)
ALL_TARGETS     := $(notdir $(GENERATED_ROOTS))
# A goal that builds generated/TARGET checks the name now, before make runs its
# prerequisites (a deps-* install among them) and its recipe. (make report renders a
# tree of its own: the generator checks its TARGET, before deps-report installs.)
ifneq ($(and $(TARGET),$(filter model lib,$(MAKECMDGOALS))),)
$(known_target)
endif
# Targets the examples, the bench smoke test and the fuzzer use: the first target, and
# the first with half precision (its suite covers both entry point families).
FIRST_TARGET    := $(firstword $(ALL_TARGETS))
HALF_TARGET     := $(firstword $(foreach r,$(GENERATED_ROOTS),\
  $(if $(filter f16,$(BNG_DTYPES_$(r))),$(notdir $(r)))) $(FIRST_TARGET))

# What the generator renders with: a tree rendered from them is stale when one changes.
GENERATOR_SOURCES := $(wildcard templates/*.j2 generator/*.py generator/*.yaml)

# Test-only configurations (tests/c/targets-test.yaml), rendered into $(TEST_GEN) when
# a goal needs them; when stale, make regenerates them and restarts with their lists.
TEST_CONFIG := tests/c/targets-test.yaml
TEST_GEN    := $(PLAIN_BUILD)/gen-test
ifneq ($(filter test test-c bit-sweep dma-mutants hal-conformance coverage-% run/% $(BUILD)/%,\
  $(MAKECMDGOALS)),)
include $(TEST_GEN)/roots.mk
endif
$(TEST_GEN)/roots.mk: $(TEST_CONFIG) $(GENERATOR_SOURCES) | deps-python
	@$(PY) -m generator generate --config $(TEST_CONFIG) --out $(TEST_GEN) --quiet
	@echo 'include $$(wildcard $(TEST_GEN)/*/build.mk)' > $@

include mk/build.mk
include mk/test.mk

# ---- the test tiers ----------------------------------------------------------------

# Each tier runs its programs side by side (-j from the core count), each program's
# seconds in the log, and closes with "programs: N passed, M failed" over every one of
# them (mk/test.mk: runs).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: test test-generator test-c check
## the full tier, in parallel: generator tests, the suites on the axis each covers (the test
## matrix, docs/design.md; gnu and hthreads under a sanitizer), the channel walk, the drop
## builds and recipes, the model's tests (4 to 5 minutes on 2 cores from a fresh clone)
test: deps-c deps-python generated-fresh
	@$(call run_and_count,$(GENERATOR_TEST_RUNS) $(TEST_RUNS))

# The fast tier's C runs: the half target's gnu suite, the small channel walk.
CHECK_C_RUNS := run/$(BUILD)/$(HALF_TARGET)/gnu/test_bng/plain \
  run/$(BUILD)/walk_small/gnu/test_walk/plain

## the fast tier (under a minute): generator and plan tests, one target's gnu suite, a
## quick channel walk
check: deps-c deps-python generated-fresh
	@$(call run_and_count,$(GENERATOR_TEST_RUNS) $(CHECK_C_RUNS))

## make test without the generator's tests (make memcheck, CI's sanitizer runs)
test-c: deps-c generated-fresh
	@$(call run_and_count,$(TEST_RUNS))

test-generator: $(GENERATOR_TEST_RUNS)

include mk/bench.mk
include mk/model.mk
include mk/fuzz.mk
include mk/coverage.mk

# ---- housekeeping ------------------------------------------------------------------

.PHONY: clean help
## remove build/
clean:
	rm -rf $(BUILD)

# A documented target has its description on the "## " lines right above it, with the
# time it takes on a 2-core machine where that is more than a few seconds. make help
# lists them in two groups: using the project (a firmware engineer's commands), then
# working on it; a documented target in neither list is an error of this file.
HELP_USING   := generate vendor verify-drop plan report model lib check test regen-check clean help
HELP_WORKING := test-c coverage cross-check hal-conformance drop-builds channels-flow bit-sweep \
  dma-mutants memcheck fuzz syncbn torch-check bench
## this list
help:
	@echo "usage: make <command> [TARGET=<t>] [CHANNELS=\"48 96\"] [DEST=<dir>]"
	@echo "targets: $(ALL_TARGETS)$(if $(CONFIG_UNREADABLE), (targets.yaml does not load: make generate says why))"
	@awk -v using="$(HELP_USING)" -v working="$(HELP_WORKING)" \
	  'function show(name, text,   n, i, w, line) { n = split(text, w, " "); \
	     line = sprintf("  %-17s", name); \
	     for (i = 1; i <= n; i++) { if (length(line) + length(w[i]) > 92) { print line; \
	       line = sprintf("%19s", "") } line = line (line ~ / $$/ ? "" : " ") w[i] } print line } \
	   function group(title, names,   n, i, list) { print title; n = split(names, list, " "); \
	     for (i = 1; i <= n; i++) { show(list[i], doc[list[i]]); delete doc[list[i]] } } \
	   /^## / { text = text (text == "" ? "" : " ") substr($$0, 4); next } \
	   /^[a-z-]+:/ && text != "" { sub(/:.*/, ""); doc[$$0] = text } { text = "" } \
	   END { group("Using the project:", using); print ""; group("Working on it:", working); \
	     for (t in doc) { print "make help: " t " is in neither group" > "/dev/stderr"; exit 1 } }' \
	  $(MAKEFILE_LIST)

# Last: make report's second stage includes its rendered tree's build.mk, which must add
# nothing to the lists above.
include mk/firmware.mk
