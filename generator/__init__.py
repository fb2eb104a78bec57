"""Batchnormgrad kernel generator: load targets.yaml, plan the variants, render C.

Stages, one module each: ``model`` (the validated configuration), ``loader``
(YAML to model, with file:line errors), ``plan`` (the list of variants: the single
source of truth for what is emitted, built and tested), ``render`` (Jinja2),
``files`` (write-on-change, atomic output) and ``cli``.
"""

VERSION = "0.1.0"
