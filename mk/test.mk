# The test programs and their runs: each target's Check suite in each build flavour, the
# half conversions, the manual's examples, the channel walk, the fork test, the host
# recipe for a drop, the MPI run, the HAL conformance check; and the checks beside make
# test (bit-sweep, dma-mutants). Every run of a program is a make target of its own
# (run/<program>/<mode>), so that make -j runs them side by side.

# Every tree under test: the committed ones and the test-only configurations.
SUITE_ROOTS := $(BNG_ROOTS)

TEST_SOURCES := tests/c/test_bng.c tests/c/bng_dtypes.c tests/c/bng_test_support.c \
  tests/c/bng_reference.c
TEST_HEADERS := $(wildcard tests/c/*.h)
# $(1) generated folder, $(2) flavour: where the flavour's library and programs go
flavour_dir = $(BUILD)/$(notdir $(1))/$(2)

# $(1) generated folder, $(2) flavour; output under build/<target>/<flavour>/
define suite_rules
$(call library_rules,$(1),$(call flavour_dir,$(1),$(2)),$(FLAVOUR_FLAGS_$(2)),$(HAL_OBJECTS_$(2)))
$(call flavour_dir,$(1),$(2))/test_bng: $(TEST_SOURCES) $(TEST_HEADERS) \
  $(call flavour_dir,$(1),$(2))/libbatchnormgrad.a | deps-c
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) $(FLAVOUR_FLAGS_$(2)) -I$(1) -Itests/c $$(CHECK_CFLAGS) \
	  $(TEST_SOURCES) $(call flavour_dir,$(1),$(2))/libbatchnormgrad.a $$(CHECK_LIBS) \
	  $(LDLIBS) -o $$@
endef
$(foreach r,$(SUITE_ROOTS),\
  $(foreach v,$(call flavours,$(r)),$(eval $(call suite_rules,$(r),$(v)))))
C_SUITES := $(foreach r,$(SUITE_ROOTS),\
  $(foreach v,$(call flavours,$(r)),$(call flavour_dir,$(r),$(v))/test_bng))

# The half conversions, exhaustively, through each backend's vector loads and stores.
HALF_SUITES := $(BUILD)/test_half $(BUILD)/test_half_portable $(BUILD)/test_half_gcc8
HALF_DEPS   := tests/c/test_half.c tests/c/bng_ftz.h include/bng_half.h include/bng_vec.h
$(BUILD)/test_half: $(HALF_DEPS) | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) -DBNG_VEC_BACKEND=BNG_VEC_GNU $(CHECK_CFLAGS) $< \
	  $(CHECK_LIBS) $(LDLIBS) -o $@
$(BUILD)/test_half_portable: $(HALF_DEPS) | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) $(FLAVOUR_FLAGS_portable) $(CHECK_CFLAGS) $< \
	  $(CHECK_LIBS) $(LDLIBS) -o $@
# The GNU backend as a GCC 8 compiles it (its branch without __builtin_convertvector).
$(BUILD)/test_half_gcc8: $(HALF_DEPS) tests/scripts/gcc8_features.h | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) -DBNG_VEC_BACKEND=BNG_VEC_GNU \
	  -include tests/scripts/gcc8_features.h $(CHECK_CFLAGS) $< $(CHECK_LIBS) $(LDLIBS) -o $@

# The manual's examples, built the way the README tells a caller to: the parameter-block
# calls' (p, s) and the function-library page's explicit-argument calls' (explicit_p,
# explicit_s).
FIRST_LIB := $(BUILD)/$(FIRST_TARGET)/libbatchnormgrad.a
EXAMPLE_FLAGS := -Wall -Wextra -DBNG_HOST -Iinclude -Igenerated/$(FIRST_TARGET) -Itests/c
EXAMPLE_SOURCES := tests/c/bng_example.c tests/c/bng_reference.c
MANUAL_EXAMPLES := $(foreach e,p s explicit_p explicit_s,$(BUILD)/$(FIRST_TARGET)/manual_example_$(e))
$(BUILD)/$(FIRST_TARGET)/manual_example_%: tests/c/manual_example_%.c $(EXAMPLE_SOURCES) \
  $(FIRST_LIB)
	$(CC) $(CFLAGS) $(SANITIZE_FLAGS) -std=c99 $(EXAMPLE_FLAGS) $< $(EXAMPLE_SOURCES) $(FIRST_LIB) \
	  $(LDLIBS) -o $@

# The channel walk (tests/walk/): test-only targets whose channel lists walk every
# boundary of the kernel plan, computed from the plan by walk_targets.py; each runs
# tests/walk/test_walk.c on the gnu flavour. make check walks the small one only.
WALK_GEN   := $(BUILD)/gen-walk
ifneq ($(filter test test-c suites check run/% $(BUILD)/%,$(MAKECMDGOALS)),)
include $(WALK_GEN)/roots.mk
endif
$(WALK_GEN)/roots.mk: tests/walk/walk_targets.py $(GENERATOR_SOURCES) | deps-python
	@mkdir -p $(@D)
	$(PY) tests/walk/walk_targets.py > $(WALK_GEN)/targets.yaml
	$(PY) -m generator generate --config $(WALK_GEN)/targets.yaml --out $(WALK_GEN) --quiet
	@echo 'include $$(wildcard $(WALK_GEN)/*/build.mk)' > $@
