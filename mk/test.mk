# The test programs and their runs: each target's Check suite in each build flavour, the
# half conversions, the manual's examples, the channel walk, the fork test, the host
# recipe for a drop, the MPI run, the HAL conformance check, the bench smoke run; and the
# checks beside make test (bit-sweep, dma-mutants).

# ---- test programs -----------------------------------------------------------------

TEST_HEADERS := $(wildcard tests/c/*.h)
TSAN := $(filter thread,$(subst $(comma), ,$(SANITIZE)))
ASAN := $(filter address,$(subst $(comma), ,$(SANITIZE)))

# The harness (the suites, the channel walk, the float64 reference: they draw the data,
# compute the reference and check every output, most of a suite's time) under
# AddressSanitizer is the uninstrumented build's objects, compiled once for it and for
# make test: the sanitizer instruments the library, whose every access to the harness's
# buffers it checks (they come from its allocator, with their redzones). Under
# ThreadSanitizer the harness stays instrumented (in the SPMD launch model its reads
# of the outputs on each core are part of what is checked) but for its data and checks,
# bng_test_data.c and the float64 reference: they run on the caller's thread before a
# call and after its return, and tell the runtime what they did to the library's
# buffers as whole ranges, so they too are the uninstrumented build's objects (their
# element loops were half of a ThreadSanitizer suite's time). (Not with CFLAGS of the
# command line or the environment: make tracks files, not flags.)
shares_harness = $(and $(ASAN),$(filter file,$(origin CFLAGS)))
shares_data = $(and $(or $(ASAN),$(TSAN)),$(filter file,$(origin CFLAGS)))
plain_dir = $(patsubst $(BUILD)/%,$(PLAIN_BUILD)/%,$(1))
# $(1) an object folder of this build -> the folder of its harness objects, of its data's
harness_dir = $(if $(shares_harness),$(call plain_dir,$(1)),$(1))
data_dir = $(if $(shares_data),$(call plain_dir,$(1)),$(1))
HARNESS_CFLAGS := $(if $(shares_harness),$(UNINSTRUMENTED_CFLAGS),$(BNG_CFLAGS))
DATA_CFLAGS := $(if $(shares_data),$(UNINSTRUMENTED_CFLAGS),$(BNG_CFLAGS))

# A suite's objects: its sources compiled per flavour like the library's (against the
# folder's headers), with Check's flags. The hthreads flavours take gnu's objects of the
# sources the launch model does not reach: all but bng_test_support.c.
# $(1) generated folder, $(2) flavour
define test_object_rules
$(call harness_dir,$(call flavour_dir,$(1),$(2))/obj)/%.o: tests/c/%.c $(TEST_HEADERS) \
  $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(HARNESS_CFLAGS) $(FLAVOUR_FLAGS_$(2)) -I$(1) -Itests/c $$(CHECK_CFLAGS) \
	  -c $$< -o $$@
$(call harness_dir,$(call flavour_dir,$(1),$(2))/obj)/%.o: tests/walk/%.c $(TEST_HEADERS) \
  $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(HARNESS_CFLAGS) $(FLAVOUR_FLAGS_$(2)) -I$(1) -Itests/c $$(CHECK_CFLAGS) \
	  -c $$< -o $$@
$(if $(and $(shares_data),$(if $(shares_harness),,own)),$(call data_object_rule,$(1),$(2)))
endef
# Under ThreadSanitizer the data object's own rule (under AddressSanitizer and in the
# uninstrumented build the harness's rule above makes it, in the same folder).
define data_object_rule
$(call data_dir,$(call flavour_dir,$(1),$(2))/obj)/bng_test_data.o: tests/c/bng_test_data.c \
  $(TEST_HEADERS) $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(DATA_CFLAGS) $(FLAVOUR_FLAGS_$(2)) -I$(1) -Itests/c $$(CHECK_CFLAGS) \
	  -c $$< -o $$@
endef
# test_bng's suites, a file each (tests/c/bng_suites.h declares what each adds).
BNG_SUITE_SOURCES := $(sort $(wildcard tests/c/suite_*.c))
BNG_SUITE_OBJECTS := $(notdir $(BNG_SUITE_SOURCES:.c=.o))
# The suites compute nothing with the vector backend or the half type (they read and
# write halves by F16C's conversions where the host has them, else bng_f16.h's, exact
# either way: bng_test_support.h; and call the library through pointers):
# gnu_softhalf, portable and native link gnu's objects of them, against their own
# library. (native's flags are portable's but for the backend's name, which only the
# vector headers read, and -Iinclude/host, for the emulated vector header: no suite
# reaches either, and each suite preprocesses under native's flags to its text under
# portable's.)
TEST_OBJECTS_FROM_gnu_softhalf := gnu
TEST_OBJECTS_FROM_portable     := gnu
TEST_OBJECTS_FROM_native       := gnu
# $(1) flavour -> the flavour whose objects of the suites and their data it links
test_flavour = $(or $(TEST_OBJECTS_FROM_$(1)),$(SOURCES_FROM_$(1)),$(1))
# $(1) generated folder, $(2) flavour -> the folder of its suites' objects: gnu's for
# the flavours above and the hthreads ones (whose support library is their own)
test_dir = $(call harness_dir,$(call flavour_dir,$(1),$(call test_flavour,$(2)))/obj)
# $(1) generated folder, $(2) flavour, $(3) the test's main object (test_bng.o,
# test_walk.o) -> the objects of its program (test_bng's: its suites')
test_objects = $(addprefix $(call test_dir,$(1),$(2))/,$(3) bng_dtypes.o \
  $(if $(filter test_bng.o,$(3)),$(BNG_SUITE_OBJECTS))) \
  $(call harness_dir,$(call flavour_dir,$(1),$(or $(TEST_OBJECTS_FROM_$(2)),$(2)))/obj)/bng_test_support.o \
  $(call data_dir,$(call flavour_dir,$(1),$(call test_flavour,$(2)))/obj)/bng_test_data.o \
  $(REFERENCE_OBJECT)
# The float64 reference knows no target and no flavour: one object for every suite.
REFERENCE_OBJECT := $(call data_dir,$(BUILD)/obj)/bng_reference.o
$(REFERENCE_OBJECT): tests/c/bng_reference.c tests/c/bng_reference.h | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DATA_CFLAGS) -c $< -o $@
# $(1) generated folder, $(2) flavour, $(3) the program's name (test_bng, test_walk)
define test_program_rules
$(call test_object_rules,$(1),$(2))
$(call flavour_dir,$(1),$(2))/$(3): $(call test_objects,$(1),$(2),$(3).o) \
  $(call flavour_dir,$(1),$(2))/libbatchnormgrad.a
	$$(CC) $$(CFLAGS) $$(CHECK_CFLAGS) $$^ $$(CHECK_LIBS) $(LDLIBS) -o $$@
endef

# Each target's suite, in build/<target>/<flavour>/ (which of them run: the test
# matrix, below)
$(foreach r,$(SUITE_ROOTS),\
  $(foreach v,$(call flavours,$(r)),$(eval $(call test_program_rules,$(r),$(v),test_bng))))

# The half conversions, exhaustively, through each backend's vector loads and stores.
HALF_SUITES := $(BUILD)/test_half $(BUILD)/test_half_portable $(BUILD)/test_half_gcc8
HALF_DEPS   := tests/c/test_half.c tests/c/bng_ftz.h include/bng_f16.h include/bng_sqrt.h include/bng_ukernel.h \
  $(wildcard include/bng_vec*.h)
$(BUILD)/test_half: $(HALF_DEPS) | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) -DBNG_VEC_BACKEND=BNG_VEC_GNU $(CHECK_CFLAGS) $< \
	  $(CHECK_LIBS) $(LDLIBS) -o $@
$(BUILD)/test_half_portable: $(HALF_DEPS) | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) $(FLAVOUR_FLAGS_portable) $(CHECK_CFLAGS) $< \
	  $(CHECK_LIBS) $(LDLIBS) -o $@
# The GNU backend as a GCC 8 compiles it (its branch without __builtin_convertvector),
# every width one vector as on a DSP's GCC (BNG_GNU_LANES 64, bng_vec_gnu.h), for a
# split target (BNG_SPLIT_MEMORY: its masked half loads convert their register, what the
# fused ReLU runs there; the split suites run that on the GCC 9+ branch).
$(BUILD)/test_half_gcc8: $(HALF_DEPS) tests/scripts/gcc8_features.h | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) -DBNG_VEC_BACKEND=BNG_VEC_GNU -DBNG_GNU_LANES=64 \
	  -DBNG_SPLIT_MEMORY=1 -include tests/scripts/gcc8_features.h $(CHECK_CFLAGS) $< \
	  $(CHECK_LIBS) $(LDLIBS) -o $@

# The manual's examples, built the way the README tells a caller to: the parameter-block
# calls' (p, s), the function-library page's explicit-argument calls' (explicit_p,
# explicit_s) and, where the first target has the training forward (its plan's sources
# hold batch_norm_fwd.c), the FusedBatchNorm page's (fusedbatchnorm_s).
FIRST_LIB := $(BUILD)/$(FIRST_TARGET)/libbatchnormgrad.a
EXAMPLE_FLAGS := -Wall -Wextra -DBNG_HOST -Iinclude -Igenerated/$(FIRST_TARGET) -Itests/c
EXAMPLE_SOURCES := tests/c/bng_example.c tests/c/bng_reference.c
MANUAL_EXAMPLES := $(foreach e,p s explicit_p explicit_s \
  $(if $(filter %/batch_norm_fwd.c,$(BNG_SOURCES_generated/$(FIRST_TARGET))),fusedbatchnorm_s),\
  $(BUILD)/$(FIRST_TARGET)/manual_example_$(e))
$(BUILD)/$(FIRST_TARGET)/manual_example_%: tests/c/manual_example_%.c $(EXAMPLE_SOURCES) \
  $(FIRST_LIB)
	$(CC) $(CFLAGS) $(SANITIZE_FLAGS) -std=c99 $(EXAMPLE_FLAGS) $< $(EXAMPLE_SOURCES) $(FIRST_LIB) \
	  $(LDLIBS) -o $@

# fork() after the host HAL's core threads exist: the child's _s starts its own (a hang
# fails by alarm). Not under ThreadSanitizer: it does not support starting threads after
# a multi-threaded fork.
FORK_TEST := $(BUILD)/$(FIRST_TARGET)/test_fork
$(FORK_TEST): tests/c/test_fork.c $(EXAMPLE_SOURCES) $(FIRST_LIB) | deps-c
	$(CC) $(CFLAGS) $(SANITIZE_FLAGS) -std=gnu11 $(EXAMPLE_FLAGS) \
	  $< $(EXAMPLE_SOURCES) $(FIRST_LIB) $(LDLIBS) -o $@

# The channel walk (tests/walk/): test-only targets whose channel lists walk every
# boundary of the kernel plan, computed from the plan by walk_targets.py, and walk_gsm,
# a shipped target's memory map at the widest count it accepts (the _s scratch then
# ends where its memory.shared does); each runs tests/walk/test_walk.c on the gnu
# flavour. make check walks the small one only.
WALK_GEN   := $(PLAIN_BUILD)/gen-walk
ifneq ($(filter test test-c check coverage-% run/% $(BUILD)/%,$(MAKECMDGOALS)),)
include $(WALK_GEN)/roots.mk
endif
$(WALK_GEN)/roots.mk: tests/walk/walk_targets.py targets.yaml $(GENERATOR_SOURCES) | deps-python
	@mkdir -p $(@D)
	@$(PY) tests/walk/walk_targets.py > $(WALK_GEN)/targets.yaml
	@$(PY) -m generator generate --config $(WALK_GEN)/targets.yaml --out $(WALK_GEN) --quiet
	@echo 'include $$(wildcard $(WALK_GEN)/*/build.mk)' > $@
