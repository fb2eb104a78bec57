# batchnormgrad: generated batch-norm backward kernels for NUDT FT78NE / MT7004 DSPs.
# `make help` lists the targets; README.md explains them.

SHELL := /bin/bash
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

TARGET   ?=
CHANNELS ?=
SANITIZE ?=
comma    := ,
space    := $(subst ,, )
# Sanitized builds (SANITIZE=thread, SANITIZE=address,undefined) and valgrind builds
# (VALGRIND=1) keep their own objects.
BUILD    := build$(if $(SANITIZE),/sanitize-$(subst $(comma),-,$(SANITIZE)))$(if $(VALGRIND),/valgrind)


CC      ?= cc
AR      ?= ar
# Host builds: CFLAGS is yours to override (the default tunes for this machine, as make
# bench measures it); the project flags below always apply.
CFLAGS  ?= -O2 -march=native
# -ffp-contract=off: no FMA contraction, so the three vector backends and every kernel give
# identical bits. BNG_HOST: shared memory and the HAL are emulated (include/host/).
SANITIZE_FLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer -g)
# x86 GCC 12 copies a struct in 16-byte pieces unless allowed wider moves (x86-64-v3,
# haswell, skylake, alderlake, znver2 and znver3 tunings checked), and a struct read back
# in a 32-byte register right after such a copy stalls: the portable backend's vectors
# are structs (f32 at 4096x64 on an x86-64-v3 build 10x slower).
# The width is capped by the registers the build has; compilers without the flags skip them.
MOVE_FLAGS := $(shell $(CC) -mmove-max=512 -mstore-max=512 -x c -c /dev/null -o /dev/null 2>/dev/null \
  && echo -mmove-max=512 -mstore-max=512)
BNG_CFLAGS := -std=c99 -Wall -Wextra -pedantic -Wno-psabi -ffp-contract=off -Iinclude -DBNG_HOST $(MOVE_FLAGS) $(SANITIZE_FLAGS)
# The host HAL emulation uses POSIX threads and C11's aligned_alloc.
HAL_CFLAGS := -std=gnu11 -Wall -Wextra -Iinclude -Iinclude/host -Iinclude/hal -DBNG_HOST $(SANITIZE_FLAGS)
LDLIBS  := $(SANITIZE_FLAGS) -lpthread -lm

# ---- dependencies: Debian packages, installed on demand ----------------------------

# Install Debian packages when root (or with password-less sudo), else say what to run.
define apt_install
	if [ "$$(id -u)" = 0 ]; then sudo=; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else echo "error: missing $(1); run: sudo apt-get install -y $(1)" >&2; exit 1; fi; \
	echo "installing $(1)$(if $(2), ($(2)))" >&2; \
	$$sudo apt-get update -qq >&2 && \
	DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $(1) >&2
endef

# A python3 that imports what it needs (the generator: jinja2 and yaml; its tests:
# hypothesis too): the first python3 on PATH may not be Debian's.
find_python = for p in $(PYTHON) python3 /usr/bin/python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import $(subst $(space),$(comma),$(or $(1),jinja2 yaml))' 2>/dev/null \
	&& { command -v $$p; break; }; done
PY = $(shell $(find_python))
PY_TEST = $(shell $(call find_python,jinja2 yaml hypothesis))

.PHONY: deps-python deps-python-test deps-c
deps-python:
	@if [ -z "$$($(find_python))" ]; then $(call apt_install,python3 python3-jinja2 python3-yaml); fi

deps-python-test:
	@if [ -z "$$($(call find_python,jinja2 yaml hypothesis))" ]; then \
	  $(call apt_install,python3 python3-jinja2 python3-yaml python3-hypothesis); fi

deps-c:
	@if ! command -v $(CC) >/dev/null 2>&1 || ! command -v pkg-config >/dev/null 2>&1 \
	    || ! pkg-config --exists check; then $(call apt_install,gcc pkg-config check); fi

CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)

# ---- generation --------------------------------------------------------------------

# TARGET, CHANNELS and DEST reach the shell only through the environment, quoted, never
# pasted into a command line; where make itself uses TARGET in a path, it must name a
# generated target (known_target).
export TARGET CHANNELS DEST HAL CONFIG
GEN_ARGS := $(if $(CONFIG),--config "$$CONFIG") $(if $(TARGET),--target "$$TARGET") $(if $(CHANNELS),--channels "$$CHANNELS")
known_target = $(if $(and $(filter 1,$(words $(TARGET))),$(filter $(ALL_TARGETS),$(TARGET))),,\
  $(error TARGET='$(TARGET)' is not a generated target; known: $(ALL_TARGETS)))

.PHONY: generate regen-check plan
generate: deps-python ## render generated/ from targets.yaml [TARGET=t] [CHANNELS="48 96"]
	$(PY) -m generator generate $(GEN_ARGS)

plan: deps-python ## list the kernels the plan emits [TARGET=t] [CHANNELS=...]
	@$(PY) -m generator plan $(GEN_ARGS)

regen-check: deps-python ## fail if a file the generator owns in generated/ differs from what targets.yaml renders
	@$(PY) -m generator generate --check