WALK_ROOTS := $(filter-out $(SUITE_ROOTS),$(BNG_ROOTS))
WALK_SOURCES := tests/walk/test_walk.c tests/c/bng_dtypes.c tests/c/bng_test_support.c \
  tests/c/bng_reference.c
define walk_rules
$(call library_rules,$(1),$(call flavour_dir,$(1),gnu),$(FLAVOUR_FLAGS_gnu),)
$(call flavour_dir,$(1),gnu)/test_walk: $(WALK_SOURCES) $(TEST_HEADERS) \
  $(call flavour_dir,$(1),gnu)/libbatchnormgrad.a | deps-c
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) $(FLAVOUR_FLAGS_gnu) -I$(1) -Itests/c $$(CHECK_CFLAGS) \
	  $(WALK_SOURCES) $(call flavour_dir,$(1),gnu)/libbatchnormgrad.a $$(CHECK_LIBS) \
	  $(LDLIBS) -o $$@
endef
$(foreach r,$(WALK_ROOTS),$(eval $(call walk_rules,$(r))))
WALK_SUITES := $(foreach r,$(WALK_ROOTS),$(call flavour_dir,$(r),gnu)/test_walk)

# ---- runs --------------------------------------------------------------------------

# VALGRIND=1: every test program under valgrind's memcheck, an error fails the run.
# The host HAL's core threads live until exit: their stacks are "possibly lost" by design.
# Under ThreadSanitizer: the one race the SPMD model has by design (tests/tsan.supp).
TSAN := $(filter thread,$(subst $(comma), ,$(SANITIZE)))
RUN := $(if $(TSAN),TSAN_OPTIONS=suppressions=$(CURDIR)/tests/tsan.supp) \
  $(if $(VALGRIND),valgrind -q --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite --show-possibly-lost=no,)

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
# (the fast HAL changes how data moves only: a fast run runs the cases that move data)
CASES_fast            := CK_INCLUDE_TAGS=shared
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
GNU_SUITES := $(filter %/gnu/test_bng,$(C_SUITES))
FTZ_SUITES := $(HALF_SUITES) \
  $(filter %/gnu/test_bng %/gnu_softhalf/test_bng %/portable/test_bng,$(C_SUITES))
C_RUNS := $(foreach s,$(C_SUITES),run/$(s)/plain) \
  $(if $(VALGRIND),,$(foreach s,$(GNU_SUITES),run/$(s)/fast) \
    $(foreach s,$(FTZ_SUITES),run/$(s)/ftz))
HALF_RUNS   := $(foreach s,$(HALF_SUITES),run/$(s)/plain)
EXAMPLE_RUNS := $(foreach s,$(MANUAL_EXAMPLES),run/$(s)/plain)
# Under a sanitizer the small walk only: the wide ones' unrolled kernels take minutes to
# compile instrumented, and their guard bytes already catch a write past an output.
WALK_RUNS   := $(foreach s,$(if $(SANITIZE),$(filter %/walk_small/gnu/test_walk,$(WALK_SUITES)),\
  $(WALK_SUITES)),run/$(s)/plain)
