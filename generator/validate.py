"""Checks that need the plan, made once on the loaded model (after --channels too).

Each names the location the model kept for the setting at fault.
"""

from .errors import ConfigError
from .model import Config, Target
from .plan import ALIGN, SUMS_COUNT_LIMBS, plan_target


def _check_shared_ranges(target: Target, scratch_bytes: int, params_slots: int) -> None:
    """The parameter block (12 slots, 16 with extensions) and the scratch lie inside the
    address space and apart."""
    memory, top = target.memory, 2 ** target.memory.address_bits
    params_bytes = params_slots * 8     # long long params[slots] at shared_params_address
    ranges = (("shared_params_address", memory.shared_params_address, params_bytes,
               f"the {params_bytes}-byte parameter block"),
              ("shared_scratch_address", memory.shared_scratch_address, scratch_bytes,
               f"the {scratch_bytes}-byte _s scratch"))
    for key, start, size, what in ranges:
        if start + size > top:
            raise ConfigError(str(target.where(f"memory.{key}")),
                              f"targets.{target.name}.memory.{key}",
                              f"{start:#x}: {what} would run past the {memory.address_bits}-bit "
                              f"address space (its last byte at {start + size - 1:#x}); "
                              f"allowed: up to {top - size:#x}")
    (_, a, a_size, a_what), (key, b, b_size, b_what) = ranges
    if a < b + b_size and b < a + a_size:
        raise ConfigError(str(target.where(f"memory.{key}")), f"targets.{target.name}.memory.{key}",
                          f"{b:#x}: {b_what} [{b:#x}, {b + b_size:#x}) overlaps {a_what} "
                          f"[{a:#x}, {a + a_size:#x}); the scratch would overwrite the "
                          f"parameters on the target")


def _check_p_workspace(target: Target, workspace: int, need: int, max_chunk: int) -> None:
    """_p's workspace on a split target: whole ALIGN-byte units, room for the workspace
    arrays and one tile of each kind."""
    key = f"targets.{target.name}.memory.spaces.p_workspace_bytes"
    where = str(target.where("memory.spaces.p_workspace_bytes"))
    if workspace % ALIGN:
        raise ConfigError(where, key, f"{workspace} is not a multiple of {ALIGN}; "
                          f"allowed: e.g. {(workspace // ALIGN + 1) * ALIGN}")
    if workspace < need:
        raise ConfigError(where, key, f"{workspace} bytes cannot hold _p's workspace and one "
                          f"tile for {max_chunk}-channel chunks; at least {need} needed "
                          f"(or leave it out for that)")


def check_split_native_halves(target: Target) -> None:
    """A split target's native f16 loads and stores need the half spellings: without
    them bng_vec.h converts lane by lane (bng_native_load_f16, bng_native_store_f16),
    scalar code reading and writing the half array, which lies in vector memory."""
    if not (target.memory.split and target.vector_backend == "native" and target.dtype("f16")):
        return
    missing = [k for k in ("half_load", "half_store") if not getattr(target.native, k)]
    if missing:
        where = target.where("native" if "native" in target.locations else "vector_backend")
        raise ConfigError(str(where), f"targets.{target.name}.native.{missing[0]}",
                          "a split target with f16 and the native backend needs "
                          f"native.half_load and native.half_store (missing: {', '.join(missing)}): "
                          "without them f16 vectors are converted lane by lane in scalar "
                          "code, which cannot reach the halves in vector memory")


def validate_target(target: Target) -> Target:
    """Private memory must be whole ALIGN-byte units and hold the shared-storage
    workspace and one tile; the shared ranges must fit the address space and not
    overlap."""
    tp = plan_target(target)
    check_split_native_halves(target)
    if target.memory.split:
        _check_p_workspace(target, tp.p_workspace_bytes, tp.min_private_bytes, tp.max_chunk)
        # _s puts the partial-sums count limb by limb, each limb a vector of the workspace's
        # part_dy (include/bng_driver.c bng_core_put_sums).
        for d in tp.dtypes:
            if d.workspace_chunk < SUMS_COUNT_LIMBS * tp.vector_lanes:
                raise ConfigError(str(target.where("dtypes")), f"targets.{target.name}.dtypes.{d.name}.lanes",
                                  f"{d.config.lanes} lanes: on a split target the {d.name} workspace "
                                  f"needs room for {SUMS_COUNT_LIMBS} vectors of {tp.vector_lanes} floats")
    _check_shared_ranges(target, tp.scratch_bytes, tp.shared_params_slots)
    if target.memory.private_bytes % ALIGN:
        # The HAL hands out private memory as one block aligned to ALIGN bytes, the
        # size a multiple of it (C11's aligned_alloc requires as much on a host).
        raise ConfigError(str(target.where("memory.private_bytes")),
                          f"targets.{target.name}.memory.private_bytes",
                          f"{target.memory.private_bytes} is not a multiple of {ALIGN}; "
                          f"allowed: e.g. {target.memory.private_bytes // ALIGN * ALIGN}")
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
