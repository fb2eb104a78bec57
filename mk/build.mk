# Host libraries: each target's own library (make lib), and the build flavours the suites
# run in. Every distinct object is compiled once: a library that needs an object another
# flavour already builds with the same flags links that one.

# ---- build flavours ----------------------------------------------------------------

# Build flavours the suites run in: GNU vectors with the compiler's _Float16; GNU
# vectors with the portable half (an older vendor GCC); plain C99 throughout.
FLAVOUR_FLAGS_gnu          := -DBNG_VEC_BACKEND=BNG_VEC_GNU
FLAVOUR_FLAGS_gnu_softhalf := -DBNG_VEC_BACKEND=BNG_VEC_GNU -DBNG_HALF_PORTABLE
FLAVOUR_FLAGS_portable     := -DBNG_VEC_BACKEND=BNG_VEC_PORTABLE -DBNG_HALF_PORTABLE
# The target compiler's own vector spellings (bng_native.h), emulated on the host by
# include/host/compiler/m3000.h.
FLAVOUR_FLAGS_native       := -DBNG_VEC_BACKEND=BNG_VEC_NATIVE -DBNG_HALF_PORTABLE -Iinclude/host
# The reference HAL for NUDT's hthreads runtime (include/hal/) on a mock of that runtime
# (include/host/hthread_mock.c) started by the host launcher (hthread_launch.c), in its
# two launch models: one caller and parked workers (fanout), every core calling _s (spmd).
HTHREADS_FLAGS := -DBNG_VEC_BACKEND=BNG_VEC_GNU -Iinclude/hal -Iinclude/host \
  '-DBNG_HTHREADS_IDLE()=hthread_mock_idle()' \
  '-DBNG_HTHREADS_CONTRACT_BREACH(what)=hthread_mock_breach(what)'
FLAVOUR_FLAGS_hthreads_fanout := $(HTHREADS_FLAGS) -DBNG_HTHREADS_LAUNCH=BNG_LAUNCH_FANOUT \
  -DBNG_TEST_LAUNCH_FANOUT=1
FLAVOUR_FLAGS_hthreads_spmd   := $(HTHREADS_FLAGS) -DBNG_HTHREADS_LAUNCH=BNG_LAUNCH_SPMD \
  -DBNG_TEST_LAUNCH_SPMD=1
# Under a sanitizer only gnu and the hthreads HAL are built (their memory and thread
# handling is what the sanitizers check; the other flavours differ in arithmetic code
# only; which suites run: mk/test.mk), under valgrind only gnu: checked runs are slow.
flavours = gnu $(if $(VALGRIND),,$(if $(SANITIZE),,$(call arithmetic_flavours,$(1))) \
  hthreads_fanout hthreads_spmd)
arithmetic_flavours = portable $(if $(call native_flavour,$(1)),native) \
  $(if $(filter f16,$(BNG_DTYPES_$(1))),gnu_softhalf)
# The native flavour builds a target's native spellings: on a split target only where
# targets.yaml picks them (the generator then checks the half spellings such a target
# needs; a split target on another backend has none to build with).
native_flavour = $(filter native,\
  $(if $(filter split,$(BNG_MEMORY_$(1))),$(BNG_BACKEND_$(1)),native))

# ---- libraries ---------------------------------------------------------------------

