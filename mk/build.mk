# Host libraries: each target's library (make lib), and the build flavours the suites
# run in, each with its own objects.

# (with the host's emulation of the target compiler's vector header, which the native
# flavour's objects include)
INCLUDE_HEADERS := $(wildcard include/*.h include/host/compiler/*.h)
# The host HAL emulation every host library links (include/host/, never vendored).
HOST_HAL_OBJECTS := bng_hal_host.o bng_dma_engine.o
objects_of = $(addprefix $(2)/,$(notdir $(BNG_SOURCES_$(1):.c=.o)))

# $(1) generated folder, $(2) output folder (objects in obj/, libbatchnormgrad.a), $(3)
# extra flags, $(4) the HAL's objects (default: the host emulation). The archive holds the
# plan's sources (the generated ones and the shared driver, compiled against the folder's
# headers) and a HAL.
define library_rules
$(2)/obj/%.o: $(1)/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) $(3) -I$(1) -c $$< -o $$@
$(2)/obj/%.o: include/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(BNG_CFLAGS) $(3) -I$(1) -c $$< -o $$@
$(2)/obj/%.o: include/host/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) \
  $(wildcard include/host/*.h) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(HAL_CFLAGS) $(3) -I$(1) -c $$< -o $$@
$(2)/obj/%.o: include/hal/%.c $(wildcard $(1)/*.h) $(INCLUDE_HEADERS) \
  $(wildcard include/hal/*.h include/host/*.h) | deps-c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(HAL_CFLAGS) $(3) -I$(1) -c $$< -o $$@
$(2)/libbatchnormgrad.a: $(call objects_of,$(1),$(2)/obj) \
  $(addprefix $(2)/obj/,$(or $(4),$(HOST_HAL_OBJECTS)))
	$$(AR) rcs $$@ $$^
endef

$(foreach r,$(GENERATED_ROOTS),$(eval $(call library_rules,$(r),$(BUILD)/$(notdir $(r)))))

.PHONY: lib
## build/<t>/libbatchnormgrad.a for TARGET=t (all targets without TARGET)
lib: generated-fresh
	@$(if $(TARGET),$(known_target))$(MAKE) --no-print-directory \
	  $(foreach t,$(or $(TARGET),$(ALL_TARGETS)),$(BUILD)/$(t)/libbatchnormgrad.a)

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
HAL_OBJECTS_hthreads_fanout := bng_hal_hthreads.o hthread_mock.o hthread_launch.o bng_dma_engine.o
HAL_OBJECTS_hthreads_spmd   := $(HAL_OBJECTS_hthreads_fanout)
# Under a sanitizer only gnu and the hthreads HAL run (their memory and thread handling
# is what the sanitizers check; the other flavours differ in arithmetic code only), under
# valgrind only gnu: checked runs are slow.
flavours = gnu $(if $(VALGRIND),,$(if $(SANITIZE),,$(call arithmetic_flavours,$(1))) \
  hthreads_fanout hthreads_spmd)
arithmetic_flavours = portable $(if $(call native_flavour,$(1)),native) \
  $(if $(filter f16,$(BNG_DTYPES_$(1))),gnu_softhalf)
# The native flavour builds a target's native spellings: on a split target only where
# targets.yaml picks them (the generator then checks the half spellings such a target
# needs; a split target on another backend has none to build with).
native_flavour = $(filter native,\
  $(if $(filter split,$(BNG_MEMORY_$(1))),$(BNG_BACKEND_$(1)),native))
