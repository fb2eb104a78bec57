# The generated C as firmware sees it: make cross-check (bare-metal cross builds, old
# compilers, tcc; tests/scripts/cross_check.sh), make vendor (a drop for a firmware
# tree) and make verify-drop, make report (code size per kernel, per object and of an
# image: host, RISC-V and Cortex-M7).

# Debian's oldest packaged gcc and clang, for the GCC 8-era feature-set check.
OLDEST_GCC   := gcc-11
OLDEST_CLANG := clang-13

.PHONY: cross-check vendor verify-drop report
# $(1) generated folder -> <target>:<source>,<source>,...:<vector room>,... (the plan's
# rooms that compute with the vector backend, BNG_VECTOR_SOURCES)
target_sources = $(notdir $(1)):$(subst $(space),$(comma),$(strip $(BNG_SOURCES_$(1)))):$(subst \
  $(space),$(comma),$(strip $(BNG_VECTOR_SOURCES_$(1))))
## bare-metal RISC-V/ARM builds and symbols, pedantic gcc/clang, tcc suite, vendor drop
cross-check: deps-cross deps-c deps-python
	OLDEST_COMPILERS="$(OLDEST_GCC) $(OLDEST_CLANG)" tests/scripts/cross_check.sh $(BUILD) $(PY) \
	  $(foreach r,$(GENERATED_ROOTS),$(call target_sources,$(r)))

# With CHANNELS, vendor sets the target's list in targets.yaml and renders
# generated/<t> beside it first: the drop, the tree and CI then agree. One generator
# run: a drop it refuses (DEST, HAL, TARGET, CHANNELS, or a folder it cannot write)
# leaves the list and the tree as they were.
## render TARGET=t's drop for a firmware tree into DEST=dir, with build glue and a
## MANIFEST [HAL=hthreads]; CHANNELS="48 96" first sets the list as make generate does
vendor: deps-python
	@$(GENERATOR) vendor $(CONFIG_ARG) --target "$$TARGET" $(if $(HAL),--hal "$$HAL") \
	  $(if $(CHANNELS),--channels "$$CHANNELS") --dest "$$DEST"

## check the drop in DEST=dir against its MANIFEST: each file's sha256, files missing,
## files the MANIFEST does not list
verify-drop: deps-python
	@$(GENERATOR) verify-drop --dest "$$DEST"

REPORT_CROSS := riscv64-unknown-elf
REPORT_ARM   := arm-none-eabi
REPORT_GEN   := $(BUILD)/report-gen
# The report renders TARGET (with CHANNELS, a what-if: targets.yaml is not touched) into
# its own tree, builds its objects for the host, bare-metal RISC-V and a Cortex-M7 (make
# rebuilds only what changed), and sizes every kernel, every object and the image of a
# firmware calling the vendor's fp calls from them.
## per kernel of TARGET=t: shape, unroll, tile plan, code size in bytes; each object's
## .text and a firmware image's, for the host, a scalar RISC-V core and a Cortex-M7;
## memory [CHANNELS=...: a what-if] (about a minute the first time, seconds once built)
report: deps-python
	@$(GENERATOR) report $(GEN_ARGS) --tree $(REPORT_GEN)
	@$(MAKE) --no-print-directory deps-report report-run REPORT_ROOT=$(REPORT_GEN)/$$TARGET

# ---- make report's second stage: the rendered tree's objects ----------------------

# Included last by the Makefile: the report tree's build.mk adds nothing to its lists.
ifdef REPORT_ROOT
include $(REPORT_ROOT)/build.mk
REPORT_SOURCES := $(BNG_SOURCES_$(REPORT_ROOT))
REPORT_OBJ     := $(BUILD)/report/$(notdir $(REPORT_ROOT))
REPORT_COLUMNS := host rv64-scalar m7
report_objects = $(addprefix $(REPORT_OBJ)/$(1)/,$(notdir $(REPORT_SOURCES:.c=.o)))
report_list    = $(subst $(space),$(comma),$(call report_objects,$(1)))
# A native target's compiler header (compiler/m3000.h) is the host's emulation of it
# (include/host/compiler/, freestanding C): its sizes stand in for the real compiler's.
# Every object is compiled as the drop's glue compiles it, a function and a datum per
# section, so that the image keeps only what its calls reach.
REPORT_INCLUDES := -Iinclude -I$(REPORT_ROOT) -Iinclude/host
# (the drop glue's BNG_SECTION_CFLAGS: generator/vendor.py SECTION_OPTIONS)
REPORT_SECTIONS := -ffunction-sections -fdata-sections
REPORT_BARE     := -std=c99 -ffreestanding -O2 -ffp-contract=off -Wall -Wextra
REPORT_CC_host            := $(CC)
REPORT_FLAGS_host         := $(CFLAGS) $(BNG_CFLAGS)
REPORT_LINK_host          := -no-pie
REPORT_CC_rv64-scalar     := $(REPORT_CROSS)-gcc
REPORT_FLAGS_rv64-scalar  := $(REPORT_BARE)
REPORT_CC_m7              := $(REPORT_ARM)-gcc
REPORT_FLAGS_m7           := $(REPORT_BARE) -mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16
# The image: a firmware's main calling fp_batch_norm_grad_p and _s (the drop builds'
# tests/scripts/drop_projects/firmware/main.c), linked with the library's objects and
# --gc-sections; what the firmware brings itself (memcpy, memset, the HAL, its start-up)
# stays unresolved and uncounted.
REPORT_MAIN        := tests/scripts/drop_projects/firmware/main.c
# and, where the target has the training forward, one calling fp_batch_norm_forward_p
# and _s (the forward image row)
REPORT_FWD_MAIN    := tests/scripts/drop_projects/firmware/main_forward.c
REPORT_HAS_FWD     := $(shell grep -qs 'define BNG_HAS_FORWARD 1' $(REPORT_ROOT)/bng_kernels.h \
  && echo 1)