WALK_ROOTS := $(filter-out $(SUITE_ROOTS),$(BNG_ROOTS))
$(foreach r,$(WALK_ROOTS),$(eval $(call flavour_rules,$(r),gnu)))
$(foreach r,$(WALK_ROOTS),$(eval $(call test_program_rules,$(r),gnu,test_walk)))
WALK_SUITES := $(foreach r,$(WALK_ROOTS),$(call flavour_dir,$(r),gnu)/test_walk)

# tests/mpi/syncbn.c: one synchronized forward step (PARTIALS_OUT, an all-gather merged
# in rank order, PARTIALS_IN) and one synchronized backward step (batch_norm_grad_ext.h's
# reduce, an all-gather summed in rank order, apply) across MPI ranks that hold
# different numbers of rows, checked against the whole batch in one process and
# against itself run after run. Open MPI from Debian (openmpi-bin, libopenmpi-dev), installed like
# Check. make syncbn NP=4 runs it; make test runs 1, 2 and 3 ranks, each twice (the two
# runs' hashes must agree). Not under ThreadSanitizer or valgrind (Open MPI's threads
# and shared-memory transport are not ours to check); under AddressSanitizer without
# leak reports (Open MPI keeps its allocations until exit).
MPICC  ?= mpicc
MPIRUN ?= mpirun
NP     ?= 4
SYNCBN := $(BUILD)/$(HALF_TARGET)/syncbn
MPIRUN_FLAGS := --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)
SYNCBN_ENV = $(if $(ASAN),ASAN_OPTIONS=detect_leaks=0:$(ASAN_RUN_OPTIONS))
$(SYNCBN): tests/mpi/syncbn.c tests/c/bng_reference.c tests/c/bng_reference.h \
  $(BUILD)/$(HALF_TARGET)/libbatchnormgrad.a | deps-mpi deps-c
	$(MPICC) $(CFLAGS) $(SANITIZE_FLAGS) -std=c99 -Wall -Wextra -ffp-contract=off -DBNG_HOST \
	  -Iinclude -Igenerated/$(HALF_TARGET) -Itests/c $< tests/c/bng_reference.c \
	  $(BUILD)/$(HALF_TARGET)/libbatchnormgrad.a $(LDLIBS) -o $@
