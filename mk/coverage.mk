# make coverage: the driver's line and branch coverage (gcov's counters, read by gcov)
# for the fast tier and for the full one, from one build of the suites with the
# driver's rooms instrumented (COVERAGE=1: build/coverage/). Every driver line must run
# in the full tier; the report names the lines only the full tier reaches.

# The runs' build under COVERAGE=1 (the Makefile's BUILD)
COVERAGE_BUILD := $(BUILD_ROOT)/coverage
# The driver: the rooms (include/*.c) and the internal headers whose inline steps they
# share; not the vector and half primitives (the kernels' arithmetic, whose axis is the
# vector backends).
COVERAGE_FILTER := ^include/bng_[a-z_]+\.[ch]$$
COVERAGE_EXCLUDE := ^include/bng_(vec|vec_[a-z]+|f16)\.h$$
COLLECT = $(PY) tests/scripts/coverage_report.py collect --build $(COVERAGE_BUILD) --filter '$(COVERAGE_FILTER)' --exclude '$(COVERAGE_EXCLUDE)' \
  --jobs $(JOBS)

# Under COVERAGE=1, the full tier's C runs past the fast tier's: the driver's runs (not
# the user's paths, which build drops of their own, uninstrumented).
COVERAGE_REST_RUNS = $(filter-out $(CHECK_C_RUNS) $(USER_PATH_RUNS) $(TORCH_RUNS),$(TEST_RUNS))

.PHONY: coverage coverage-check-runs coverage-rest-runs
## the driver's line and branch coverage by make check and by make test, the lines only
## make test reaches; fails if a driver line runs in neither (about 4 minutes on 2 cores)
coverage: deps-c deps-python generated-fresh
	@find $(COVERAGE_BUILD) -name '*.gcda' -delete 2>/dev/null || true
	@$(MAKE) --no-print-directory COVERAGE=1 coverage-check-runs
	@$(COLLECT) $(COVERAGE_BUILD)/check.json
	@$(MAKE) --no-print-directory COVERAGE=1 coverage-rest-runs
	@$(COLLECT) $(COVERAGE_BUILD)/test.json
	@$(PY) tests/scripts/coverage_report.py report \
	  --check $(COVERAGE_BUILD)/check.json --test $(COVERAGE_BUILD)/test.json

coverage-check-runs: deps-c generated-fresh
	@$(call run_and_count,$(CHECK_C_RUNS))
coverage-rest-runs: deps-c generated-fresh
	@$(call run_and_count,$(COVERAGE_REST_RUNS))
