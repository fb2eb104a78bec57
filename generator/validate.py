"""Checks that need the plan, made once on the loaded model (after --channels too),
and the selection of targets a command works on.

Each names the location the model kept for the setting at fault.
"""

import dataclasses
from typing import Optional

from .errors import ConfigError, option, option_error, some_of
from .loader import MAX_SPECIALIZED_CHANNELS, channels_from_text
from .model import FAMILIES, Config, Target
from .order import NCHW_BLOCK_VECTORS
from .plan import SUMS_COUNT_LIMBS, plan_target
from .staging import ALIGN


def _check_shared_ranges(target: Target, scratch_bytes: int, params_slots: int) -> None:
    """The parameter block (12 slots, 16 with extensions), the scratch and the GSM rows
    (memory.gsm, when it has bytes) lie inside the address space, inside the shared
    memory memory.shared states (when it does), and apart."""
    memory, top = target.memory, 2 ** target.memory.address_bits
    params_bytes = params_slots * 8     # long long params[slots] at shared_params_address
    ranges = [("shared_params_address", memory.shared_params_address, params_bytes,
               f"the {params_bytes}-byte parameter block"),
              ("shared_scratch_address", memory.shared_scratch_address, scratch_bytes,
               f"the {scratch_bytes}-byte _s scratch")]
    if memory.gsm_bytes:
        ranges.append(("gsm.address", memory.gsm_address, memory.gsm_bytes,
                       f"the {memory.gsm_bytes}-byte GSM rows"))
    for key, start, size, what in ranges:
        if start + size > top:
            raise ConfigError(str(target.where(f"memory.{key}")),
                              f"targets.{target.name}.memory.{key}",
                              f"{start:#x}: {what} would run past the {memory.address_bits}-bit "
                              f"address space (its last byte at {start + size - 1:#x}); "
                              f"allowed: up to {top - size:#x}")
    if memory.shared_bytes:
        for key, start, size, what in ranges:
            _check_inside_shared(target, key, start, size, what)
    for i, (_, a, a_size, a_what) in enumerate(ranges):
        for key, b, b_size, b_what in ranges[i + 1:]:
            if a < b + b_size and b < a + a_size:
                raise ConfigError(str(target.where(f"memory.{key}")),
                                  f"targets.{target.name}.memory.{key}",
                                  f"{b:#x}: {b_what} [{b:#x}, {b + b_size:#x}) overlaps "
                                  f"{a_what} [{a:#x}, {a + a_size:#x}); one would overwrite "
                                  f"the other on the target")


def _check_inside_shared(target: Target, key: str, start: int, size: int, what: str) -> None:
    """One range inside memory.shared. The scratch grows with the widest channel count:
    past the end, the error names the widest count whose scratch ends inside."""
    memory = target.memory
    low, end = memory.shared_address, memory.shared_address + memory.shared_bytes
    if low <= start and start + size <= end:
        return
    region = f"memory.shared [{low:#x}, {end:#x}) ({target.where('memory.shared')})"
    place = f"{what} [{start:#x}, {start + size:#x}) is not inside {region}"
    widest = widest_channels(target) if key == "shared_scratch_address" else None
    if widest is not None and low <= start < end:
        if target.channels_overridden:      # the command line's list: blame it
            raise option_error("--channels", " ".join(map(str, target.channels)),
                               f"{place}: list no count above {widest}, the widest this "
                               f"target takes",
                               item=some_of([c for c in target.channels if c > widest], "counts"))
        raise ConfigError(str(target.where("channels")), f"targets.{target.name}.channels",
                          f"{place}: specialize no count above {widest}, the widest this "
                          f"target takes, or give memory.shared more room")
    allowed = (f"allowed: {low:#x} to {end - size:#x}" if size <= memory.shared_bytes else
               f"it is larger than memory.shared ({memory.shared_bytes} bytes)")
    raise ConfigError(str(target.where(f"memory.{key}")), f"targets.{target.name}.memory.{key}",
                      f"{start:#x}: {place}; {allowed}")


def _check_gsm_fits_the_part(target: Target) -> None:
    """The GSM rows take no more than the part's GSM (part:, when given)."""
    memory, part = target.memory, target.part
    if part is not None and memory.gsm_bytes > part.gsm_bytes:
        raise ConfigError(str(target.where("memory.gsm.bytes")),
                          f"targets.{target.name}.memory.gsm.bytes",
                          f"{memory.gsm_bytes} is more than the part's GSM (part.gsm_bytes "
                          f"{part.gsm_bytes}); allowed: up to {part.gsm_bytes}")


