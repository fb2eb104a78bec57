"""make model: a calibrated cost model of the DSP cluster, driven by the shipped
driver's own schedule. A prediction, not a measurement (docs/performance.md, "The DSP
cost model").

Stages, one module each: ``trace`` loads the record bench/model/trace.c writes (the
shipped driver's _s run under the tracing HAL, include/host/bng_hal_trace.c: every
transfer, wait, barrier and kernel call of every core), ``replay`` replays it as
discrete events on the part's figures (targets.yaml part:), timing each kernel call
from ``opcount`` (the generated kernels' vector operations, counted from the
template's own macros), and ``report`` prints the tables and writes the CSV the plot
reads. ``shapes`` holds the default shapes; ``__main__`` drives the stages.
"""