.PHONY: syncbn
## one synchronized batch-norm backward step over MPI ranks, checked against one process [NP=4]
syncbn: generated-fresh $(SYNCBN)
	$(SYNCBN_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np $(NP) $(SYNCBN)

# include/programs/bng_hal_conformance.c (shipped beside a vendored HAL) against every HAL
# shipped, per target (and the split-memory test targets, where it checks through DMA
# only and adds _p's workspace): the host HAL (the gnu flavour's library), the hthreads
# HAL on the runtime mock in both launch models; the hthreads launch test (late fan-out
# workers, BNG_ENOMEM with untouched outputs, uncreated barrier ids trap); and the proof
# that the check catches the reference HAL without its wait for its puts before a barrier.
CONFORMANCE_HALS := gnu hthreads_fanout hthreads_spmd
CONFORMANCE_SOURCES := include/programs/bng_hal_conformance.c tests/c/hal_conformance_main.c
CONFORMANCE_HEADERS := include/programs/bng_hal_conformance.h $(INCLUDE_HEADERS) \
  $(wildcard include/hal/*.h include/programs/*.h include/host/*.h)
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
# The suite roots with split memory spaces.
SPLIT_ROOTS := $(foreach r,$(SUITE_ROOTS),$(if $(filter split,$(BNG_MEMORY_$(r))),$(r)))
CONFORMANCE_ROOTS := $(GENERATED_ROOTS) $(filter-out $(GENERATED_ROOTS),$(SPLIT_ROOTS))
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

# ---- runs --------------------------------------------------------------------------

# Every run of make test is a make target of its own, run/<program>/<mode> (or
# run/<what>/<which> for a script), so that make -j runs them side by side and -O keeps
# each one's output together. tests/scripts/run_test.sh prints its seconds and records
# its result in $(RESULTS) for the closing count (tests/scripts/count_runs.sh).
RESULTS := $(BUILD)/results
# $(1) run target, $(2) prerequisites, $(3) environment, $(4) command
define run_rule
.PHONY: $(1)
$(1): $(2)
	@$(3) tests/scripts/run_test.sh $(RESULTS) $(1) $(4)
endef
# $(1) the runs: make -k runs every one (a run whose program does not build is counted
# as failed), then the closing count, the last line: "programs: N passed, M failed in
# <wall time>" (from the start of the builds).
run_and_count = start=$$(date +%s); rm -rf $(RESULTS); \
  $(MAKE) --no-print-directory -k -j$(JOBS) -O $(1); \
  TIER_START=$$start tests/scripts/count_runs.sh $(RESULTS) $(1)

# VALGRIND=1: every test program under valgrind's memcheck, an error fails the run.
# The host HAL's core threads live until exit: their stacks are "possibly lost" by design.
# Under ThreadSanitizer: the one race the SPMD model has by design (tests/tsan.supp).
# Under either sanitizer, a freed block's shadow is zeroed in place, not unmapped for the
# next case's buffers to fault back in page by page (clear_shadow_mmap_threshold, by
# default 64 KiB; each fault of a threaded process flushes the other CPUs' TLBs: on a
# 2-vCPU VM two thirds of a ThreadSanitizer suite's system time), and AddressSanitizer
# holds 16 MiB of freed blocks in quarantine, not 256, so that a case's buffers reuse
# the last case's pages (the library frees nothing; use after free is the suites' own).
SHADOW_RUN_OPTIONS := clear_shadow_mmap_threshold=1099511627776
ASAN_RUN_OPTIONS := $(SHADOW_RUN_OPTIONS):quarantine_size_mb=16
# And every run is at the quick size, and a suite's cases run in its one process
# (CK_FORK=no), not each in a child of its own: a child copies the sanitizer's mappings
# and ends with a leak check of its own, and the HAL's core threads live from case to
# case as on the part (a ThreadSanitizer suite: 72 s forked, 57 s in one process).
# Every run, checked or not, asks glibc's malloc for transparent huge pages (where the
# kernel gives them on request: its madvise mode, this VM's): a suite's buffers, arenas
# and reference arrays are megabytes, faulted in 4 KiB at a time otherwise (four
# suites, three rounds alternating: 82 -> 75 CPU-s on a 2-vCPU AMD EPYC VM); the
# caller's own tunables follow, and win. The sanitizers and valgrind bring their own
# allocator.
RUN_ENV  := GLIBC_TUNABLES=glibc.malloc.hugetlb=1$(if $(GLIBC_TUNABLES),:$(GLIBC_TUNABLES)) \
  $(if $(TSAN),TSAN_OPTIONS=suppressions=$(CURDIR)/tests/tsan.supp:$(SHADOW_RUN_OPTIONS)) \
  $(if $(ASAN),ASAN_OPTIONS=$(ASAN_RUN_OPTIONS)) $(if $(SANITIZE),CK_FORK=no BNG_TEST_QUICK=1)
# (Under a sanitizer a run has no per-case timeout, which Check keeps only for forked
# cases: a hang ends at 15 minutes.)
RUN_TOOL := $(if $(VALGRIND),valgrind -q --error-exitcode=99 --leak-check=full \
  --errors-for-leak-kinds=definite --show-possibly-lost=no) $(if $(SANITIZE),timeout 900)

# ---- the test matrix ---------------------------------------------------------------
# Each run exists to cover one axis (docs/design.md, "The test matrix"), and runs on
# that axis only, not on every product of targets, flavours and modes:
#   configurations: every target's gnu suite, every case (the host HAL, plain mode);
#   kernels: every width on gnu (each target's suite), and each other vector backend
#     at full size where its code differs: the arithmetic flavours (portable, native,
#     gnu_softhalf), their private cases, on the KERNEL_ROOTS arithmetic_roots_flavours
#     picks;
#   driver paths, once per HAL: the hthreads HAL in both launch models on DRIVER_ROOTS,
#     whose gnu suites run every line of the driver (make coverage measures it), and
#     the fast host HAL (mode fast) on the bench's target, shared cases, quick;
#   FPU modes: ftz (an FPU flushing subnormals as the DSP's does) on the arithmetic,
#     private cases at the quick size, per backend on FTZ_ROOTS where suite_flavours
#     runs it.
# KERNEL_ROOTS hold every (dtype, lanes, per-channel type, memory) the targets have:
# tiny (f32x4, f16x8), mt7004_mixed (f32x16, f16x32 with float per-channel arrays),
# mt3000_native (f32x32, f16x32), mt3000_split (split memory, f32x32, f16x64),
# mt3000_split_native (split, the native backend). The shipped targets' kernels are
# among them: mt7004's widths are mt7004_mixed's and mt3000_native's, and ft78ne's
# kernels are mt7004's f32 kernels renamed (tests/generator/test_generator.py holds
# both to it), so ft78ne's gnu suite runs at the quick size. The gnu backend runs at
# full size on tiny (4 and 8 lanes), mt7004 (16, 32) and mt3000_split (32, 64); the
# other kernel roots' gnu suites repeat those widths and run at the quick size
# (QUICK_SUITES, with ft78ne's), the arithmetic flavours arithmetic_roots_flavours
# picks there at full size. (The ukernels never see the per-channel type: the driver
# converts half per-channel arrays to float, and mt7004_mixed's gnu suite runs that
# path with float ones.)
KERNEL_ROOTS := $(filter %/tiny %/mt7004_mixed %/mt3000_native %/mt3000_split \
  %/mt3000_split_native,$(SUITE_ROOTS))
# A backend's code is one text at every width (bng_vec.h pastes each width's
# operations from the same lines at its N), so each arithmetic flavour runs on the
# kernel roots where its code takes another branch, not at every width: tiny (every
# operation and extension, the narrow widths and their tails, halves twice the floats'
# lanes), the split roots (the memory spaces' accessors and padded rows), and the roots
# whose targets.yaml picks its backend (mt7004_mixed portable; mt3000_native,
# mt3000_split_native native: the native width, the target's own spellings). gnu's
# suites run every root's widths, the kernels' axis.
FLAVOUR_BACKEND_portable     := portable
FLAVOUR_BACKEND_native       := native
FLAVOUR_BACKEND_gnu_softhalf := gnu
# $(1) root -> the arithmetic flavours whose suites run on it
arithmetic_roots_flavours = $(filter-out gnu $(HTHREADS_FLAVOURS),$(foreach v,$(call flavours,$(1)),\
  $(if $(or $(filter %/tiny,$(1)),$(filter split,$(BNG_MEMORY_$(1))),\
    $(filter $(FLAVOUR_BACKEND_$(v)),$(BNG_BACKEND_$(1)))),$(v))))
DRIVER_ROOTS := $(filter %/tiny %/mt3000_split %/$(HALF_TARGET),$(SUITE_ROOTS))
QUICK_SUITES := $(foreach r,$(filter %/ft78ne,$(SUITE_ROOTS)) \
  $(filter-out $(DRIVER_ROOTS),$(KERNEL_ROOTS)),$(call flavour_dir,$(r),gnu)/test_bng)
HTHREADS_FLAVOURS := hthreads_fanout hthreads_spmd
# $(1) root -> the flavours whose suites run on it
suite_flavours = gnu \
  $(if $(filter $(1),$(KERNEL_ROOTS)),$(call arithmetic_roots_flavours,$(1))) \
  $(if $(filter $(1),$(DRIVER_ROOTS)),$(filter $(HTHREADS_FLAVOURS),$(call flavours,$(1))))
# Under ThreadSanitizer the driver roots and the split targets: every driver line with
# threads behind it (make coverage: the driver roots run all but the 64-bit range
# check, which a split target runs); the unified test targets and ft78ne differ from
# them in widths and per-channel types, not in which threads touch what (AddressSanitizer
# and valgrind run them, valgrind all but ft78ne).
TSAN_ROOTS = $(DRIVER_ROOTS) $(SPLIT_ROOTS)
# Under valgrind every root whose kernels are its own: the generated kernels are
# instrumented by no sanitizer outside tiny, and valgrind is what checks their memory
# accesses. Not ft78ne, whose kernels are mt7004's renamed and its driver mt7004's
# (its suite was 61 of make memcheck's 950 CPU-s).
VALGRIND_ROOTS = $(filter-out %/ft78ne,$(SUITE_ROOTS))
MATRIX_ROOTS = $(if $(TSAN),$(TSAN_ROOTS),$(if $(VALGRIND),$(VALGRIND_ROOTS),$(SUITE_ROOTS)))
MATRIX_SUITES := $(foreach r,$(filter $(MATRIX_ROOTS),$(SUITE_ROOTS)),\
  $(foreach v,$(call suite_flavours,$(r)),$(call flavour_dir,$(r),$(v))/test_bng))

# Modes: plain; fast (the fast host HAL make bench times); ftz. A flavour runs the test
# cases it can change (Check's tags): a HAL flavour those that move data (shared), an
# arithmetic flavour those that compute on the caller's memory (private); gnu runs every
# case, and a mode the cases it can change (fast: shared; ftz: private).
# A run that repeats cases on code that already ran them at full size (a mode; the
# hthreads flavours, whose kernels and driver are gnu's objects on another HAL; a
# QUICK_SUITES suite) runs them at the quick size (BNG_TEST_QUICK: the largest sweeps
# shrink, every path they cover still runs). Under a sanitizer every run is quick
# (RUN_ENV; a suite built with one says so itself: bng_test_quick, 10x slower or more).
CASES_hthreads_fanout := shared
CASES_hthreads_spmd   := shared
CASES_portable        := private
CASES_native          := private
CASES_gnu_softhalf    := private
CASES_fast            := shared
CASES_ftz             := private
QUICK_ENV := BNG_TEST_QUICK=1
MODE_ENV_fast  := BNG_HAL_HOST=fast $(QUICK_ENV)
MODE_ENV_ftz   := BNG_TEST_FTZ=1 $(QUICK_ENV)
FLAVOUR_ENV_hthreads_fanout := $(QUICK_ENV)
FLAVOUR_ENV_hthreads_spmd   := $(QUICK_ENV)
# run/<program>/<mode> -> the program, its flavour, the environment of the run (the
# mode's; a suite's flavour's and the Check tags of its cases; the run's under a
# sanitizer)
program_of = $(patsubst run/%/,%,$(dir $(1)))
flavour_of = $(notdir $(patsubst %/,%,$(dir $(call program_of,$(1)))))
target_of = $(notdir $(patsubst %/,%,$(dir $(patsubst %/,%,$(dir $(call program_of,$(1)))))))
tags_of = $(or $(CASES_$(notdir $(1))),$(CASES_$(call flavour_of,$(1))),$(call tsan_cases,$(1)))
# Under ThreadSanitizer a unified target's suite runs its shared cases only: its private
# cases run _p on the calling thread, where there is no race to see (ASan, UBSan and
# valgrind run them); on a split target _p stages by DMA, the host engine's threads, and
# every case runs.
SPLIT_TARGETS := $(notdir $(SPLIT_ROOTS))
tsan_cases = $(if $(TSAN),$(if $(filter $(call target_of,$(1)),$(SPLIT_TARGETS)),,shared))
suite_env = $(FLAVOUR_ENV_$(call flavour_of,$(1))) \
  $(if $(filter $(call program_of,$(1)),$(QUICK_SUITES)),$(QUICK_ENV)) \
  $(addprefix CK_INCLUDE_TAGS=,$(call tags_of,$(1)))
run_env = $(MODE_ENV_$(notdir $(1))) $(RUN_ENV) \
  $(if $(filter %/test_bng,$(call program_of,$(1))),$(call suite_env,$(1)))

# fast: the fast host HAL (synchronous copies, what make bench times) on the bench's
# target's gnu suite; the hthreads HAL and the plain host HAL run the driver roots.
# ftz: the half conversions, and on FTZ_ROOTS (per lane the same arithmetic at any
# width: 4/8 lanes, 16/32 with float per-channel arrays, split memory's vector steps) the
# arithmetic of each backend that has subnormal handling of its own (gnu, the portable
# half, plain C), where suite_flavours runs it.
FTZ_ROOTS := $(filter %/tiny %/mt7004_mixed %/mt3000_split,$(KERNEL_ROOTS))
FAST_SUITES := $(filter $(BUILD)/$(HALF_TARGET)/gnu/test_bng,$(MATRIX_SUITES))
FTZ_SUITES := $(HALF_SUITES) $(filter \
  $(foreach r,$(FTZ_ROOTS),$(foreach v,gnu gnu_softhalf portable,\
    $(call flavour_dir,$(r),$(v))/test_bng)),$(MATRIX_SUITES))
# Under a sanitizer and valgrind the same matrix on the flavours built there (gnu and
# the hthreads HAL; gnu only under valgrind): every driver path under each. The ftz mode
# changes values, never which memory is touched or by which thread: not under a
# sanitizer or valgrind; nor fast under valgrind (the same copies as plain, serialized).
C_RUNS := $(foreach s,$(MATRIX_SUITES),run/$(s)/plain) \
  $(if $(VALGRIND),,$(foreach s,$(FAST_SUITES),run/$(s)/fast)) \
  $(if $(VALGRIND)$(SANITIZE),,$(foreach s,$(FTZ_SUITES),run/$(s)/ftz))
HALF_RUNS    := $(foreach s,$(HALF_SUITES),run/$(s)/plain)
EXAMPLE_RUNS := $(foreach s,$(MANUAL_EXAMPLES),run/$(s)/plain)
# Under a sanitizer or valgrind the small walk and walk_gsm only (a shipped memory map
# at its widest count: the host's scratch, sized by the plan, between the sanitizer's
# redzones): the wide ones' unrolled kernels take minutes to compile instrumented (or
# run under valgrind), and their guard bytes already catch a write past an output in
# make test.
# (Chosen by root: a pattern of $(filter) has one wildcard, and %/walk_small/% matched
# nothing, so that until this release no walk ran under them.)
CHECKED_WALKS := $(foreach r,$(filter %/walk_small %/walk_gsm,$(WALK_ROOTS)),\
  $(call flavour_dir,$(r),gnu)/test_walk)
WALK_RUNS := $(foreach s,$(if $(SANITIZE)$(VALGRIND),$(CHECKED_WALKS),$(WALK_SUITES)),\
  run/$(s)/plain)
FORK_RUNS := $(if $(TSAN),,run/$(FORK_TEST)/plain)
CONFORMANCE_RUNS := $(foreach p,$(CONFORMANCE_PROGRAMS) $(LAUNCH_TESTS),run/$(p)/plain)
# A flavour whose program may be its twin's, object for object: its runs run only where
# an object differs (tests/scripts/unless_same_objects.sh). gnu_softhalf builds gnu's
# objects wherever the compiler has _Float16 (the GNU backend converts halves on their
# bits), and is a flavour of its own on a compiler without.
TWIN_gnu_softhalf := gnu
# $(1) run/<program>/<mode> -> the folder of the program's flavour, of its twin's
flavour_folder_of = $(patsubst %/,%,$(dir $(call program_of,$(1))))
twin_folder_of = $(if $(TWIN_$(call flavour_of,$(1))),\
  $(dir $(call flavour_folder_of,$(1)))$(TWIN_$(call flavour_of,$(1))))
twin_guard = $(if $(call twin_folder_of,$(1)),tests/scripts/unless_same_objects.sh \
  $(call twin_folder_of,$(1)) $(call flavour_folder_of,$(1)))
# $(1) run/<program>/<mode>, $(2) environment, $(3) what the program runs under, $(4) its
# arguments
program_run = $(call run_rule,$(1),$(call program_of,$(1)) \
  $(addsuffix /$(notdir $(call program_of,$(1))),$(call twin_folder_of,$(1))),$(2),\
  $(call twin_guard,$(1)) $(3) $(call program_of,$(1)) $(4))
$(foreach r,$(HALF_RUNS) $(EXAMPLE_RUNS) $(WALK_RUNS) $(C_RUNS) $(FORK_RUNS),\
  $(eval $(call program_run,$(r),$(call run_env,$(r)),$(RUN_TOOL))))
$(foreach r,$(CONFORMANCE_RUNS),\
  $(eval $(call program_run,$(r),$(RUN_ENV),timeout 300 $(RUN_TOOL))))

# The barrier mutants must fail the check, by its visibility checks, or by the host DMA
# engine's check of the same race: a put the barrier left in flight lands under another
# core's get of it, and the engine aborts first (2 to 8 runs in 100, with ASan and
# without: the threads' timing decides; on a DSP only the check's own reads see it).
MUTANT_CAUGHT := FAIL: puts visible|its source was written while the transfer was in flight
MUTANT_RUNS := $(foreach m,$(BARRIER_MUTANTS),run/$(m)/must-fail)
$(foreach m,$(BARRIER_MUTANTS),$(eval $(call run_rule,run/$(m)/must-fail,$(m),$(RUN_ENV),\
  tests/scripts/must_fail.sh '$(MUTANT_CAUGHT)' timeout 300 $(m))))

# docs/porting.md's host recipe for a vendored drop, run as written, on the first
# target (the recipe is what it checks: every target's sources build with the recipe's
# flags in make cross-check, step 2).
DROP_RUNS := run/drop-on-host/$(FIRST_TARGET)
$(eval $(call run_rule,$(DROP_RUNS),deps-c deps-python,,\
  tests/scripts/drop_on_host.sh $(BUILD) $$(PY) "$(CC)" $(FIRST_TARGET)))

# docs/porting.md's hthreads recipe, its commands and program taken from the document, in
# both launch models, on the first target (the hthreads HAL runs DRIVER_ROOTS' suites and
# the conformance check on every target; a hang fails by timeout).
HTHREADS_RECIPE_RUNS := run/hthreads-on-host/$(FIRST_TARGET)
$(eval $(call run_rule,$(HTHREADS_RECIPE_RUNS),deps-c deps-python,,\
  tests/scripts/hthreads_on_host.sh $(BUILD) $$(PY) "$(CC)" $(FIRST_TARGET)))

# A drop taken in by its build glue (CMakeLists.txt, bng.mk): firmware builds with a
# bare-metal toolchain (Cortex-M7 linked, RV64), the Make fragment, the host with CMake,
# the hthreads HAL; on the first target with one channel count (the glue is the same
# for every target and channel list; make cross-check builds every kernel bare-metal).
DROP_BUILD_RUNS := run/drop-builds/$(FIRST_TARGET)
$(eval $(call run_rule,$(DROP_BUILD_RUNS),deps-drop deps-python,,\
  tests/scripts/drop_builds.sh $(BUILD) $$(PY) $(FIRST_TARGET)))

# The firmware engineer's sequence with new channel sizes, as make commands in a
# scratch copy of the project (tests/scripts/channels_flow.sh).
CHANNELS_FLOW_RUNS := run/channels-flow/$(HALF_TARGET)
$(eval $(call run_rule,$(CHANNELS_FLOW_RUNS),deps-python,,\
  tests/scripts/channels_flow.sh $(BUILD) $(HALF_TARGET)))

# The user's paths on the host: not under a sanitizer or valgrind (they build and run
# programs of their own, with their own flags).
USER_PATH_RUNS := $(if $(SANITIZE)$(VALGRIND),,\
  $(DROP_RUNS) $(HTHREADS_RECIPE_RUNS) $(DROP_BUILD_RUNS) $(CHANNELS_FLOW_RUNS))

# run/<syncbn>/np<N>: N ranks, twice; the second run's hash must be the first's.
SYNCBN_RUNS := $(if $(VALGRIND)$(TSAN),,$(foreach n,1 2 3,run/$(SYNCBN)/np$(n)))
$(foreach n,1 2 3,$(eval $(call run_rule,run/$(SYNCBN)/np$(n),$(SYNCBN),$(SYNCBN_ENV),\
  tests/scripts/syncbn_twice.sh $(n) $(MPIRUN) $(MPIRUN_FLAGS) -np $(n) $(SYNCBN))))

# The bench builds and runs one tiny shape of each layout (no timing is judged).
BENCH_SMOKE := $(BUILD)/$(HALF_TARGET)/gnu/bench
BENCH_RUNS  := $(if $(VALGRIND),,run/$(BENCH_SMOKE)/smoke)
$(eval $(call program_run,run/$(BENCH_SMOKE)/smoke,BNG_HAL_HOST=fast OMP_NUM_THREADS=1,,\
  --backend gnu --shapes 4x64 --nchw-shapes 2x64x49 --seconds 0))

# tests/scripts/torch_check.py: the ext call (NHWC with and without ReLU fused, NCHW)
# against PyTorch's batch_norm (+ relu) and autograd on ResNet-18's layers, and a training
# step of our forward and backward against PyTorch's, through a shared build of the half target's host
# library (ctypes). A python3 that imports torch (Debian: python3-torch, not installed
# for you: it is large); without one the library is not built (a recipe that leaves
# no file: it is looked for again each run), the script says so and the run counts as
# skipped.
TORCH_LIB := $(BUILD)/torch/libbatchnormgrad_$(HALF_TARGET).so
TORCH_SOURCES := $(BNG_SOURCES_generated/$(HALF_TARGET)) include/host/bng_hal_host.c \
  include/host/bng_dma_engine.c
$(TORCH_LIB): $(TORCH_SOURCES) $(wildcard generated/$(HALF_TARGET)/*.h) $(INCLUDE_HEADERS) | deps-c
	@mkdir -p $(@D)
	$(if $(TORCH_PY),$(CC) $(CFLAGS) -std=gnu11 -shared -fPIC -Wall -Wno-psabi \
	  -ffp-contract=off -DBNG_HOST -DBNG_VEC_BACKEND=BNG_VEC_GNU -Iinclude -Iinclude/host \
	  -Igenerated/$(HALF_TARGET) $(TORCH_SOURCES) -lpthread -lm -o $@,\
	  @echo "$@: not built: no python3 imports torch")
# a python3 that imports torch, or none
TORCH_PY = $(call python_with,TORCH_PY_FOUND,torch)
PY_TORCH = $(or $(TORCH_PY),$(PY))
TORCH_RUNS := $(if $(SANITIZE)$(VALGRIND),,run/torch-check/$(HALF_TARGET))
$(eval $(call run_rule,run/torch-check/$(HALF_TARGET),$(TORCH_LIB) deps-python,,\
  $$(PY_TORCH) tests/scripts/torch_check.py $(TORCH_LIB)))
.PHONY: torch-check
## the fused ReLU call against PyTorch (batch_norm + relu, autograd) on ResNet-18's layers
torch-check: run/torch-check/$(HALF_TARGET)

# The generator's unit and property tests (Python), a run per module so that the tiers
# run them side by side: run/test-generator/<module>.
GENERATOR_TESTS := $(basename $(notdir $(wildcard tests/generator/test_*.py)))
GENERATOR_TEST_RUNS := $(GENERATOR_TESTS:%=run/test-generator/%)
$(foreach m,$(GENERATOR_TESTS),$(eval $(call run_rule,run/test-generator/$(m),deps-python-test,,\
  $$(PY_TEST) -m unittest discover -s tests/generator -p '$(m).py')))

# Every C run of make test, the longest first. Under valgrind: no second mode, no
# conformance check, bench or drop; under a sanitizer no drop.
TEST_RUNS := $(WALK_RUNS) $(C_RUNS) $(if $(VALGRIND),,$(CONFORMANCE_RUNS) $(MUTANT_RUNS)) \
  $(HALF_RUNS) $(EXAMPLE_RUNS) $(FORK_RUNS) $(USER_PATH_RUNS) $(SYNCBN_RUNS) $(BENCH_RUNS) \
  $(TORCH_RUNS)

.PHONY: hal-conformance fork-test drop-on-host hthreads-on-host drop-builds channels-flow \
  bench-smoke
## the HAL conformance check against every HAL shipped, the hthreads launch test
hal-conformance: $(CONFORMANCE_RUNS) $(MUTANT_RUNS)
fork-test: $(FORK_RUNS)
drop-on-host: $(DROP_RUNS)
hthreads-on-host: $(HTHREADS_RECIPE_RUNS)
## take a drop into CMake (bare-metal Cortex-M7 and RV64 toolchain files, the host) and
## Make-fragment builds, as a firmware team does (about 25 seconds)
drop-builds: $(DROP_BUILD_RUNS)
## new channel sizes as a user sets them: generate CHANNELS=, regen-check, vendor,
## verify-drop, a refused list, in a scratch copy of the project (about 30 s)
channels-flow: $(CHANNELS_FLOW_RUNS)
bench-smoke: $(BENCH_RUNS)

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
MUTANT_GNU_DIRS := $(foreach r,$(MUTANT_ROOTS),$(call flavour_dir,$(r),gnu))
# $(1) root -> ROOT:LIBRARY:OBJECTS, its gnu suite's (dma_mutants.sh)
mutant_objects = $(subst $(space),$(comma),$(strip $(call test_objects,$(1),gnu,test_bng.o)))
mutant_spec = $(1):$(call flavour_dir,$(1),gnu)/libbatchnormgrad.a:$(call mutant_objects,$(1))
.PHONY: dma-mutants
## remove each DMA wait of the driver in turn: the suite must catch every one [QUICK=1]
dma-mutants: $(addsuffix /test_bng,$(MUTANT_GNU_DIRS)) | deps-c
	JOBS=$(JOBS) tests/scripts/dma_mutants.sh $(BUILD) "$(CC)" \
	  "$(CFLAGS) $(BNG_CFLAGS) $(FLAVOUR_FLAGS_gnu)" \
	  $(foreach r,$(MUTANT_ROOTS),$(call mutant_spec,$(r)))