# run/<program>/<mode> -> the program, and the cases it runs in that mode.
program_of = $(patsubst run/%/,%,$(dir $(1)))
cases_of = $(or $(CASES_$(notdir $(1))),$(CASES_$(call flavour_of,$(call program_of,$(1)))))
$(foreach r,$(HALF_RUNS) $(EXAMPLE_RUNS) $(WALK_RUNS) $(C_RUNS),\
  $(eval $(call run_rule,$(call program_of,$(r)),$(notdir $(r)),$(call cases_of,$(r)))))

# fork() after the host HAL's core threads exist: the child's _s starts its own (a hang
# fails by alarm). Not under ThreadSanitizer: it does not support starting threads after
# a multi-threaded fork.
FORK_TEST := $(BUILD)/$(FIRST_TARGET)/test_fork
$(FORK_TEST): tests/c/test_fork.c $(EXAMPLE_SOURCES) $(FIRST_LIB) | deps-c
	$(CC) $(CFLAGS) $(SANITIZE_FLAGS) -std=gnu11 $(EXAMPLE_FLAGS) \
	  $< $(EXAMPLE_SOURCES) $(FIRST_LIB) $(LDLIBS) -o $@
.PHONY: fork-test
fork-test: $(FORK_TEST)
	$(if $(TSAN),@echo "fork-test: not under ThreadSanitizer",$(RUN) $<)

# docs/porting.md's host recipe for a vendored drop, run as written (every target).
.PHONY: drop-on-host drop-builds channels-flow
drop-on-host: deps-c deps-python
	@set -e; for t in $(ALL_TARGETS); do \
	  tests/scripts/drop_on_host.sh $(BUILD) $(PY) "$(CC)" $$t; done

# docs/porting.md's hthreads recipe, its commands and program taken from the document, in
# both launch models (every target; a hang fails by timeout).
.PHONY: hthreads-on-host
hthreads-on-host: deps-c deps-python
	@set -e; for t in $(ALL_TARGETS); do \
	  tests/scripts/hthreads_on_host.sh $(BUILD) $(PY) "$(CC)" $$t; done

# A drop taken in by its build glue (CMakeLists.txt, bng.mk): firmware builds with a
# bare-metal toolchain (Cortex-M7 linked, RV64), the Make fragment, the host with CMake,
# the hthreads HAL; on the first target (the glue is the same for every target, and the
# first has no half kernels, whose bare-metal compiles take minutes).
## take a drop into CMake (bare-metal Cortex-M7 and RV64 toolchain files, the host) and
## Make-fragment builds, as a firmware team does (about a minute)
drop-builds: deps-drop deps-python
	tests/scripts/drop_builds.sh $(BUILD) $(PY) $(FIRST_TARGET)

# The firmware engineer's sequence with new channel sizes, as make commands in a
# scratch copy of the project (tests/scripts/channels_flow.sh).
## new channel sizes as a user sets them: generate CHANNELS=, regen-check, vendor,
## verify-drop, a refused list, in a scratch copy of the project (about 30 s)
channels-flow: deps-python
	tests/scripts/channels_flow.sh $(BUILD) $(HALF_TARGET)

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
.PHONY: syncbn
$(SYNCBN): tests/mpi/syncbn.c tests/c/bng_reference.c tests/c/bng_reference.h \
  $(BUILD)/$(HALF_TARGET)/libbatchnormgrad.a | deps-mpi deps-c
	$(MPICC) $(CFLAGS) $(SANITIZE_FLAGS) -std=c99 -Wall -Wextra -ffp-contract=off -DBNG_HOST \
	  -Iinclude -Igenerated/$(HALF_TARGET) -Itests/c $< tests/c/bng_reference.c \
	  $(BUILD)/$(HALF_TARGET)/libbatchnormgrad.a $(LDLIBS) -o $@
