"""Jinja2 rendering of a target plan into C sources (and of a drop's build files)."""

import functools
import os
from typing import List, Tuple

import jinja2

from . import COPYRIGHT, LICENSE_ID, VERSION
from .files import FileManager
from .model import Config
from .nhwc_memory import WORKSPACE
from .plan import TargetPlan, plan_target

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "templates")


@functools.lru_cache(maxsize=None)
def environment() -> jinja2.Environment:
    """The one environment of the process: each template is compiled once, however many
    targets and drops the process renders (Jinja reloads a template whose file changed)."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def template_context(tp: TargetPlan, template: str, **context) -> dict:
    """What a template of one target is rendered with: what every banner needs, and
    context."""
    return dict(plan=tp, target=tp.target, template=f"templates/{template}", version=VERSION,
                license_id=LICENSE_ID, copyright=COPYRIGHT, **context)


def render_file(env: jinja2.Environment, template: str, tp: TargetPlan, **context) -> str:
    """One template for one target, with what every banner needs."""
    return env.get_template(template).render(template_context(tp, template, **context))


def render_target(env: jinja2.Environment, tp: TargetPlan) -> List[Tuple[str, str]]:
    """Render every file of one target: [(relative path, content)]."""
    return [(f.path, render_file(env, f.template, tp,
                                 dtype=tp.dtype(f.dtype) if f.dtype else None,
                                 command=tp.command, workspace=WORKSPACE,
                                 driver_sources=tp.driver_sources,
                                 vector_sources=tp.vector_sources, native=tp.target.native))
            for f in tp.files]


def render_config(config: Config, out: str) -> FileManager:
    """Every file of every target of config, rendered and held for one commit into out."""
    env = environment()
    fm = FileManager(out)
    for target in config.targets:
        for rel, text in render_target(env, plan_target(target)):
            fm.add(rel, text)
    return fm