# (with the host's emulation of the target compiler's vector header, which the native
# flavour's objects include)
INCLUDE_HEADERS := $(wildcard include/*.h include/host/compiler/*.h)

# $(1) generated folder, $(2) object folder, $(3) extra flags: how each object a library
# of the folder holds is compiled: the plan's sources (the generated ones and the shared
# driver, against the folder's headers), the host emulation, the reference HAL.
define object_rules
$(2)/%.o: $(1)/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) $(3) -I$(1) -c $$< -o $$@
$(2)/%.o: include/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) $(3) -I$(1) $(COVERAGE_FLAGS) -c $$< -o $$@
$(2)/%.o: include/host/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) \
  $(wildcard include/host/*.h) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(HAL_CFLAGS) $(3) -I$(1) -c $$< -o $$@
$(2)/%.o: include/hal/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) \
  $(wildcard include/hal/*.h include/host/*.h) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(HAL_CFLAGS) $(3) -I$(1) -c $$< -o $$@
endef

# $(1) generated folder, $(2) flavour: its folder (objects in obj/, libbatchnormgrad.a)
flavour_dir = $(BUILD)/$(notdir $(1))/$(2)
# $(1) object folder, $(2) sources -> their objects there
objects_in = $(addprefix $(1)/,$(notdir $(2:.c=.o)))
# A library holds the plan's sources and a HAL: by default the host emulation (its HAL
# and DMA engine), which moves bytes and computes nothing, so that every flavour links
# gnu's objects of it (a flavour's flags change no byte of them). The hthreads flavours
# differ from gnu in their HAL only: they take gnu's objects of the plan's sources and
# of the DMA engine (the same source and flags) and add their own HAL on the runtime
# mock.
SOURCES_FROM_hthreads_fanout := gnu
SOURCES_FROM_hthreads_spmd   := gnu
HAL_OBJECTS_hthreads_fanout  := bng_hal_hthreads.o hthread_mock.o hthread_launch.o
HAL_OBJECTS_hthreads_spmd    := bng_hal_hthreads.o hthread_mock.o hthread_launch.o
sources_dir = $(call flavour_dir,$(1),$(or $(SOURCES_FROM_$(2)),$(2)))/obj
# The arithmetic flavours differ from gnu in the vector backend and the half type only:
# of the driver, they compile the rooms that compute with vectors (the plan's
# BNG_VECTOR_SOURCES, which include bng_steps_vec.h) and link gnu's objects of the
# others and of the generated wrappers, which reach neither the backend nor a half
# conversion and hold no half by value (the generator's DriverLayersTest holds the
# plan's list to the include graph): each object the same, byte for byte, as their own
# would be. (Under COVERAGE=1 their runs add to gnu's counters of those rooms.)
NEUTRAL_FROM_portable     := gnu
NEUTRAL_FROM_native       := gnu
NEUTRAL_FROM_gnu_softhalf := gnu
vector_sources = $(BNG_VECTOR_SOURCES_$(1))
neutral_sources = $(filter-out $(BNG_VECTOR_SOURCES_$(1)),$(call driver_and_entry_sources,$(1)))
library_objects = \
  $(call objects_in,$(call sources_dir,$(1),$(or $(NEUTRAL_FROM_$(2)),$(2))),\
    $(call neutral_sources,$(1))) \
  $(call objects_in,$(call sources_dir,$(1),$(2)),$(call vector_sources,$(1))) \
  $(call objects_in,$(call kernel_dir,$(1),$(2)),$(call kernel_sources,$(1))) \
  $(call flavour_dir,$(1),gnu)/obj/bng_dma_engine.o \
  $(if $(HAL_OBJECTS_$(2)),$(addprefix $(call flavour_dir,$(1),$(2))/obj/,$(HAL_OBJECTS_$(2))),\
    $(call flavour_dir,$(1),gnu)/obj/bng_hal_host.o)

# ---- kernel objects ----------------------------------------------------------------

# The generated kernels (bng_<dtype>_ukernels.c: every ukernel unrolled, most of a
# build's compile time, and under a sanitizer most of a suite's run time) compute on the
# buffers and the per-channel values the driver hands them, and call nothing: which
# memory is touched, and by which thread, the driver, the HALs and the DMA engine
# decide. Under a sanitizer and COVERAGE=1 a library links its kernels as the
# uninstrumented build compiles them (PLAIN_BUILD: the objects make test links, so that
# each is compiled once for every step), and the sanitizers instrument the rest. The
# kernels' own accesses are checked by valgrind on every target (make memcheck), by the
# suites' guard bytes, and on INSTRUMENTED_KERNEL_ROOTS (tiny: every op and extension,
# at 4 and 8 lanes, its kernels compile in seconds) by the sanitizers too.
INSTRUMENTED_KERNEL_ROOTS = $(filter %/tiny,$(SUITE_ROOTS))
kernel_sources = $(filter %_ukernels.c,$(BNG_SOURCES_$(1)))
driver_and_entry_sources = $(filter-out %_ukernels.c,$(BNG_SOURCES_$(1)))
# $(1) generated folder -> itself when its library links the uninstrumented kernels: not
# with CFLAGS of the command line or the environment, which the plain build's objects
# were not compiled with (make tracks files, not flags).
shares_kernels = $(if $(and $(SANITIZE)$(COVERAGE),$(filter file,$(origin CFLAGS))),\
  $(filter-out $(INSTRUMENTED_KERNEL_ROOTS),$(1)))
# A flavour whose flags change the driver only links another's kernel objects, the one
# KERNELS_FROM_<flavour> names for the generated folder (make model's, mk/model.mk).
# $(1) generated folder, $(2) flavour -> the flavour whose kernel objects it links
kernel_flavour = $(or $(call KERNELS_FROM_$(2),$(1)),$(2))
# $(1) generated folder, $(2) flavour -> the folder of its library's kernel objects
kernel_dir = $(if $(call shares_kernels,$(1)),$(patsubst $(BUILD)/%,$(PLAIN_BUILD)/%,\
  $(call sources_dir,$(1),$(call kernel_flavour,$(1),$(2)))),\
  $(call sources_dir,$(1),$(call kernel_flavour,$(1),$(2))))
# $(1) generated folder, $(2) flavour with objects of its own: its kernels, uninstrumented
define shared_kernel_rules
$(call kernel_dir,$(1),$(2))/%_ukernels.o: $(1)/%_ukernels.c $(wildcard $(1)/*.h) \
  $(INCLUDE_HEADERS) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(UNINSTRUMENTED_CFLAGS) $(FLAVOUR_FLAGS_$(2)) -I$(1) -c $$< -o $$@
endef

# $(1) generated folder, $(2) flavour
define flavour_rules
$(call object_rules,$(1),$(call flavour_dir,$(1),$(2))/obj,$(FLAVOUR_FLAGS_$(2)))
$(if $(and $(call shares_kernels,$(1)),$(if $(SOURCES_FROM_$(2))$(KERNELS_FROM_$(2)),,own)),\
  $(call shared_kernel_rules,$(1),$(2)))
$(call flavour_dir,$(1),$(2))/libbatchnormgrad.a: $(call library_objects,$(1),$(2)) $(1)/build.mk
	rm -f $$@ && $$(AR) rcs $$@ $$(filter %.o,$$^)
endef

# Every tree under test: the committed ones and the test-only configurations (when the
# goals render them).
SUITE_ROOTS := $(BNG_ROOTS)
$(foreach r,$(SUITE_ROOTS),\
  $(foreach v,$(call flavours,$(r)),$(eval $(call flavour_rules,$(r),$(v)))))

# A target's own library (make lib; the manual's examples, the fork test and syncbn link
# it) holds the objects of the flavour of its backend when that is gnu (the flag names
# the target's default: the same objects), else objects compiled with the project flags
# only ("default").
FLAVOUR_FLAGS_default :=
library_flavour = $(if $(filter gnu,$(BNG_BACKEND_$(1))),gnu,default)
define target_library_rules
$(call object_rules,$(1),$(call flavour_dir,$(1),default)/obj,)
$(if $(call shares_kernels,$(1)),$(call shared_kernel_rules,$(1),default))
$(BUILD)/$(notdir $(1))/libbatchnormgrad.a: $(1)/build.mk \
  $(call library_objects,$(1),$(call library_flavour,$(1)))
	rm -f $$@ && $$(AR) rcs $$@ $$(filter %.o,$$^)
endef
$(foreach r,$(GENERATED_ROOTS),$(eval $(call target_library_rules,$(r))))

.PHONY: lib
## build/<t>/libbatchnormgrad.a for TARGET=t (all targets without TARGET)
lib: generated-fresh
	@$(if $(TARGET),$(known_target))$(MAKE) --no-print-directory \
	  $(foreach t,$(or $(TARGET),$(ALL_TARGETS)),$(BUILD)/$(t)/libbatchnormgrad.a)