## one synchronized batch-norm backward step over MPI ranks, checked against one process [NP=4]
syncbn: generated-fresh $(SYNCBN)
	$(SYNCBN_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np $(NP) $(SYNCBN)
# run/<syncbn>/np<N>: N ranks, twice; the second run's hash must be the first's.
define syncbn_run
.PHONY: run/$(SYNCBN)/np$(1)
run/$(SYNCBN)/np$(1): $(SYNCBN)
	@echo "== $(SYNCBN) ($(1) rank(s), two runs)"; \
	$(SYNCBN_ENV) tests/scripts/syncbn_twice.sh $(1) $(MPIRUN) $(MPIRUN_FLAGS) -np $(1) $(SYNCBN)
endef
SYNCBN_RUNS := $(if $(VALGRIND)$(TSAN),,$(foreach n,1 2 3,run/$(SYNCBN)/np$(n)))
$(foreach n,1 2 3,$(eval $(call syncbn_run,$(n))))

# ---- HAL conformance ---------------------------------------------------------------

# include/hal/bng_hal_conformance.c (shipped beside a vendored HAL) against every HAL
# shipped, per target (and the split-memory test targets, where it checks through DMA
# only and adds _p's workspace): the host HAL (the gnu flavour's library), the hthreads
# HAL on the runtime mock in both launch models; the hthreads launch test (late fan-out
# workers, BNG_ENOMEM with untouched outputs, uncreated barrier ids trap); and the proof
# that the check catches the reference HAL without its wait for its puts before a barrier.
CONFORMANCE_HALS := gnu hthreads_fanout hthreads_spmd
CONFORMANCE_SOURCES := include/hal/bng_hal_conformance.c tests/c/hal_conformance_main.c
CONFORMANCE_HEADERS := include/hal/bng_hal_conformance.h $(INCLUDE_HEADERS) \
  $(wildcard include/hal/*.h include/host/*.h)
# $(1) generated folder, $(2) flavour whose library (and HAL) the programs link
define conformance_rules
$(call flavour_dir,$(1),$(2))/hal_conformance: $(CONFORMANCE_SOURCES) $(CONFORMANCE_HEADERS) \
  $(call flavour_dir,$(1),$(2))/libbatchnormgrad.a | deps-c
	$$(CC) $$(CFLAGS) $(HAL_CFLAGS) $(FLAVOUR_FLAGS_$(2)) -I$(1) $(CONFORMANCE_SOURCES) \
	  $(call flavour_dir,$(1),$(2))/libbatchnormgrad.a $(LDLIBS) -o $$@
$(call flavour_dir,$(1),$(2))/test_hthreads_launch: tests/c/test_hthreads_launch.c \
  $(CONFORMANCE_HEADERS) $(call flavour_dir,$(1),$(2))/libbatchnormgrad.a | deps-c
	$$(CC) $$(CFLAGS) $(HAL_CFLAGS) $(FLAVOUR_FLAGS_$(2)) -I$(1) $$< \
	  $(call flavour_dir,$(1),$(2))/libbatchnormgrad.a $(LDLIBS) -o $$@
endef
CONFORMANCE_ROOTS := $(GENERATED_ROOTS) \
  $(foreach r,$(filter-out $(GENERATED_ROOTS),$(SUITE_ROOTS)),\
    $(if $(filter split,$(BNG_MEMORY_$(r))),$(r)))
$(foreach r,$(CONFORMANCE_ROOTS),\
  $(foreach v,$(CONFORMANCE_HALS),$(eval $(call conformance_rules,$(r),$(v)))))
CONFORMANCE_PROGRAMS := $(foreach r,$(CONFORMANCE_ROOTS),\
  $(foreach v,$(CONFORMANCE_HALS),$(call flavour_dir,$(r),$(v))/hal_conformance))
LAUNCH_TESTS := $(foreach r,$(CONFORMANCE_ROOTS),\
  $(foreach v,hthreads_fanout hthreads_spmd,$(call flavour_dir,$(r),$(v))/test_hthreads_launch))

# The hthreads HAL without its barrier's wait for the calling core's puts (the
# statement found by code: tests/scripts/hal_barrier_mutant.sh), built per launch model
# with the check: the check must fail it.
BARRIER_MUTANT := $(BUILD)/hal-mutant/bng_hal_hthreads.c
BARRIER_MUTANTS := $(foreach v,hthreads_fanout hthreads_spmd,$(BUILD)/hal-mutant/$(v))
$(BARRIER_MUTANT): include/hal/bng_hal_hthreads.c tests/scripts/hal_barrier_mutant.sh
	@mkdir -p $(@D)
	tests/scripts/hal_barrier_mutant.sh $< > $@
$(BARRIER_MUTANTS): $(BUILD)/hal-mutant/%: $(BARRIER_MUTANT) $(CONFORMANCE_SOURCES) \
  $(CONFORMANCE_HEADERS) | deps-c
	$(CC) $(CFLAGS) $(HAL_CFLAGS) $(FLAVOUR_FLAGS_$*) -Igenerated/$(FIRST_TARGET) \
	  $(CONFORMANCE_SOURCES) $< include/host/hthread_mock.c include/host/hthread_launch.c \
	  include/host/bng_dma_engine.c $(LDLIBS) -o $@

.PHONY: hal-conformance
## the HAL conformance check against every HAL shipped, the hthreads launch test
hal-conformance: $(CONFORMANCE_PROGRAMS) $(LAUNCH_TESTS) $(BARRIER_MUTANTS)
	@set -e; for p in $(CONFORMANCE_PROGRAMS) $(LAUNCH_TESTS); do $(RUN) timeout 300 $$p; done
	@set -e; for p in $(BARRIER_MUTANTS); do v=$$(basename $$p); \
	  if timeout 300 $$p > $$p.out 2>&1; then echo "hal-conformance: $$v without the wait" \
	    "for puts before a barrier PASSED: the check misses it" >&2; exit 1; fi; \
	  echo "hal-conformance: $$v without its wait for puts before a barrier fails, as it" \
	    "must ($$(grep -c 'FAIL: puts visible' $$p.out) visibility failures)"; done

# ---- checks beside make test -------------------------------------------------------

# Every output of a sweep of shapes through the public ABI, hashed, per target and
# flavour: run before and after a refactor and diff the folders.
BIT_SWEEP_OUT ?= $(BUILD)/bit-sweep
# (one caller: not the hthreads flavours, whose launch models the suite drives)
sweep_flavours = $(filter-out hthreads_%,$(call flavours,$(1)))
define bit_sweep_rules
$(call flavour_dir,$(1),$(2))/bit_sweep: tests/scripts/bit_sweep.c \
  $(call flavour_dir,$(1),$(2))/libbatchnormgrad.a | deps-c
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) -std=gnu11 $(FLAVOUR_FLAGS_$(2)) -I$(1) $$< \
	  $(call flavour_dir,$(1),$(2))/libbatchnormgrad.a $(LDLIBS) -o $$@
endef
$(foreach r,$(SUITE_ROOTS),\
  $(foreach v,$(call sweep_flavours,$(r)),$(eval $(call bit_sweep_rules,$(r),$(v)))))
BIT_SWEEPS := $(foreach r,$(SUITE_ROOTS),\
  $(foreach v,$(call sweep_flavours,$(r)),$(call flavour_dir,$(r),$(v))/bit_sweep))

.PHONY: bit-sweep
## hash every output of a shape sweep per target and flavour into build/bit-sweep/
bit-sweep: $(BIT_SWEEPS)
	@mkdir -p $(BIT_SWEEP_OUT)
	@for b in $(BIT_SWEEPS); do \
	  f=$(BIT_SWEEP_OUT)/$$(basename $$(dirname $$(dirname $$b))).$$(basename $$(dirname $$b)).txt; \
	  $$b > $$f; echo "$$f: $$(wc -l < $$f) cases"; done

# Proof that the asynchronous host HAL catches a missing DMA wait: every wait in the
# driver removed in turn must fail the suite. QUICK=1: the tiny test target only (its
# 20 KiB private memory streams tiles), else every target and test target.
MUTANT_ROOTS := $(if $(QUICK),$(filter %/tiny,$(SUITE_ROOTS)),$(SUITE_ROOTS))
.PHONY: dma-mutants
## remove each DMA wait of the driver in turn: the suite must catch every one [QUICK=1]
dma-mutants: $(foreach r,$(MUTANT_ROOTS),$(call flavour_dir,$(r),gnu)/libbatchnormgrad.a) | deps-c
	tests/scripts/dma_mutants.sh $(BUILD) "$(CC)" "$(CFLAGS) $(BNG_CFLAGS) $(FLAVOUR_FLAGS_gnu)" \
	  $(foreach r,$(MUTANT_ROOTS),$(r):$(call flavour_dir,$(r),gnu)/obj)