# Builds of generated/ stop when it no longer matches targets.yaml or the templates
# (an edit not yet rendered): the libraries would silently hold the old kernels. A tree
# rendered with CHANNELS= (its banners say so) is the user's choice, and builds as is.
.PHONY: generated-fresh
generated-fresh: deps-python
	@grep -qs 'Remake: .*CHANNELS=' generated/*/bng_kernels.h || $(PY) -m generator generate --check >/dev/null 2>&1 || { \
	  echo "error: generated/ does not match targets.yaml and templates/ (make regen-check shows how): run make generate first" >&2; exit 2; }

# ---- what to build: the plan's list ----------------------------------------------

# Each generated tree's build.mk (rendered from the plan, so the C side builds without
# Python) adds its folder to BNG_ROOTS and sets BNG_DTYPES_<folder> and
# BNG_SOURCES_<folder>: the storage types and the C sources of its library.
# The folders are those of the targets targets.yaml names (read by Python when there is
# one: a folder of a removed target is not built; a named target not generated yet is
# reported), else every generated/*/build.mk.
CONFIGURED_TARGETS := $(if $(PY),$(shell $(PY) -m generator targets 2>/dev/null || echo :unreadable))
ifeq ($(CONFIGURED_TARGETS),)
include $(wildcard generated/*/build.mk)
else ifneq ($(filter :unreadable,$(CONFIGURED_TARGETS)),)
$(warning targets.yaml does not load (make generate says why): building every folder of generated/)
include $(wildcard generated/*/build.mk)
else
$(foreach t,$(CONFIGURED_TARGETS),$(if $(wildcard generated/$(t)/build.mk),,$(warning generated/$(t)/ is missing: run make generate)))
include $(sort $(wildcard $(foreach t,$(CONFIGURED_TARGETS),generated/$(t)/build.mk)))
endif
GENERATED_ROOTS := $(BNG_ROOTS)
ALL_TARGETS     := $(notdir $(GENERATED_ROOTS))
# Targets the examples, the bench smoke test and the fuzzer use: the first target, and
# the first with half precision (its suite covers both entry point families).
FIRST_TARGET    := $(firstword $(ALL_TARGETS))
HALF_TARGET     := $(firstword $(foreach r,$(GENERATED_ROOTS),$(if $(filter f16,$(BNG_DTYPES_$(r))),$(notdir $(r)))) $(FIRST_TARGET))

# Test-only configurations (tests/c/targets-test.yaml), rendered into $(TEST_GEN) when
# a goal needs them; when stale, make regenerates them and restarts with their lists.
TEST_CONFIG := tests/c/targets-test.yaml
TEST_GEN    := $(BUILD)/gen-test
ifneq ($(filter test test-c suites bit-sweep dma-mutants hal-conformance run/% $(BUILD)/%,$(MAKECMDGOALS)),)
include $(TEST_GEN)/roots.mk
endif
$(TEST_GEN)/roots.mk: $(TEST_CONFIG) $(wildcard templates/*.j2 generator/*.py) | deps-python
	$(PY) -m generator generate --config $(TEST_CONFIG) --out $(TEST_GEN) --quiet
	@echo 'include $$(wildcard $(TEST_GEN)/*/build.mk)' > $@

# ---- host libraries ----------------------------------------------------------------

