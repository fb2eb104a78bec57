"""What the model's tests share: the repository on sys.path, the target they use, and
its C programs (the trace and the calibration on the host), built by make when
missing or stale."""

import functools
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from generator.loader import load            # noqa: E402
from generator.plan import plan_target       # noqa: E402

TARGET = "mt7004"    # f32 and f16, 8 cores
TARGETS_YAML = os.path.join(ROOT, "targets.yaml")


@functools.lru_cache(maxsize=None)
def program(name: str) -> str:
    """The program make test built (BNG_MODEL_TRACE, BNG_MODEL_CALIBRATE), else
    build/<TARGET>/model/<name>, made up to date first."""
    given = os.environ.get(f"BNG_MODEL_{name.upper()}")
    if given:
        return os.path.join(ROOT, given)
    rel = f"build/{TARGET}/model/{name}"
    subprocess.run(["make", "--no-print-directory", "-s", "-C", ROOT, rel], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(ROOT, rel)


@functools.lru_cache(maxsize=None)
def target_plan():
    return plan_target(load(TARGETS_YAML).target(TARGET))
