"""Batchnormgrad kernel generator: load targets.yaml, plan the kernels, render C.

Stages, one module each: ``loader`` (YAML to the ``model``'s frozen dataclasses, which
keep each setting's file and line), ``validate`` (the checks that need the plan, made
once after loading), ``plan`` (the kernels, files and workspace: the single source of
truth for what is emitted, built and tested), ``render`` (Jinja2) and ``files``
(write-on-change, atomic output); ``cli``, ``vendor`` and ``report`` drive them, and a
user error is an ``errors.ConfigError``.
"""

VERSION = "0.1.0"