# (with the host's emulation of the target compiler's vector header, which the native
# flavour's objects include)
INCLUDE_HEADERS := $(wildcard include/*.h include/host/compiler/*.h)
# The host HAL emulation every host library links (include/host/, never vendored).
HOST_HAL_OBJECTS := bng_hal_host.o bng_dma_engine.o
objects_of = $(addprefix $(2)/,$(notdir $(BNG_SOURCES_$(1):.c=.o)))

# $(1) generated folder, $(2) object folder, $(3) archive, $(4) extra flags, $(5) the
# HAL's objects (default: the host emulation). The archive holds the plan's sources (the
# generated ones and the shared driver, compiled against the folder's headers) and a HAL.
define library_rules
$(2)/%.o: $(1)/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) $(4) -I$(1) -c $$< -o $$@
$(2)/%.o: include/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) $(4) -I$(1) -c $$< -o $$@
$(2)/%.o: include/host/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) $(wildcard include/host/*.h) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(HAL_CFLAGS) $(4) -I$(1) -c $$< -o $$@
$(2)/%.o: include/hal/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) $(wildcard include/hal/*.h include/host/*.h) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(HAL_CFLAGS) $(4) -I$(1) -c $$< -o $$@
$(3): $(call objects_of,$(1),$(2)) $(addprefix $(2)/,$(or $(5),$(HOST_HAL_OBJECTS)))
	$$(AR) rcs $$@ $$^
endef

$(foreach r,$(GENERATED_ROOTS),\
  $(eval $(call library_rules,$(r),$(BUILD)/$(notdir $(r))/obj,$(BUILD)/$(notdir $(r))/libbatchnormgrad.a,)))

.PHONY: lib
lib: generated-fresh ## build/<t>/libbatchnormgrad.a for TARGET=t (all targets without TARGET)
	@$(if $(TARGET),$(known_target))$(MAKE) --no-print-directory $(foreach t,$(or $(TARGET),$(ALL_TARGETS)),$(BUILD)/$(t)/libbatchnormgrad.a)

# ---- tests -------------------------------------------------------------------------

# Build flavours the suites run in: GNU vectors with the compiler's _Float16; GNU
# vectors with the portable half (an older vendor GCC); plain C99 throughout.
FLAVOUR_FLAGS_gnu          := -DBNG_VEC_BACKEND=BNG_VEC_GNU
FLAVOUR_FLAGS_gnu_softhalf := -DBNG_VEC_BACKEND=BNG_VEC_GNU -DBNG_HALF_PORTABLE
FLAVOUR_FLAGS_portable     := -DBNG_VEC_BACKEND=BNG_VEC_PORTABLE -DBNG_HALF_PORTABLE
# The target compiler's own vector spellings (bng_native.h), emulated on the host by
# include/host/compiler/m3000.h.
FLAVOUR_FLAGS_native       := -DBNG_VEC_BACKEND=BNG_VEC_NATIVE -DBNG_HALF_PORTABLE -Iinclude/host
# The reference HAL for NUDT's hthreads runtime (include/hal/) on a mock of that runtime
# (include/host/hthread_mock.c), in its two launch models: one caller and parked
# workers (fanout), every core calling _s (spmd).
HTHREADS_FLAGS := -DBNG_VEC_BACKEND=BNG_VEC_GNU -Iinclude/hal -Iinclude/host '-DBNG_HTHREADS_IDLE()=hthread_mock_idle()' \
  '-DBNG_HTHREADS_CONTRACT_BREACH(what)=hthread_mock_breach(what)'
FLAVOUR_FLAGS_hthreads_fanout := $(HTHREADS_FLAGS) -DBNG_HTHREADS_LAUNCH=BNG_LAUNCH_FANOUT -DBNG_TEST_LAUNCH_FANOUT=1
FLAVOUR_FLAGS_hthreads_spmd   := $(HTHREADS_FLAGS) -DBNG_HTHREADS_LAUNCH=BNG_LAUNCH_SPMD -DBNG_TEST_LAUNCH_SPMD=1
HAL_OBJECTS_hthreads_fanout   := bng_hal_hthreads.o hthread_mock.o bng_dma_engine.o
HAL_OBJECTS_hthreads_spmd     := $(HAL_OBJECTS_hthreads_fanout)
# Under a sanitizer only gnu and the hthreads HAL run (their memory and thread handling
# is what the sanitizers check; the other flavours differ in arithmetic code only), under
# valgrind only gnu: checked runs are slow.
flavours = gnu $(if $(VALGRIND),,$(if $(SANITIZE),,portable $(if $(call native_flavour,$(1)),native) $(if $(filter f16,$(BNG_DTYPES_$(1))),gnu_softhalf)) hthreads_fanout hthreads_spmd)
# The native flavour builds a target's native spellings: on a split target only where
# targets.yaml picks them (the generator then checks the half spellings such a target
# needs; a split target on another backend has none to build with).
native_flavour = $(if $(filter split,$(BNG_MEMORY_$(1))),$(filter native,$(BNG_BACKEND_$(1))),native)

# Every tree under test: the committed ones and the test-only configurations.
SUITE_ROOTS := $(BNG_ROOTS)

TEST_SOURCES := tests/c/test_bng.c tests/c/bng_dtypes.c tests/c/bng_test_support.c tests/c/bng_reference.c
TEST_HEADERS := $(wildcard tests/c/*.h)

# $(1) generated folder, $(2) flavour; output under build/<target>/<flavour>/
define suite_rules
$(call library_rules,$(1),$(BUILD)/$(notdir $(1))/$(2)/obj,$(BUILD)/$(notdir $(1))/$(2)/libbatchnormgrad.a,$(FLAVOUR_FLAGS_$(2)),$(HAL_OBJECTS_$(2)))
$(BUILD)/$(notdir $(1))/$(2)/test_bng: $(TEST_SOURCES) $(TEST_HEADERS) $(BUILD)/$(notdir $(1))/$(2)/libbatchnormgrad.a | deps-c
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) $(FLAVOUR_FLAGS_$(2)) -I$(1) -Itests/c $$(CHECK_CFLAGS) \
	  $(TEST_SOURCES) $(BUILD)/$(notdir $(1))/$(2)/libbatchnormgrad.a $$(CHECK_LIBS) $(LDLIBS) -o $$@
endef
$(foreach r,$(SUITE_ROOTS),$(foreach v,$(call flavours,$(r)),$(eval $(call suite_rules,$(r),$(v)))))
C_SUITES := $(foreach r,$(SUITE_ROOTS),$(foreach v,$(call flavours,$(r)),$(BUILD)/$(notdir $(r))/$(v)/test_bng))

# The half conversions, exhaustively, through each backend's vector loads and stores.
HALF_SUITES := $(BUILD)/test_half $(BUILD)/test_half_portable $(BUILD)/test_half_gcc8
$(BUILD)/test_half: tests/c/test_half.c tests/c/bng_ftz.h include/bng_half.h include/bng_vec.h | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) -DBNG_VEC_BACKEND=BNG_VEC_GNU $(CHECK_CFLAGS) $< $(CHECK_LIBS) $(LDLIBS) -o $@
$(BUILD)/test_half_portable: tests/c/test_half.c tests/c/bng_ftz.h include/bng_half.h include/bng_vec.h | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) $(FLAVOUR_FLAGS_portable) $(CHECK_CFLAGS) $< $(CHECK_LIBS) $(LDLIBS) -o $@
# The GNU backend as a GCC 8 compiles it (its branch without __builtin_convertvector).
$(BUILD)/test_half_gcc8: tests/c/test_half.c tests/c/bng_ftz.h include/bng_half.h include/bng_vec.h tests/scripts/gcc8_features.h | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) -DBNG_VEC_BACKEND=BNG_VEC_GNU -include tests/scripts/gcc8_features.h \
	  $(CHECK_CFLAGS) $< $(CHECK_LIBS) $(LDLIBS) -o $@

# The manual's two examples, built the way the README tells a caller to.
MANUAL_EXAMPLES := $(BUILD)/$(FIRST_TARGET)/manual_example_p $(BUILD)/$(FIRST_TARGET)/manual_example_s
$(BUILD)/$(FIRST_TARGET)/manual_example_%: tests/c/manual_example_%.c tests/c/bng_example.c tests/c/bng_reference.c $(BUILD)/$(FIRST_TARGET)/libbatchnormgrad.a
	$(CC) $(CFLAGS) $(SANITIZE_FLAGS) -std=c99 -Wall -Wextra -DBNG_HOST -Iinclude -Igenerated/$(FIRST_TARGET) -Itests/c \
	  $< tests/c/bng_example.c tests/c/bng_reference.c $(BUILD)/$(FIRST_TARGET)/libbatchnormgrad.a $(LDLIBS) -o $@

# The channel walk (tests/walk/): test-only targets whose channel lists walk every
# boundary of the kernel plan, computed from the plan by walk_targets.py; each runs
# tests/walk/test_walk.c on the gnu flavour. make check walks the small one only.
WALK_GEN   := $(BUILD)/gen-walk
ifneq ($(filter test test-c suites check run/% $(BUILD)/%,$(MAKECMDGOALS)),)
include $(WALK_GEN)/roots.mk
endif
$(WALK_GEN)/roots.mk: tests/walk/walk_targets.py $(wildcard templates/*.j2 generator/*.py) | deps-python
	@mkdir -p $(@D)
	$(PY) tests/walk/walk_targets.py > $(WALK_GEN)/targets.yaml
	$(PY) -m generator generate --config $(WALK_GEN)/targets.yaml --out $(WALK_GEN) --quiet
	@echo 'include $$(wildcard $(WALK_GEN)/*/build.mk)' > $@
