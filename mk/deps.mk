# Debian packages, installed on demand, all from here: a goal that needs a tool depends
# on its deps-<name> target, which probes for the tool and, when it is missing, installs
# the packages (as root or with password-less sudo; otherwise it says what to run).

# $(1) packages, $(2) why (shown when installing). make -j runs two goals' installs at
# once on a fresh machine (make test's MPI and drop builds did): each waits for the
# other's, one at a time under flock, and for any other apt's lock (DPkg::Lock::Timeout),
# where apt would otherwise fail at once on the lock.
APT_LOCK := /tmp/batchnormgrad-apt.lock
define apt_install
	if [ "$$(id -u)" = 0 ]; then sudo=; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else echo "error: missing $(1); run: sudo apt-get install -y $(1)" >&2; exit 1; fi; \
	echo "installing $(1)$(if $(2), ($(2)))" >&2; \
	SUDO=$$sudo flock $(APT_LOCK) sh -c '$$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq $(1) >&2'
endef

# A python3 that imports what it needs (the generator: jinja2 and yaml; its tests:
# hypothesis too): PYTHON if given, then Debian's, into which the deps- targets install
# the packages, then the first python3 on PATH (which may be another's: pyenv's shim
# cost a make that asked it first 0.45 CPU-s, a third of a plain make's). Named by the
# interpreter's own path, not a wrapper's.
find_python = for p in $(PYTHON) /usr/bin/python3 python3; do \
	command -v $$p >/dev/null 2>&1 \
	&& $$p -c 'import $(subst $(space),$(comma),$(or $(1),jinja2 yaml)); import sys; \
	  print(sys.executable)' 2>/dev/null && break; done
# $(1) a variable, $(2) modules: a python3 that imports them, looked for when first
# needed and kept in the variable once found (until then looked for again: deps-python
# installs one before a recipe needs it).
python_with = $(call shell_once,$(1),$(call find_python,$(2)))
PY      = $(call python_with,PY_FOUND,jinja2 yaml)
PY_TEST = $(call python_with,PY_TEST_FOUND,jinja2 yaml hypothesis)
# $(1) a variable, $(2) a command: its output, run when first needed and kept in the
# variable once not empty (a package the deps- targets install may change it until then)
shell_once = $(or $($(1)),$(eval $(1) := $(shell $(2)))$($(1)))

# (a compile's recipe asks for them: once a make, not once a compile)
CHECK_CFLAGS = $(call shell_once,CHECK_CFLAGS_FOUND,pkg-config --cflags check)
CHECK_LIBS   = $(call shell_once,CHECK_LIBS_FOUND,pkg-config --libs check)

# deps-<name>: DEPS_PROBE_<name> a shell test that the tools are there, DEPS_PACKAGES_<name>
# what installs them, DEPS_WHY_<name> what for (large installs say so),
# DEPS_OPTIONAL_<name> a note printed instead of failing when they cannot be installed.
DEPS := python python-test c mpi bench plot fuzz valgrind cross report drop

# (the python the recipes then use: found once a make)
DEPS_PROBE_python         = [ -n "$(PY)" ]
DEPS_PACKAGES_python      = python3 python3-jinja2 python3-yaml
DEPS_PROBE_python-test    = [ -n "$(PY_TEST)" ]
DEPS_PACKAGES_python-test = python3 python3-jinja2 python3-yaml python3-hypothesis
DEPS_PROBE_c              = command -v $(CC) && command -v pkg-config && pkg-config --exists check
DEPS_PACKAGES_c           = gcc pkg-config check
DEPS_PROBE_mpi            = command -v $(MPICC) && command -v $(MPIRUN)
DEPS_PACKAGES_mpi         = openmpi-bin libopenmpi-dev
DEPS_PROBE_bench          = [ -f $(DNNL_HEADER) ] && command -v gnuplot
DEPS_PACKAGES_bench       = libdnnl-dev gnuplot-nox
DEPS_OPTIONAL_bench       = continuing without oneDNN or the plot
DEPS_PROBE_plot           = command -v gnuplot
DEPS_PACKAGES_plot        = gnuplot-nox
DEPS_OPTIONAL_plot        = continuing without the plot
DEPS_PROBE_valgrind       = command -v valgrind
DEPS_PACKAGES_valgrind    = valgrind
# (the probe is a whole fuzz target: libFuzzer links only with one)
FUZZ_PROBE := 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) \
  { (void)d; (void)n; return 0; }'
DEPS_PROBE_fuzz           = command -v clang \
  && echo $(FUZZ_PROBE) | clang -fsanitize=fuzzer -x c - -o /dev/null
DEPS_PACKAGES_fuzz        = clang libclang-rt-14-dev
DEPS_WHY_fuzz             = for make fuzz: libFuzzer
DEPS_PROBE_cross          = command -v riscv64-unknown-elf-gcc && command -v arm-none-eabi-gcc \
  && command -v tcc && command -v clang && command -v $(OLDEST_GCC) && command -v $(OLDEST_CLANG) \
  && command -v sparse
DEPS_PACKAGES_cross       = gcc-riscv64-unknown-elf gcc-arm-none-eabi tcc clang \
  $(OLDEST_GCC) $(OLDEST_CLANG) sparse
DEPS_WHY_cross            = for make cross-check: bare-metal cross compilers and the oldest \
  packaged gcc and clang$(comma) a large install$(comma) about 1 GB$(comma) once
# make report needs the two bare-metal cross compilers it sizes with.
DEPS_PROBE_report         = command -v $(REPORT_CROSS)-gcc && command -v $(REPORT_ARM)-gcc
DEPS_PACKAGES_report      = gcc-$(REPORT_CROSS) gcc-$(REPORT_ARM)
DEPS_WHY_report           = for make report: the bare-metal RISC-V and Arm compilers$(comma) \
  about 650 MB$(comma) once

# make test's drop builds: CMake, and the bare-metal compilers with the C library the
# Cortex-M7 image links (newlib's nosys.specs).
DEPS_PROBE_drop           = command -v cmake && command -v riscv64-unknown-elf-gcc \
  && command -v arm-none-eabi-gcc && [ -f "$$(arm-none-eabi-gcc -print-file-name=nosys.specs)" ]
DEPS_PACKAGES_drop        = cmake gcc-arm-none-eabi libnewlib-arm-none-eabi gcc-riscv64-unknown-elf
DEPS_WHY_drop             = for make test's drop builds: CMake and bare-metal compilers$(comma) \
  about 1 GB$(comma) once

.PHONY: $(DEPS:%=deps-%)
$(DEPS:%=deps-%): deps-%:
	@if ! { $(DEPS_PROBE_$*); } >/dev/null 2>&1; then \
	  ( $(call apt_install,$(strip $(DEPS_PACKAGES_$*)),$(strip $(DEPS_WHY_$*))) ) \
	  $(if $(DEPS_OPTIONAL_$*),|| echo "note: $(DEPS_OPTIONAL_$*)"); fi
