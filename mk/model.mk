# make model: the DSP cost model (docs/performance.md, "The DSP cost model"); the
# calibration program's host runner; the model's tests, which make test runs.

# The shipped driver runs each shape's _s under the tracing HAL
# (include/host/bng_hal_trace.c, bench/model/trace.c); generator/costmodel/ replays the
# record against targets.yaml part: and prints a prediction per call, with
# build/model/<t>/model.csv and, with gnuplot, model.png.
export SHAPES CORES
# The trace build: the library with the kernel hook on (the trace header included first)
# and the tracing HAL in place of the host's.
# It is a build flavour of its own, "model", in build/<t>/model/.
FLAVOUR_FLAGS_model := -include include/host/bng_hal_trace.h
HAL_OBJECTS_model   := bng_hal_trace.o
# The header fills hooks only bng_steps.h calls; a kernels file includes none of the
# driver's headers, and its object is the target's own library's byte for byte (gnu's
# on a gnu-backend target, the project flags' elsewhere): the trace build links those.
KERNELS_FROM_model   = $(call library_flavour,$(1))
$(foreach r,$(GENERATED_ROOTS),$(eval $(call flavour_rules,$(r),model)))
$(BUILD)/%/model/trace: bench/model/trace.c include/host/bng_hal_trace.h \
  $(BUILD)/%/model/libbatchnormgrad.a | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -DBNG_HOST -Iinclude -Iinclude/host \
	  -Igenerated/$* $< $(BUILD)/$*/model/libbatchnormgrad.a $(LDLIBS) -o $@

MODEL_OUT = $(BUILD)/model/$(TARGET)
.PHONY: model
## predicted DSP times of _s for TARGET=t per shape and core count (a prediction from
## targets.yaml part:): a table, model.csv, model.png [SHAPES="BxC BxC:relu BxC:relu:bits NxCxS BxC:acc BxC:fwd BxC:fwd:relu NxCxS:fwd ..."]
## [CORES="1 8"]
model: deps-python generated-fresh deps-plot
	@$(known_target)$(MAKE) --no-print-directory $(BUILD)/$(TARGET)/model/trace
	@mkdir -p $(MODEL_OUT)
	@$(PY) -m generator.costmodel --target "$$TARGET" --trace $(BUILD)/$(TARGET)/model/trace \
	  $(if $(SHAPES),--shapes "$$SHAPES") $(if $(CORES),--cores "$$CORES") \
	  --csv $(MODEL_OUT)/model.csv
	@if ! grep -q '^# channels: [0-9]' $(MODEL_OUT)/model.csv; then \
	  echo "note: no plot (it draws the vendor's calls; SHAPES had none)"; \
	elif command -v gnuplot >/dev/null; then \
	  gnuplot -e "csv='$(MODEL_OUT)/model.csv'; png='$(MODEL_OUT)/model.png'" \
	    bench/model/plot.gp && echo "plot: $(MODEL_OUT)/model.png"; \
	else echo "note: no gnuplot, no plot (the table above and model.csv are complete)"; fi

# The calibration program (include/programs/bng_calibrate.c, in every drop) on the host
# HAL, for its output (tests/model/test_calibrate.py); its figures come from the part
# only.
$(BUILD)/%/model/calibrate: bench/model/calibrate_main.c include/programs/bng_calibrate.c \
  include/programs/bng_calibrate.h $(BUILD)/%/libbatchnormgrad.a | deps-c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(HAL_CFLAGS) -Wpedantic -Igenerated/$* bench/model/calibrate_main.c \
	  include/programs/bng_calibrate.c $(BUILD)/$*/libbatchnormgrad.a $(LDLIBS) -o $@

# The model's tests (tests/model/, Python unittest), not under a sanitizer or valgrind
# (nothing of theirs is instrumented). They take mt7004's programs from make; run alone,
# they build them themselves.
MODEL_TEST_DIR := $(BUILD)/mt7004/model
MODEL_RUNS := $(if $(SANITIZE)$(VALGRIND),,run/test-model)
$(eval $(call run_rule,run/test-model,$(MODEL_TEST_DIR)/trace $(MODEL_TEST_DIR)/calibrate \
  deps-python-test,BNG_MODEL_TRACE=$(MODEL_TEST_DIR)/trace \
  BNG_MODEL_CALIBRATE=$(MODEL_TEST_DIR)/calibrate,$$(PY_TEST) -m unittest discover -s tests/model))
TEST_RUNS += $(MODEL_RUNS)
.PHONY: test-model
test-model: run/test-model