WALK_ROOTS := $(filter-out $(SUITE_ROOTS),$(BNG_ROOTS))
WALK_SOURCES := tests/walk/test_walk.c tests/c/bng_dtypes.c tests/c/bng_test_support.c tests/c/bng_reference.c
define walk_rules
$(call library_rules,$(1),$(BUILD)/$(notdir $(1))/gnu/obj,$(BUILD)/$(notdir $(1))/gnu/libbatchnormgrad.a,$(FLAVOUR_FLAGS_gnu),)
$(BUILD)/$(notdir $(1))/gnu/test_walk: $(WALK_SOURCES) $(TEST_HEADERS) $(BUILD)/$(notdir $(1))/gnu/libbatchnormgrad.a | deps-c
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) $(FLAVOUR_FLAGS_gnu) -I$(1) -Itests/c $$(CHECK_CFLAGS) \
	  $(WALK_SOURCES) $(BUILD)/$(notdir $(1))/gnu/libbatchnormgrad.a $$(CHECK_LIBS) $(LDLIBS) -o $$@
endef
$(foreach r,$(WALK_ROOTS),$(eval $(call walk_rules,$(r))))
WALK_SUITES := $(foreach r,$(WALK_ROOTS),$(BUILD)/$(notdir $(r))/gnu/test_walk)

# VALGRIND=1: every test program under valgrind's memcheck, an error fails the run.
# The host HAL's core threads live until exit: their stacks are "possibly lost" by design.
# Under ThreadSanitizer: the one race the SPMD model has by design (tests/tsan.supp).
RUN := $(if $(filter thread,$(subst $(comma), ,$(SANITIZE))),TSAN_OPTIONS=suppressions=$(CURDIR)/tests/tsan.supp) \
  $(if $(VALGRIND),valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-possibly-lost=no,)

# Every run of a test program is a make target of its own (run/<program>/<mode>), so
# that make -j runs them side by side and -O keeps each one's output together.
# Modes: plain; fast (the fast host HAL make bench times); ftz (an FPU flushing
# subnormals as the DSP's does). A flavour runs the test cases it can change
# (Check's tags): a HAL flavour those that move data (shared), an arithmetic flavour
# those that compute on the caller's memory (private); gnu runs every case.
CASES_hthreads_fanout := CK_INCLUDE_TAGS=shared
CASES_hthreads_spmd   := CK_INCLUDE_TAGS=shared
CASES_portable        := CK_INCLUDE_TAGS=private
CASES_native          := CK_INCLUDE_TAGS=private
CASES_gnu_softhalf    := CK_INCLUDE_TAGS=private
MODE_ENV_plain :=
MODE_ENV_fast  := BNG_HAL_HOST=fast
MODE_ENV_ftz   := BNG_TEST_FTZ=1
flavour_of = $(notdir $(patsubst %/,%,$(dir $(1))))
# $(1) program, $(2) mode, $(3) extra environment
define run_rule
.PHONY: run/$(1)/$(2)
run/$(1)/$(2): $(1)
	@echo "== $(1) ($(2))"; $(MODE_ENV_$(2)) $(3) $(RUN) $(1)
endef
C_RUNS := $(foreach s,$(C_SUITES),run/$(s)/plain) \
  $(if $(VALGRIND),,$(foreach s,$(filter %/gnu/test_bng,$(C_SUITES)),run/$(s)/fast) \
    $(foreach s,$(HALF_SUITES) $(filter %/gnu/test_bng %/gnu_softhalf/test_bng %/portable/test_bng,$(C_SUITES)),run/$(s)/ftz))
HALF_RUNS   := $(foreach s,$(HALF_SUITES),run/$(s)/plain)
EXAMPLE_RUNS := $(foreach s,$(MANUAL_EXAMPLES),run/$(s)/plain)
# Under a sanitizer the small walk only: the wide ones' unrolled kernels take minutes to
# compile instrumented, and their guard bytes already catch a write past an output.
WALK_RUNS   := $(foreach s,$(if $(SANITIZE),$(filter %/walk_small/gnu/test_walk,$(WALK_SUITES)),$(WALK_SUITES)),run/$(s)/plain)
# run/<program>/<mode> -> the program, and the cases it runs in that mode.
program_of = $(patsubst run/%/,%,$(dir $(1)))
cases_of = $(if $(filter fast,$(notdir $(1))),CK_INCLUDE_TAGS=shared,$(CASES_$(call flavour_of,$(call program_of,$(1)))))
$(foreach r,$(HALF_RUNS) $(EXAMPLE_RUNS) $(WALK_RUNS) $(C_RUNS),\
  $(eval $(call run_rule,$(call program_of,$(r)),$(notdir $(r)),$(call cases_of,$(r)))))

# -j from the core count; -O: each run's output in one piece.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: test test-generator test-c suites check check-generator
test: deps-c deps-python generated-fresh ## the full tier, in parallel: generator tests, every suite of every target and flavour (gnu and hthreads under SANITIZE=thread|address,undefined), the channel walk
	@$(MAKE) --no-print-directory -j$(JOBS) -O test-generator suites
	@echo "programs: $(words test-generator $(HALF_RUNS) $(EXAMPLE_RUNS) $(WALK_RUNS) $(C_RUNS) $(SYNCBN_RUNS)) passed, 0 failed"

# The fast tier: the generator's tests, one target's suite on the default backend, and
# the small channel walk.
check: deps-c deps-python generated-fresh ## the fast tier (about a minute): generator and plan tests, one target's gnu suite, a quick channel walk
	@$(MAKE) --no-print-directory -j$(JOBS) -O test-generator run/$(BUILD)/$(HALF_TARGET)/gnu/test_bng/plain \
	  run/$(BUILD)/walk_small/gnu/test_walk/plain

test-generator: deps-python-test
	$(PY_TEST) -m unittest discover -s tests/generator -p 'test_*.py'

test-c: suites

suites: $(HALF_RUNS) $(EXAMPLE_RUNS) $(WALK_RUNS) $(C_RUNS) $(if $(VALGRIND),,bench-smoke hal-conformance)

