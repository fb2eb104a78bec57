# The generated C as firmware sees it: make cross-check (bare-metal cross builds, old
# compilers, tcc; tests/scripts/cross_check.sh), make vendor (a drop for a firmware
# tree) and make verify-drop, make report (code size per kernel, host and RISC-V).

# Debian's oldest packaged gcc and clang, for the GCC 8-era feature-set check.
OLDEST_GCC   := gcc-11
OLDEST_CLANG := clang-13

.PHONY: cross-check vendor verify-drop report
# $(1) generated folder -> <target>:<source>,<source>,...
target_sources = $(notdir $(1)):$(subst $(space),$(comma),$(strip $(BNG_SOURCES_$(1))))
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
REPORT_GEN   := $(BUILD)/report-gen
# The report renders TARGET (with CHANNELS, a what-if: targets.yaml is not touched) into
# its own tree, builds its objects for the host and for bare-metal RISC-V (make rebuilds
# only what changed), and sizes every kernel from them.
## per kernel of TARGET=t: shape, unroll, tile plan, code size in bytes (this machine's
## build and a scalar RISC-V core's), memory [CHANNELS=...: a what-if] (about 30 s the
## first time, seconds once built)
report: deps-python
	@$(GENERATOR) report $(GEN_ARGS) --tree $(REPORT_GEN)
	@$(MAKE) --no-print-directory deps-report report-run REPORT_ROOT=$(REPORT_GEN)/$$TARGET

# ---- make report's second stage: the rendered tree's objects ----------------------

# Included last by the Makefile: the report tree's build.mk adds nothing to its lists.
ifdef REPORT_ROOT
include $(REPORT_ROOT)/build.mk
REPORT_SOURCES := $(BNG_SOURCES_$(REPORT_ROOT))
REPORT_OBJ     := $(BUILD)/report/$(notdir $(REPORT_ROOT))
report_objects = $(addprefix $(REPORT_OBJ)/$(1)/,$(notdir $(REPORT_SOURCES:.c=.o)))
report_list    = $(subst $(space),$(comma),$(call report_objects,$(1)))
# A native target's compiler header (compiler/m3000.h) is the host's emulation of it
# (include/host/compiler/, freestanding C): its sizes stand in for the real compiler's.
REPORT_INCLUDES    := -Iinclude -I$(REPORT_ROOT) -Iinclude/host
REPORT_CROSS_FLAGS := -std=c99 -ffreestanding -O2 -ffp-contract=off -Wall -Wextra \
  $(REPORT_INCLUDES)
REPORT_HEADERS     := $(wildcard $(REPORT_ROOT)/*.h) $(INCLUDE_HEADERS)
$(REPORT_OBJ)/host/%.o: $(REPORT_ROOT)/%.c $(REPORT_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) $(REPORT_INCLUDES) -c $< -o $@
$(REPORT_OBJ)/host/%.o: include/%.c $(REPORT_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(BNG_CFLAGS) $(REPORT_INCLUDES) -c $< -o $@
$(REPORT_OBJ)/$(REPORT_CROSS)/%.o: $(REPORT_ROOT)/%.c $(REPORT_HEADERS)
	@mkdir -p $(@D)
	$(REPORT_CROSS)-gcc $(REPORT_CROSS_FLAGS) -c $< -o $@
$(REPORT_OBJ)/$(REPORT_CROSS)/%.o: include/%.c $(REPORT_HEADERS)
	@mkdir -p $(@D)
	$(REPORT_CROSS)-gcc $(REPORT_CROSS_FLAGS) -c $< -o $@
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
.PHONY: report-run
report-run: $(call report_objects,host) $(call report_objects,$(REPORT_CROSS))
	@$(GENERATOR) report $(GEN_ARGS) --note "host=$$REPORT_HOST_NOTE" \
	  --note "rv64-scalar=$$REPORT_RV64_NOTE" \
	  --objects "host,nm,$(call report_list,host)" \
	  --objects "rv64-scalar,$(REPORT_CROSS)-nm,$(call report_list,$(REPORT_CROSS))"
endif
