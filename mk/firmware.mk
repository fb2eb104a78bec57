# The generated C as firmware sees it: make cross-check (bare-metal cross builds, old
# compilers, tcc; tests/scripts/cross_check.sh), make vendor (a drop for a firmware
# tree), make report (code size per kernel, host and RISC-V).

# Debian's oldest packaged gcc and clang, for the GCC 8-era feature-set check.
OLDEST_GCC   := gcc-11
OLDEST_CLANG := clang-13

.PHONY: cross-check vendor report
# $(1) generated folder -> <target>:<source>,<source>,...
target_sources = $(notdir $(1)):$(subst $(space),$(comma),$(strip $(BNG_SOURCES_$(1))))
## bare-metal RISC-V/ARM builds and symbols, pedantic gcc/clang, tcc suite, vendor drop
cross-check: deps-cross deps-c deps-python
	OLDEST_COMPILERS="$(OLDEST_GCC) $(OLDEST_CLANG)" tests/scripts/cross_check.sh $(BUILD) $(PY) \
	  $(foreach r,$(GENERATED_ROOTS),$(call target_sources,$(r)))

## render TARGET=t's drop for a firmware tree into DEST=dir, with a MANIFEST [CHANNELS=...]
## [HAL=hthreads]
vendor: deps-python
	@[ -n "$$TARGET" ] && [ -n "$$DEST" ] \
	  || { echo "usage: make vendor TARGET=<t> DEST=<dir>" >&2; exit 2; }
	$(PY) -m generator vendor $(GEN_ARGS) $(if $(HAL),--hal "$$HAL") --dest "$$DEST"

REPORT_CROSS := riscv64-unknown-elf
REPORT_GEN   := $(BUILD)/report-gen
# The report renders TARGET (with CHANNELS, when given) into its own tree, builds its
# objects for the host and for bare-metal RISC-V (make rebuilds only what changed),
# and sizes every kernel from them.
## per kernel of TARGET=t: shape, unroll, tile plan, code size (host and RISC-V) [CHANNELS=...]
report: deps-python deps-report
	@[ -n "$$TARGET" ] || { echo "usage: make report TARGET=<t> [CHANNELS=\"48 96\"]" >&2; exit 2; }
	@$(PY) -m generator generate --out $(REPORT_GEN) $(GEN_ARGS) --quiet >/dev/null
	@$(MAKE) --no-print-directory report-run REPORT_ROOT=$(REPORT_GEN)/$$TARGET

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
.PHONY: report-run
report-run: $(call report_objects,host) $(call report_objects,$(REPORT_CROSS))
	@$(PY) -m generator report $(GEN_ARGS) \
	  --objects "host,nm,$(call report_list,host)" \
	  --objects "riscv64,$(REPORT_CROSS)-nm,$(call report_list,$(REPORT_CROSS))"
endif
