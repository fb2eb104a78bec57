"""Jinja2 rendering of a target plan into C sources."""

import os
from typing import List, Tuple

import jinja2

from . import VERSION
from .plan import OPS, SHARED_SOURCES, WORKSPACE, TargetPlan

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "templates")


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render_target(env: jinja2.Environment, tp: TargetPlan) -> List[Tuple[str, str]]:
    """Render every file of one target: [(relative path, content)]."""
    out = []
    for f in tp.files:
        text = env.get_template(f.template).render(
            plan=tp,
            target=tp.target,
            dtype=tp.dtype(f.dtype) if f.dtype else None,
            template=f"templates/{f.template}",
            command=tp.command,
            version=VERSION,
            ops=OPS,
            workspace=WORKSPACE,
            shared_sources=SHARED_SOURCES,
            native=tp.target.native,
        )
        out.append((f.path, text))
    return out