# fork() after the host HAL's core threads exist: the child's _s starts its own (a hang
# fails by alarm). Not under ThreadSanitizer: it does not support starting threads after
# a multi-threaded fork.
FORK_TEST := $(BUILD)/$(FIRST_TARGET)/test_fork
$(FORK_TEST): tests/c/test_fork.c tests/c/bng_example.c tests/c/bng_reference.c $(BUILD)/$(FIRST_TARGET)/libbatchnormgrad.a | deps-c
	$(CC) $(CFLAGS) $(SANITIZE_FLAGS) -std=gnu11 -Wall -Wextra -DBNG_HOST -Iinclude -Igenerated/$(FIRST_TARGET) -Itests/c \
	  $< tests/c/bng_example.c tests/c/bng_reference.c $(BUILD)/$(FIRST_TARGET)/libbatchnormgrad.a $(LDLIBS) -o $@
# docs/porting.md's host recipe for a vendored drop, run as written (every target).
.PHONY: drop-on-host
suites: $(if $(SANITIZE)$(VALGRIND),,drop-on-host)
drop-on-host: deps-c deps-python
	@set -e; for t in $(ALL_TARGETS); do tests/scripts/drop_on_host.sh $(BUILD) $(PY) "$(CC)" $$t; done

.PHONY: fork-test
suites: fork-test
fork-test: $(FORK_TEST)
	$(if $(filter thread,$(subst $(comma), ,$(SANITIZE))),@echo "fork-test: not under ThreadSanitizer",$(RUN) $<)

# ---- synchronized batch norm over MPI ----------------------------------------------

# tests/mpi/syncbn.c: one synchronized backward step (batch_norm_grad_ext.h's reduce,
# an all-gather summed in rank order, apply) across MPI ranks that hold different
# numbers of rows, checked against the whole batch in one process and against itself
# run after run. Open MPI from Debian (openmpi-bin, libopenmpi-dev), installed like
# Check. make syncbn NP=4 runs it; make test runs 1, 2 and 3 ranks, each twice (the two
# runs' hashes must agree). Not under ThreadSanitizer or valgrind (Open MPI's threads
# and shared-memory transport are not ours to check); under AddressSanitizer without
# leak reports (Open MPI keeps its allocations until exit).
MPICC  ?= mpicc
MPIRUN ?= mpirun
NP     ?= 4
SYNCBN := $(BUILD)/$(HALF_TARGET)/syncbn
MPIRUN_FLAGS := --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)
SYNCBN_ENV := $(if $(SANITIZE),ASAN_OPTIONS=detect_leaks=0)
.PHONY: deps-mpi syncbn
deps-mpi:
	@if ! command -v $(MPICC) >/dev/null 2>&1 || ! command -v $(MPIRUN) >/dev/null 2>&1; then \
	  $(call apt_install,openmpi-bin libopenmpi-dev); fi
$(SYNCBN): tests/mpi/syncbn.c tests/c/bng_reference.c tests/c/bng_reference.h $(BUILD)/$(HALF_TARGET)/libbatchnormgrad.a | deps-mpi deps-c
	$(MPICC) $(CFLAGS) $(SANITIZE_FLAGS) -std=c99 -Wall -Wextra -ffp-contract=off -DBNG_HOST -Iinclude \
	  -Igenerated/$(HALF_TARGET) -Itests/c $< tests/c/bng_reference.c $(BUILD)/$(HALF_TARGET)/libbatchnormgrad.a $(LDLIBS) -o $@