REPORT_IMAGE_FLAGS := -nostdlib -Wl,-e,main -Wl,--gc-sections -Wl,--unresolved-symbols=ignore-all
# Such an image has one segment, which GNU ld 2.39 and later warn of: quiet where the
# column's linker knows the option.
report_quiet_ld = $(shell $(1) -nostdlib -Wl,-e,0 -Wl,--no-warn-rwx-segments -x c /dev/null \
  -o /dev/null 2>/dev/null && echo -Wl,--no-warn-rwx-segments)
# (and this file, whose flags the objects are compiled with)
REPORT_HEADERS     := $(wildcard $(REPORT_ROOT)/*.h) $(INCLUDE_HEADERS) mk/firmware.mk
# $(1) column
define report_column_rules
$(REPORT_OBJ)/$(1)/%.o: $(REPORT_ROOT)/%.c $(REPORT_HEADERS)
	@mkdir -p $$(@D)
	$(REPORT_CC_$(1)) $(REPORT_FLAGS_$(1)) $(REPORT_SECTIONS) $(REPORT_INCLUDES) -c $$< -o $$@
$(REPORT_OBJ)/$(1)/%.o: include/%.c $(REPORT_HEADERS)
	@mkdir -p $$(@D)
	$(REPORT_CC_$(1)) $(REPORT_FLAGS_$(1)) $(REPORT_SECTIONS) $(REPORT_INCLUDES) -c $$< -o $$@
$(REPORT_OBJ)/$(1)/image/main.o: $(REPORT_MAIN) $(REPORT_HEADERS)
	@mkdir -p $$(@D)
	$(REPORT_CC_$(1)) $(REPORT_FLAGS_$(1)) $(REPORT_INCLUDES) -c $$< -o $$@
$(REPORT_OBJ)/$(1)/image/main_forward.o: $(REPORT_FWD_MAIN) $(REPORT_HEADERS)
	@mkdir -p $$(@D)
	$(REPORT_CC_$(1)) $(REPORT_FLAGS_$(1)) $(REPORT_INCLUDES) -c $$< -o $$@
$(REPORT_OBJ)/$(1)/image/%.elf: $(REPORT_OBJ)/$(1)/image/%.o $(call report_objects,$(1))
	$(REPORT_CC_$(1)) $(REPORT_FLAGS_$(1)) $(REPORT_LINK_$(1)) $(REPORT_IMAGE_FLAGS) \
	  $(call report_quiet_ld,$(REPORT_CC_$(1))) $$^ -o $$@
endef
$(foreach c,$(REPORT_COLUMNS),$(eval $(call report_column_rules,$(c))))
# What the host column is: the vector extensions the host build's flags enable.
HOST_ISA := $(shell $(CC) $(CFLAGS) -dM -E -x c /dev/null 2>/dev/null | awk \
  '/ __AVX512F__ /{v="AVX-512"} / __AVX2__ /{if (!v) v="AVX2"} / __SSE2__ /{s="SSE2"} \
   / __ARM_NEON /{v="NEON"} END {print v ? v : (s ? s : "no vector extension")}')
# (through the environment: CFLAGS may hold quotes)
report-run: export REPORT_HOST_NOTE := this machine's build ($(CC) $(CFLAGS): \
  $(shell uname -m), $(HOST_ISA))
report-run: export REPORT_RV64_NOTE := $(REPORT_CROSS)-gcc -O2 for rv64gc, a core without \
  a vector unit: each vector operation a loop over its lanes (bng_vec.h), a scalar core's \
  size, not the DSP's (one vector instruction there)
report-run: export REPORT_M7_NOTE := $(REPORT_ARM)-gcc -O2 for a Cortex-M7 (Thumb-2, \
  FPv5): the same lane loops; a firmware microcontroller's size
.PHONY: report-run
report_images = $(REPORT_OBJ)/$(1)/image/main.elf \
  $(if $(REPORT_HAS_FWD),$(REPORT_OBJ)/$(1)/image/main_forward.elf)
report-run: $(foreach c,$(REPORT_COLUMNS),$(call report_objects,$(c)) $(call report_images,$(c)))
	@$(GENERATOR) report $(GEN_ARGS) --note "host=$$REPORT_HOST_NOTE" \
	  --note "rv64-scalar=$$REPORT_RV64_NOTE" --note "m7=$$REPORT_M7_NOTE" \
	  --objects "host,nm,$(call report_list,host)" \
	  --objects "rv64-scalar,$(REPORT_CROSS)-nm,$(call report_list,rv64-scalar)" \
	  --objects "m7,$(REPORT_ARM)-nm,$(call report_list,m7)" \
	  $(foreach c,$(REPORT_COLUMNS),--image "$(c),$(REPORT_OBJ)/$(c)/image/main.elf") \
	  $(if $(REPORT_HAS_FWD),$(foreach c,$(REPORT_COLUMNS),\
	  --forward-image "$(c),$(REPORT_OBJ)/$(c)/image/main_forward.elf"))
endif
