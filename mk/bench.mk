# make bench: fixed shapes timed on every target, gnu and portable backends, against a
# naive loop, oneDNN and a roofline (docs/performance.md). (make test's smoke run of the
# bench: mk/test.mk.)

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
$(BUILD)/$(1)/$(2)/bench: bench/bench.c $(BUILD)/$(1)/$(2)/libbatchnormgrad.a \
  $(BENCH_DNNL_STAMP) | deps-c
	$$(CC) $$(CFLAGS) -std=c11 -Wall -Wextra -DBNG_HOST $$(call bench_dnnl) -Iinclude \
	  -Igenerated/$(1) $$< $(BUILD)/$(1)/$(2)/libbatchnormgrad.a $$(call bench_dnnl_libs) \
	  $(LDLIBS) -o $$@
endef
$(foreach t,$(ALL_TARGETS),$(foreach v,$(BENCH_FLAVOURS),$(eval $(call bench_rules,$(t),$(v)))))
BENCHES := $(foreach t,$(ALL_TARGETS),$(foreach v,$(BENCH_FLAVOURS),$(BUILD)/$(t)/$(v)/bench))

.PHONY: bench
## time fixed shapes on every target, gnu and portable backends: table, bench/results.csv,
## bench/results.png
bench: deps-c deps-bench generated-fresh
	@$(MAKE) --no-print-directory $(BENCHES)
	@rm -f bench/results.csv
	@echo "ISA: $$(grep -o -m1 -w 'avx512f' /proc/cpuinfo || grep -o -m1 -w 'avx2' /proc/cpuinfo \
	  || uname -m); roofline: the faster of the two traffic-only loops (the one at 100%)"
	@echo "target  backend   dtype shape          contender                  median_us     GB/s" \
	  "vs_oneDNN roofline"
	@for b in $(BENCHES); do BNG_HAL_HOST=fast OMP_NUM_THREADS=1 $$b \
	  --backend $$(basename $$(dirname $$b)) --csv bench/results.csv || exit 1; done
	@if command -v gnuplot >/dev/null; then gnuplot bench/plot.gp && echo "plot: bench/results.png"; \
	else echo "note: no gnuplot, no plot (the table above and bench/results.csv are complete)"; fi