syncbn: generated-fresh $(SYNCBN) ## one synchronized batch-norm backward step over MPI ranks, checked against one process [NP=4]
	$(SYNCBN_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np $(NP) $(SYNCBN)
# run/<syncbn>/np<N>: N ranks, twice; the second run's hash must be the first's.
define syncbn_run
.PHONY: run/$(SYNCBN)/np$(1)
run/$(SYNCBN)/np$(1): $(SYNCBN)
	@echo "== $(SYNCBN) ($(1) rank(s), two runs)"; set -e; \
	a=$$$$($(SYNCBN_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np $(1) $(SYNCBN)); echo "$$$$a"; \
	b=$$$$($(SYNCBN_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np $(1) $(SYNCBN) --repeat 1); \
	[ "$$$$(echo "$$$$a" | grep -o 'hash [0-9a-f]*')" = "$$$$(echo "$$$$b" | grep -o 'hash [0-9a-f]*')" ] \
	  || { echo "syncbn: $(1) rank(s): a second run gave other bits" >&2; exit 1; }
endef
SYNCBN_RUNS := $(if $(VALGRIND)$(filter thread,$(subst $(comma), ,$(SANITIZE))),,$(foreach n,1 2 3,run/$(SYNCBN)/np$(n)))
$(foreach n,1 2 3,$(eval $(call syncbn_run,$(n))))
suites: $(SYNCBN_RUNS)

# Every output of a sweep of shapes through the public ABI, hashed, per target and
# flavour: run before and after a refactor and diff the folders.
BIT_SWEEP_OUT ?= $(BUILD)/bit-sweep
define bit_sweep_rules
$(BUILD)/$(notdir $(1))/$(2)/bit_sweep: tests/scripts/bit_sweep.c $(BUILD)/$(notdir $(1))/$(2)/libbatchnormgrad.a | deps-c
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) -std=gnu11 $(FLAVOUR_FLAGS_$(2)) -I$(1) $$< $(BUILD)/$(notdir $(1))/$(2)/libbatchnormgrad.a $(LDLIBS) -o $$@
endef
$(foreach r,$(SUITE_ROOTS),$(foreach v,$(filter-out hthreads_%,$(call flavours,$(r))),$(eval $(call bit_sweep_rules,$(r),$(v)))))
# (one caller: not the hthreads flavours, whose launch models the suite drives)
BIT_SWEEPS := $(foreach r,$(SUITE_ROOTS),$(foreach v,$(filter-out hthreads_%,$(call flavours,$(r))),$(BUILD)/$(notdir $(r))/$(v)/bit_sweep))

.PHONY: bit-sweep
bit-sweep: $(BIT_SWEEPS) ## hash every output of a shape sweep per target and flavour into build/bit-sweep/
	@mkdir -p $(BIT_SWEEP_OUT)
	@for b in $(BIT_SWEEPS); do f=$(BIT_SWEEP_OUT)/$$(basename $$(dirname $$(dirname $$b))).$$(basename $$(dirname $$b)).txt; \
	  $$b > $$f; echo "$$f: $$(wc -l < $$f) cases"; done

# Proof that the asynchronous host HAL catches a missing DMA wait: every wait in the
# driver removed in turn must fail the suite. QUICK=1: the tiny test target only (its
# 20 KiB private memory streams tiles), else every target and test target.
MUTANT_ROOTS := $(if $(QUICK),$(filter %/tiny,$(SUITE_ROOTS)),$(SUITE_ROOTS))
.PHONY: dma-mutants
dma-mutants: $(foreach r,$(MUTANT_ROOTS),$(BUILD)/$(notdir $(r))/gnu/libbatchnormgrad.a) | deps-c ## remove each DMA wait of the driver in turn: the suite must catch every one [QUICK=1]
	tests/scripts/dma_mutants.sh $(BUILD) "$(CC)" "$(CFLAGS) $(BNG_CFLAGS) $(FLAVOUR_FLAGS_gnu)" \
	  $(foreach r,$(MUTANT_ROOTS),$(r):$(BUILD)/$(notdir $(r))/gnu/obj)

# ---- HAL conformance ---------------------------------------------------------------

# include/hal/bng_hal_conformance.c (shipped beside a vendored HAL) against every HAL
# shipped, per target (and the split-memory test targets, where it checks through DMA
# only and adds _p's workspace): the host HAL (the gnu flavour's library), the hthreads
# HAL on the runtime mock in both launch models; the hthreads launch test (late fan-out workers,
# BNG_ENOMEM with untouched outputs, uncreated barrier ids trap); and the proof that the
# check catches the reference HAL without its wait for its puts before a barrier.
CONFORMANCE_HALS := gnu hthreads_fanout hthreads_spmd
CONFORMANCE_SOURCES := include/hal/bng_hal_conformance.c tests/c/hal_conformance_main.c
CONFORMANCE_HEADERS := include/hal/bng_hal_conformance.h $(INCLUDE_HEADERS) $(wildcard include/hal/*.h include/host/*.h)
# $(1) generated folder, $(2) flavour whose library (and HAL) the programs link
define conformance_rules
$(BUILD)/$(notdir $(1))/$(2)/hal_conformance: $(CONFORMANCE_SOURCES) $(CONFORMANCE_HEADERS) $(BUILD)/$(notdir $(1))/$(2)/libbatchnormgrad.a | deps-c
	$$(CC) $$(CFLAGS) $(HAL_CFLAGS) $(FLAVOUR_FLAGS_$(2)) -I$(1) $(CONFORMANCE_SOURCES) $(BUILD)/$(notdir $(1))/$(2)/libbatchnormgrad.a $(LDLIBS) -o $$@
$(BUILD)/$(notdir $(1))/$(2)/test_hthreads_launch: tests/c/test_hthreads_launch.c $(CONFORMANCE_HEADERS) $(BUILD)/$(notdir $(1))/$(2)/libbatchnormgrad.a | deps-c
	$$(CC) $$(CFLAGS) $(HAL_CFLAGS) $(FLAVOUR_FLAGS_$(2)) -I$(1) $$< $(BUILD)/$(notdir $(1))/$(2)/libbatchnormgrad.a $(LDLIBS) -o $$@
endef
CONFORMANCE_ROOTS := $(GENERATED_ROOTS) $(foreach r,$(filter-out $(GENERATED_ROOTS),$(SUITE_ROOTS)),$(if $(filter split,$(BNG_MEMORY_$(r))),$(r)))
$(foreach r,$(CONFORMANCE_ROOTS),$(foreach v,$(CONFORMANCE_HALS),$(eval $(call conformance_rules,$(r),$(v)))))
CONFORMANCE_PROGRAMS := $(foreach r,$(CONFORMANCE_ROOTS),$(foreach v,$(CONFORMANCE_HALS),$(BUILD)/$(notdir $(r))/$(v)/hal_conformance))
LAUNCH_TESTS := $(foreach r,$(CONFORMANCE_ROOTS),$(foreach v,hthreads_fanout hthreads_spmd,$(BUILD)/$(notdir $(r))/$(v)/test_hthreads_launch))

.PHONY: hal-conformance
hal-conformance: $(CONFORMANCE_PROGRAMS) $(LAUNCH_TESTS) ## the HAL conformance check against every HAL shipped, the hthreads launch test
	@set -e; for p in $(CONFORMANCE_PROGRAMS) $(LAUNCH_TESTS); do $(RUN) timeout 300 $$p; done
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	grep -v 'bng_complete_puts(c); .*visible after the barrier' include/hal/bng_hal_hthreads.c > $$tmp/bng_hal_hthreads.c; \
	if cmp -s include/hal/bng_hal_hthreads.c $$tmp/bng_hal_hthreads.c; then \
	  echo "hal-conformance: the barrier's wait for puts was not found" >&2; exit 1; fi; \
	$(foreach v,hthreads_fanout hthreads_spmd,\
	  $(CC) $(CFLAGS) $(HAL_CFLAGS) $(FLAVOUR_FLAGS_$(v)) -Igenerated/$(FIRST_TARGET) $(CONFORMANCE_SOURCES) \
	    $$tmp/bng_hal_hthreads.c include/host/hthread_mock.c include/host/bng_dma_engine.c $(LDLIBS) -o $$tmp/$(v); \
	  if timeout 300 $$tmp/$(v) > $$tmp/out 2>&1; then \
	    echo "hal-conformance: $(v) without the wait for puts before a barrier PASSED: the check misses it" >&2; exit 1; fi; \
	  echo "hal-conformance: $(v) without its wait for puts before a barrier fails, as it must ($$(grep -c 'FAIL: puts visible' $$tmp/out) visibility failures)";)

# ---- benchmark ---------------------------------------------------------------------

# oneDNN (f32 peer) when libdnnl-dev is installed; make bench tries to install it.
DNNL_HEADER := /usr/include/oneapi/dnnl/dnnl.h
bench_dnnl = $(if $(wildcard $(DNNL_HEADER)),-DBNG_BENCH_DNNL,)
bench_dnnl_libs = $(if $(wildcard $(DNNL_HEADER)),-ldnnl,)
BENCH_FLAVOURS := gnu portable

# Whether the benches link oneDNN, as a file that changes only when that does: a bench
# built before libdnnl-dev was installed is rebuilt with it.
BENCH_DNNL_STAMP := $(BUILD)/bench-dnnl
.PHONY: $(BENCH_DNNL_STAMP).check
$(BENCH_DNNL_STAMP): $(BENCH_DNNL_STAMP).check
	@mkdir -p $(@D); echo '$(bench_dnnl)' | cmp -s - $@ 2>/dev/null || echo '$(bench_dnnl)' > $@

# $(1) target, $(2) flavour
define bench_rules
$(BUILD)/$(1)/$(2)/bench: bench/bench.c $(BUILD)/$(1)/$(2)/libbatchnormgrad.a $(BENCH_DNNL_STAMP) | deps-c
	$$(CC) $$(CFLAGS) -std=c11 -Wall -Wextra -DBNG_HOST $$(call bench_dnnl) -Iinclude -Igenerated/$(1) $$< \
	  $(BUILD)/$(1)/$(2)/libbatchnormgrad.a $$(call bench_dnnl_libs) $(LDLIBS) -o $$@
endef
$(foreach t,$(ALL_TARGETS),$(foreach v,$(BENCH_FLAVOURS),$(eval $(call bench_rules,$(t),$(v)))))
BENCHES := $(foreach t,$(ALL_TARGETS),$(foreach v,$(BENCH_FLAVOURS),$(BUILD)/$(t)/$(v)/bench))

.PHONY: bench deps-bench bench-smoke
deps-bench:
	@if [ ! -f $(DNNL_HEADER) ] || ! command -v gnuplot >/dev/null; then \
	  ( $(call apt_install,libdnnl-dev gnuplot-nox) ) || echo "note: continuing without oneDNN or the plot"; fi

bench: deps-c deps-bench generated-fresh ## time fixed shapes on every target, gnu and portable backends: table, bench/results.csv, bench/results.png
	@$(MAKE) --no-print-directory $(BENCHES)
	@rm -f bench/results.csv
	@echo "ISA: $$(grep -o -m1 -w 'avx512f' /proc/cpuinfo || grep -o -m1 -w 'avx2' /proc/cpuinfo || uname -m); roofline: the faster of the two traffic-only loops (the one at 100%)"
	@echo "target  backend   dtype shape          contender                  median_us     GB/s vs_oneDNN roofline"
	@for b in $(BENCHES); do BNG_HAL_HOST=fast OMP_NUM_THREADS=1 $$b --backend $$(basename $$(dirname $$b)) --csv bench/results.csv || exit 1; done
	@if command -v gnuplot >/dev/null; then gnuplot bench/plot.gp && echo "plot: bench/results.png"; \
	else echo "note: no gnuplot, no plot (the table above and bench/results.csv are complete)"; fi

# make test's guard: the bench builds and runs one tiny shape (no timing is judged).
bench-smoke: $(BUILD)/$(HALF_TARGET)/gnu/bench
	BNG_HAL_HOST=fast OMP_NUM_THREADS=1 $< --backend gnu --shapes 4x64 --seconds 0 >/dev/null

# ---- fuzzing and valgrind ----------------------------------------------------------

FUZZ_SECONDS ?= 60
FUZZ_TARGET  := $(HALF_TARGET)
FUZZ         := $(BUILD)/fuzz/fuzz_params

.PHONY: fuzz memcheck deps-fuzz deps-valgrind
# (the probe is a whole fuzz target: libFuzzer links only with one)
deps-fuzz:
	@if ! command -v clang >/dev/null || ! echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
	    | clang -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null; then \
	  $(call apt_install,clang libclang-rt-14-dev,for make fuzz: libFuzzer); fi

# libFuzzer on every entry point of $(FUZZ_TARGET) (it has fp and hp), with
# AddressSanitizer and UndefinedBehaviorSanitizer; then the generator's loader fuzz.
# Artifacts (crash-*, leak-*) go to $(BUILD)/fuzz/artifacts, never into the tree; a
# finding worth keeping becomes a regression input in tests/fuzz/corpus/.
FUZZ_SOURCES := $(BNG_SOURCES_generated/$(FUZZ_TARGET)) include/host/bng_hal_host.c include/host/bng_dma_engine.c
$(FUZZ): tests/fuzz/fuzz_params.c $(FUZZ_SOURCES) $(wildcard generated/$(FUZZ_TARGET)/*.h) $(INCLUDE_HEADERS) | deps-fuzz
	@mkdir -p $(@D)
	clang -std=gnu11 -g -O1 -march=native -Wno-psabi -ffp-contract=off -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -DBNG_HOST -DBNG_VEC_BACKEND=BNG_VEC_GNU -Iinclude -Iinclude/host -Igenerated/$(FUZZ_TARGET) \
	  $< $(FUZZ_SOURCES) -lpthread -lm -o $@

fuzz: $(FUZZ) deps-python ## libFuzzer on the entry points, then the loader fuzz [FUZZ_SECONDS=60]
	@rm -rf $(BUILD)/fuzz/corpus && mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/artifacts && cp tests/fuzz/corpus/* $(BUILD)/fuzz/corpus/
	$(FUZZ) -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/artifacts/ $(BUILD)/fuzz/corpus 2>&1 | \
	  grep -E "^stat::number_of_executed_units|^stat::peak_rss|Done|ERROR|SUMMARY|==[0-9]+==|deadly|artifact" ; \
	  exit $${PIPESTATUS[0]}
	$(PY) tests/fuzz/fuzz_generator.py --seconds $(FUZZ_SECONDS)

deps-valgrind:
	@command -v valgrind >/dev/null || { $(call apt_install,valgrind); }

# Valgrind 3.19 cannot run AVX-512 code: memcheck builds without it.
memcheck: deps-valgrind ## the Check suites (gnu flavour) under valgrind: any error fails
	@BNG_TEST_QUICK=1 $(MAKE) --no-print-directory test-c VALGRIND=1 CFLAGS="$(CFLAGS) $(if $(filter x86_64,$(shell uname -m)),-mno-avx512f)"

# ---- firmware: cross builds, vendor drop, code-size report -------------------------

# Debian's oldest packaged gcc and clang, for the GCC 8-era feature-set check.
OLDEST_GCC   := gcc-11
OLDEST_CLANG := clang-13

.PHONY: cross-check vendor report deps-cross
deps-cross:
	@if ! command -v riscv64-unknown-elf-gcc >/dev/null || ! command -v arm-none-eabi-gcc >/dev/null \
	    || ! command -v tcc >/dev/null || ! command -v clang >/dev/null \
	    || ! command -v $(OLDEST_GCC) >/dev/null || ! command -v $(OLDEST_CLANG) >/dev/null; then \
	  $(call apt_install,gcc-riscv64-unknown-elf gcc-arm-none-eabi tcc clang $(OLDEST_GCC) $(OLDEST_CLANG),\
	    for make cross-check: bare-metal cross compilers and the oldest packaged gcc and clang$(comma) a large install$(comma) about 1 GB$(comma) once); fi

# make report needs only the RISC-V cross compiler.
deps-report:
	@if ! command -v $(REPORT_CROSS)-gcc >/dev/null; then \
	  $(call apt_install,gcc-$(REPORT_CROSS),for make report: the bare-metal RISC-V compiler$(comma) about 150 MB$(comma) once); fi

cross-check: deps-cross deps-c deps-python ## bare-metal RISC-V/ARM builds and symbols, pedantic gcc/clang, tcc suite, vendor drop
	OLDEST_COMPILERS="$(OLDEST_GCC) $(OLDEST_CLANG)" tests/scripts/cross_check.sh $(BUILD) $(PY) $(foreach r,$(GENERATED_ROOTS),$(notdir $(r)):$(subst $(space),$(comma),$(strip $(BNG_SOURCES_$(r)))))

vendor: deps-python ## render TARGET=t's drop for a firmware tree into DEST=dir, with a MANIFEST [CHANNELS=...] [HAL=hthreads]
	@[ -n "$$TARGET" ] && [ -n "$$DEST" ] || { echo "usage: make vendor TARGET=<t> DEST=<dir>" >&2; exit 2; }
	$(PY) -m generator vendor $(GEN_ARGS) $(if $(HAL),--hal "$$HAL") --dest "$$DEST"

REPORT_CROSS := riscv64-unknown-elf
REPORT_GEN   := $(BUILD)/report-gen
# The report renders TARGET (with CHANNELS, when given) into its own tree, builds its
# objects for the host and for bare-metal RISC-V (make rebuilds only what changed),
# and sizes every kernel from them.
report: deps-python deps-report ## per kernel of TARGET=t: shape, unroll, tile plan, code size (host and RISC-V) [CHANNELS=...]
	@[ -n "$$TARGET" ] || { echo "usage: make report TARGET=<t> [CHANNELS=\"48 96\"]" >&2; exit 2; }
	@$(PY) -m generator generate --out $(REPORT_GEN) $(GEN_ARGS) --quiet >/dev/null
	@$(MAKE) --no-print-directory report-run REPORT_ROOT=$(REPORT_GEN)/$$TARGET

# ---- housekeeping ------------------------------------------------------------------

.PHONY: clean help
clean: ## remove build/
	rm -rf $(BUILD)

help: ## this list
	@echo "usage: make <target> [TARGET=<t>] [CHANNELS=\"48 96\"]   targets: $(ALL_TARGETS)"
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  \1\t/' | expand -t 16

# ---- make report's second stage: the rendered tree's objects ----------------------

# Last in the file: the report tree's build.mk adds nothing to the lists above.
ifdef REPORT_ROOT
include $(REPORT_ROOT)/build.mk
REPORT_SOURCES := $(BNG_SOURCES_$(REPORT_ROOT))
REPORT_OBJ     := $(BUILD)/report/$(notdir $(REPORT_ROOT))
report_objects = $(addprefix $(REPORT_OBJ)/$(1)/,$(notdir $(REPORT_SOURCES:.c=.o)))
# A native target's compiler header (compiler/m3000.h) is the host's emulation of it
# (include/host/compiler/, freestanding C): its sizes stand in for the real compiler's.
REPORT_INCLUDES    := -Iinclude -I$(REPORT_ROOT) -Iinclude/host
REPORT_CROSS_FLAGS := -std=c99 -ffreestanding -O2 -ffp-contract=off -Wall -Wextra $(REPORT_INCLUDES)
$(REPORT_OBJ)/host/%.o: $(REPORT_ROOT)/%.c $(wildcard $(REPORT_ROOT)/*.h) $(INCLUDE_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) $(REPORT_INCLUDES) -c $< -o $@
$(REPORT_OBJ)/host/%.o: include/%.c $(wildcard $(REPORT_ROOT)/*.h) $(INCLUDE_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) $(REPORT_INCLUDES) -c $< -o $@
$(REPORT_OBJ)/$(REPORT_CROSS)/%.o: $(REPORT_ROOT)/%.c $(wildcard $(REPORT_ROOT)/*.h) $(INCLUDE_HEADERS)
	@mkdir -p $(@D)
	$(REPORT_CROSS)-gcc $(REPORT_CROSS_FLAGS) -c $< -o $@
$(REPORT_OBJ)/$(REPORT_CROSS)/%.o: include/%.c $(wildcard $(REPORT_ROOT)/*.h) $(INCLUDE_HEADERS)
	@mkdir -p $(@D)
	$(REPORT_CROSS)-gcc $(REPORT_CROSS_FLAGS) -c $< -o $@
.PHONY: report-run
report-run: $(call report_objects,host) $(call report_objects,$(REPORT_CROSS))
	@$(PY) -m generator report $(GEN_ARGS) \
	  --objects "host,nm,$(subst $(space),$(comma),$(call report_objects,host))" \
	  --objects "riscv64,$(REPORT_CROSS)-nm,$(subst $(space),$(comma),$(call report_objects,$(REPORT_CROSS)))"
endif