def _check_p_workspace(target: Target, workspace: int, need: int, max_chunk: int) -> None:
    """_p's workspace on a split target: whole ALIGN-byte units, room for the workspace
    arrays and the 32-row tiles (and for nchw's layout, with nchw)."""
    key = f"targets.{target.name}.memory.spaces.p_workspace_bytes"
    where = str(target.where("memory.spaces.p_workspace_bytes"))
    if workspace % ALIGN:
        raise ConfigError(where, key, f"{workspace} is not a multiple of {ALIGN}; "
                          f"allowed: e.g. {(workspace // ALIGN + 1) * ALIGN}")
    if workspace < need:
        raise ConfigError(where, key, f"{workspace} bytes cannot hold _p's workspace and 32-row "
                          f"tiles for {max_chunk}-channel chunks"
                          + (", nor nchw's tiles" if "nchw" in target.extensions else "")
                          + f"; at least {need} needed (or leave it out for that)")


def check_split_native_halves(target: Target) -> None:
    """A split target's native f16 loads and stores need the half spellings: without
    them bng_vec_native.h converts lane by lane (bng_native_load_f16, bng_native_store_f16),
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


def _widest_that_fits(target: Target, fits_plan) -> Optional[int]:
    """The widest channel count whose plan ``fits_plan`` takes (None: not even the generic
    kernel's chunks); what a plan needs grows with its widest count."""
    def fits(c: int) -> bool:
        return fits_plan(plan_target(dataclasses.replace(target, channels=(c,))))
    if not fits(1):
        return None
    lo, hi = 1, MAX_SPECIALIZED_CHANNELS       # fits(lo)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def widest_channels(target: Target) -> Optional[int]:
    """The widest count the target accepts (its private memory, and the scratch inside
    memory.shared): what the README states and the channel walk reaches."""
    return _widest_that_fits(target, lambda tp: _plan_fits(target, tp))


def _scratch_inside(target: Target, tp) -> bool:
    """The _s scratch of the plan ends inside memory.shared (where the target bounds it)."""
    memory = target.memory
    return (not memory.shared_bytes or memory.shared_scratch_address + tp.scratch_bytes
            <= memory.shared_address + memory.shared_bytes)


def _plan_fits(target: Target, tp) -> bool:
    return _scratch_inside(target, tp) and tp.min_private_bytes <= target.memory.private_bytes


def _check_private_bytes(target: Target, tp) -> None:
    """private_bytes holds the _s workspace and the 32-row tiles of the widest chunk; the
    error names the key to change, the value that would do, and the widest count that
    fits. A larger private_bytes is advised only where it is enough: where the scratch's
    bound (memory.shared) takes every count listed too."""
    have, need = target.memory.private_bytes, tp.min_private_bytes
    if have >= need:
        return
    where = target.where("memory.private_bytes")
    widest = _widest_that_fits(target, lambda tp: tp.min_private_bytes <= have)
    holds = (f"{have} bytes cannot hold the _s workspace and 32-row tiles for "
             f"{tp.max_chunk}-channel chunks")
    if widest is None:
        raise ConfigError(str(where), f"targets.{target.name}.memory.private_bytes",
                          f"{holds}, even without specialized counts; at least {need} needed")
    scratch_takes = _widest_that_fits(target, lambda tp: _scratch_inside(target, tp))
    if scratch_takes is None:
        return      # no count's scratch fits memory.shared: that check names it first
    advise = min(widest, scratch_takes)
    too_wide = [c for c in target.channels if c > advise]
    more_private_does = max(target.channels) <= scratch_takes
    scratch_bound = ("" if more_private_does else
                     f", and the _s scratch of a count above {scratch_takes} would end past "
                     f"memory.shared")
    if target.channels_overridden:      # the command line's list: blame it, name the key
        raise option_error(
            "--channels", " ".join(map(str, target.channels)),
            f"memory.private_bytes ({have} bytes, {where}) holds the _s workspace and "
            f"32-row tiles for at most {widest} channels{scratch_bound}: list no count above "
            f"{advise}" + (f", or set memory.private_bytes to at least {need}"
                           if more_private_does else ""),
            item=some_of(too_wide, "counts"))
    raise ConfigError(str(where), f"targets.{target.name}.memory.private_bytes",
                      f"{holds}; at least {need} needed{scratch_bound}: "
                      + (f"set it to {need} or more, or " if more_private_does else "")
                      + f"specialize no count above {advise} (now {some_of(too_wide)})")


def _check_nchw(target: Target) -> None:
    """nchw is a layout of the extended calls: it needs one of their families; on a split
    target the GNU backend (below), each storage type's lanes whole vectors of the
    steps' (a plane's lane sums fold a vector at a time) and a block whole vectors of the
    padding's (a piece's pitch is its length)."""
    if "nchw" not in target.extensions:
        return
    key, where = f"targets.{target.name}.extensions", str(target.where("extensions"))
    if not set(target.extensions) & set(FAMILIES):
        raise ConfigError(where, key, "nchw is a layout of the extended calls: list at least "
                          "one of reduce, apply, dx, ext beside it")
    tp = plan_target(target)
    if target.memory.split:
        pad = max(d.lanes for d in target.dtypes)
        for d in target.dtypes:
            if d.lanes % tp.vector_lanes or NCHW_BLOCK_VECTORS * d.lanes % pad:
                raise ConfigError(str(target.where("dtypes")),
                                  f"targets.{target.name}.dtypes.{d.name}.lanes",
                                  f"{d.lanes} lanes: nchw on a split target needs a multiple of "
                                  f"{tp.vector_lanes} (the float vector's lanes) whose "
                                  f"{NCHW_BLOCK_VECTORS}-vector blocks are whole vectors of {pad}")
    # _s streams a plane that does not fit a tile buffer in pieces of whole blocks
    # (include/bng_nchw_staged.c bng_nchw_layout): each tile buffer holds one block, after
    # the per-channel area.
    need = tp.nchw_min_private_bytes
    if target.memory.private_bytes < need:
        raise ConfigError(str(target.where("memory.private_bytes")),
                          f"targets.{target.name}.memory.private_bytes",
                          f"{target.memory.private_bytes} bytes cannot hold nchw's "
                          f"{tp.nchw_tile_buffers} tile "
                          f"buffers of a block ({NCHW_BLOCK_VECTORS} vectors) each; at least "
                          f"{need} needed")


def validate_target(target: Target) -> Target:
    """Private memory must be whole ALIGN-byte units and hold the shared-storage
    workspace and 32-row tiles; the shared ranges must fit the address space and not
    overlap."""
    tp = plan_target(target)
    check_split_native_halves(target)
    # On a split target these work on a vector's bits or lanes: relu's masked loads
    # (bng_vec.h), the forward's square root (include/bng_sqrt.h), nchw's fold of a
    # plane's lane sums (bng_vec.h, "Lanes"): the GNU vector extension's operations in
    # registers. The native spellings name no such operation, and
    # both other backends spell them as lane loops, scalar code on vector memory.
    for extension, code in (("relu", "its masked loads are scalar lane loops"),
                            ("forward", "its square root is a scalar lane loop"),
                            ("nchw", "its plane sums' fold is a scalar lane loop")):
        if target.memory.split and extension in target.extensions and target.vector_backend != "gnu":
            raise ConfigError(str(target.where("vector_backend")), f"targets.{target.name}.extensions",
                              f"{extension} on a split target (memory.spaces) needs vector_backend "
                              f"gnu, not {target.vector_backend}: {code} there, which cannot reach "
                              "vector memory")
    _check_nchw(target)
    if target.memory.split:
        _check_p_workspace(target, tp.p_workspace_bytes,
                           max(tp.min_private_bytes, tp.nchw_min_private_bytes), tp.max_chunk)
        # _s puts the partial-sums count limb by limb, each limb a vector of the workspace's
        # part_dy (include/bng_nhwc_staged.c bng_nhwc_put_sums); the forward its two
        # limbs from part_mean (bng_fwd_nhwc_staged.c), fewer than SUMS_COUNT_LIMBS.
        for d in tp.dtypes:
            if d.workspace_chunk < SUMS_COUNT_LIMBS * tp.vector_lanes:
                raise ConfigError(str(target.where("dtypes")), f"targets.{target.name}.dtypes.{d.name}.lanes",
                                  f"{d.config.lanes} lanes: on a split target the {d.name} workspace "
                                  f"needs room for {SUMS_COUNT_LIMBS} vectors of {tp.vector_lanes} floats")
    if target.memory.private_bytes % ALIGN:
        # The HAL hands out private memory as one block aligned to ALIGN bytes, the
        # size a multiple of it (C11's aligned_alloc requires as much on a host).
        raise ConfigError(str(target.where("memory.private_bytes")),
                          f"targets.{target.name}.memory.private_bytes",
                          f"{target.memory.private_bytes} is not a multiple of {ALIGN}; "
                          f"allowed: e.g. {target.memory.private_bytes // ALIGN * ALIGN}")
    _check_private_bytes(target, tp)
    _check_shared_ranges(target, tp.scratch_bytes, tp.shared_params_slots)
    _check_gsm_fits_the_part(target)
    return target


def validate(config: Config) -> Config:
    for t in config.targets:
        validate_target(t)
    return config


def select(config: Config, name: Optional[str], channels: Optional[str] = None) -> Config:
    """The configuration's targets, or only the one named; with ``channels`` (the
    command line's text), that target's list replaced for this run only: a what-if,
    validated like the file's."""
    targets = config.targets
    if name is not None:
        target = config.target(name)
        if target is None:
            known = ", ".join(t.name for t in config.targets)
            raise option_error("--target", name, f"unknown target; known: {known}")
        targets = (target,)
    if channels is not None:
        if name is None:
            raise option_error("--channels", channels, f"needs {option('--target')} (which "
                               "target's list to replace)")
        targets = (validate_target(dataclasses.replace(
            targets[0], channels=channels_from_text(channels), channels_overridden=True)),)
    return dataclasses.replace(config, targets=targets)
