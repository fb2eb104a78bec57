"""Batchnormgrad kernel generator: load targets.yaml, plan the kernels, render C.

Stages, one module each: ``loader`` (YAML to the ``model``'s frozen dataclasses, which
keep each setting's file and line), ``validate`` (the checks that need the plan, made
once after loading), ``plan`` (the kernels, files and workspace: the single source of
truth for what is emitted, built and tested), ``render`` (Jinja2) and ``files``
(write-on-change, atomic output); ``edit`` sets a target's channel list in targets.yaml,
``vendor`` writes and verifies a firmware drop, ``report`` sizes the kernels; ``cli``
parses the command line and dispatches to them. A user error is an
``errors.ConfigError``.
"""

# The generator's version: this line only (CHANGELOG.md's newest entry names it, a test
# checks that they agree). Every generated banner and every MANIFEST carries it.
VERSION = "0.2.0"
# The licence notice of every generated and vendored file (LICENSE holds the text).
LICENSE_ID = "Apache-2.0"
COPYRIGHT = "Copyright 2026 the batchnormgrad authors"
