"""Checks that need the plan, made once on the loaded model (after --channels too).

Each names the location the model kept for the setting at fault.
"""

from .errors import ConfigError
from .model import Config, Target
from .plan import plan_target


def validate_target(target: Target) -> Target:
    """Private memory must hold the shared-storage workspace and one tile."""
    tp = plan_target(target)
    need = tp.min_private_bytes
    if target.memory.private_bytes < need:
        if target.channels_overridden:     # --channels replaced the list: blame the option
            where, key = target.where("channels"), " ".join(str(c) for c in target.channels)
        else:
            where = target.where("memory.private_bytes")
            key = f"targets.{target.name}.memory.private_bytes"
        raise ConfigError(str(where), key,
                          f"{target.memory.private_bytes} bytes cannot hold the workspace and "
                          f"one tile for {tp.max_chunk}-channel chunks; at least {need} needed "
                          f"(or specialize fewer channels)")
    return target


def validate(config: Config) -> Config:
    for t in config.targets:
        validate_target(t)
    return config
