"""targets.yaml -> model.Config. Every error names the file, the line and the key.

YAML is composed with the safe loader into nodes (which carry line numbers) and
converted here by hand, so that unknown keys and wrong shapes are caught where
they stand in the file.
"""

import re
from typing import Dict, List, Optional, Sequence, Tuple

import yaml

from .errors import ConfigError
from .model import BACKENDS, DTYPES, Config, DTypeConfig, Location, MemoryConfig, Target

TARGET_NAME = re.compile(r"[a-z0-9_]+\Z")
# An address-space qualifier is a few C tokens: identifiers, parentheses, commas, spaces.
QUALIFIER = re.compile(r"[A-Za-z0-9_(), ]*\Z")
MAX_LANES = 64          # the widest vector include/bng_vec.h defines
MAX_CORES = 31            # core_mask is a C int: bit 31 is its sign
MAX_SPECIALIZED_CHANNELS = 4096
MIN_PRIVATE_BYTES = 4096
MAX_UNROLL = 256


class _Doc:
    """Node accessors that raise ConfigError at the node's line."""

    def __init__(self, path: str):
        self.path = path
        # The safe loader's constructor reads every YAML 1.1 integer form (0x1F, 0b101,
        # 012 octal, 1_000, 1:30 base 60) exactly as yaml.safe_load would.
        self.constructor = yaml.SafeLoader("")

    def location(self, node: Optional[yaml.Node]) -> Location:
        if node is None:
            return Location(self.path)
        return Location(self.path, node.start_mark.line + 1)

    def where(self, node: Optional[yaml.Node]) -> str:
        return str(self.location(node))

    def fail(self, node, key: str, message: str):
        raise ConfigError(self.where(node), key, message)

    def mapping(self, node, key: str, allowed: Sequence[str], required: Sequence[str]
                ) -> Dict[str, Tuple[yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            self.fail(node, key, f"expected a mapping with keys {', '.join(allowed)}")
        out: Dict[str, Tuple[yaml.Node, yaml.Node]] = {}
        for knode, vnode in node.value:
            name = knode.value if isinstance(knode, yaml.ScalarNode) else None
            full = f"{key}.{name}" if key else str(name)
            if name in out:
                self.fail(knode, full, "duplicate key")
            if name not in allowed:
                self.fail(knode, full, f"unknown key; allowed: {', '.join(allowed)}")
            out[name] = (knode, vnode)
        for name in required:
            if name not in out:
                self.fail(node, f"{key}.{name}" if key else name, "missing required key")
        return out

    def open_mapping(self, node, key: str) -> List[Tuple[str, yaml.Node, yaml.Node]]:
        """A mapping whose keys are names chosen by the user (targets)."""
        if not isinstance(node, yaml.MappingNode) or not node.value:
            self.fail(node, key, "expected a non-empty mapping of name: settings")
        seen = set()
        out = []
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode):
                self.fail(knode, key, "names must be plain strings")
            if knode.value in seen:
                self.fail(knode, f"{key}.{knode.value}", "duplicate name")
            seen.add(knode.value)
            out.append((knode.value, knode, vnode))
        return out

    def integer(self, node, key: str, lo: int, hi: int) -> int:
        if not (isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:int"):
            self.fail(node, key, f"expected an integer from {lo} to {hi}")
        value = self.constructor.construct_yaml_int(node)
        if not lo <= value <= hi:
            self.fail(node, key, f"{value} is out of range; allowed: {lo} to {hi}")
        return value

    def string(self, node, key: str) -> str:
        if not (isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str"):
            self.fail(node, key, "expected a string")
        return node.value

    def choice(self, node, key: str, allowed: Sequence[str]) -> str:
        value = self.string(node, key)
        if value not in allowed:
            self.fail(node, key, f"'{value}' is not allowed; allowed: {', '.join(allowed)}")
        return value


def _power_of_two(doc: _Doc, node, key: str) -> int:
    value = doc.integer(node, key, 1, MAX_LANES)
    if value & (value - 1):
        doc.fail(node, key, f"{value} is not a power of two; allowed: 1, 2, 4, ... {MAX_LANES}")
    return value


def _dtypes(doc: _Doc, node, key: str) -> Tuple[DTypeConfig, ...]:
    fields = doc.mapping(node, key, DTYPES, ())
    if not fields:
        doc.fail(node, key, f"list at least one of {', '.join(DTYPES)}")
    out = []
    for name in DTYPES:          # canonical order, whatever the file's
        if name not in fields:
            continue
        _, vnode = fields[name]
        k = f"{key}.{name}"
        allowed = ("lanes", "stats") if name == "f16" else ("lanes",)
        sub = doc.mapping(vnode, k, allowed, ("lanes",))
        lanes = _power_of_two(doc, sub["lanes"][1], f"{k}.lanes")
        stats = None
        if name == "f16":
            stats = doc.choice(sub["stats"][1], f"{k}.stats", DTYPES) if "stats" in sub else "f16"
        out.append(DTypeConfig(name=name, lanes=lanes, stats=stats))
    return tuple(out)


def _memory(doc: _Doc, node, key: str) -> MemoryConfig:
    names = ("private_bytes", "address_bits", "shared_params_address",
             "shared_scratch_address", "shared_qualifier")
    f = doc.mapping(node, key, names, names)
    address_bits = doc.integer(f["address_bits"][1], f"{key}.address_bits", 16, 64)

    def address(name: str, align: int) -> int:
        vnode = f[name][1]
        value = doc.integer(vnode, f"{key}.{name}", 0, 2**address_bits - 1)
        if value % align:
            doc.fail(vnode, f"{key}.{name}", f"{value:#x} is not {align}-byte aligned")
        return value
    qnode = f["shared_qualifier"][1]
    qualifier = doc.string(qnode, f"{key}.shared_qualifier")
    if not QUALIFIER.match(qualifier):
        doc.fail(qnode, f"{key}.shared_qualifier",
                 "only C identifiers, parentheses, commas and spaces are allowed")
    return MemoryConfig(
        private_bytes=doc.integer(f["private_bytes"][1], f"{key}.private_bytes",
                                  MIN_PRIVATE_BYTES, 2**address_bits),
        address_bits=address_bits,
        shared_params_address=address("shared_params_address", 8),
        shared_scratch_address=address("shared_scratch_address", 64),
        shared_qualifier=qualifier,
    )


def channel_list(values: Sequence[int], fail) -> Tuple[int, ...]:
    """Validate a channel list (from YAML or --channels); ``fail(index, message)`` raises."""
    if not values:
        fail(None, "expected at least one channel count")
    seen = set()
    for i, c in enumerate(values):
        if not 1 <= c <= MAX_SPECIALIZED_CHANNELS:
            fail(i, f"{c} is out of range; allowed: 1 to {MAX_SPECIALIZED_CHANNELS}")
        if c in seen:
            fail(i, f"{c} is listed twice")
        seen.add(c)
    return tuple(sorted(values))


def _channels(doc: _Doc, node, key: str) -> Tuple[int, ...]:
    if not isinstance(node, yaml.SequenceNode):
        doc.fail(node, key, "expected a list of channel counts, e.g. [32, 64]")
    items = node.value
    values = [doc.integer(n, key, 1, MAX_SPECIALIZED_CHANNELS) for n in items]

    def fail(i, message):
        doc.fail(items[i] if i is not None else node, key, message)
    return channel_list(values, fail)


def _target(doc: _Doc, name: str, knode, node) -> Target:
    key = f"targets.{name}"
    if not TARGET_NAME.match(name):
        doc.fail(knode, key, "a target name is lower-case letters, digits and _ only")
    names = ("description", "dtypes", "cores", "vector_backend", "memory", "channels",
             "max_unroll")
    f = doc.mapping(node, key, names, names)
    fields = dict(
        name=name,
        description=doc.string(f["description"][1], f"{key}.description"),
        dtypes=_dtypes(doc, f["dtypes"][1], f"{key}.dtypes"),
        cores=doc.integer(f["cores"][1], f"{key}.cores", 1, MAX_CORES),
        vector_backend=doc.choice(f["vector_backend"][1], f"{key}.vector_backend", BACKENDS),
        memory=_memory(doc, f["memory"][1], f"{key}.memory"),
        channels=_channels(doc, f["channels"][1], f"{key}.channels"),
        max_unroll=doc.integer(f["max_unroll"][1], f"{key}.max_unroll", 1, MAX_UNROLL),
    )
    # Where each setting stood, for the checks validate.py makes after loading.
    locations = {"": doc.location(knode)}
    locations.update({k: doc.location(v) for k, (_, v) in f.items()})
    locations.update({f"memory.{k.value}": doc.location(v) for k, v in f["memory"][1].value})
    return Target(locations=locations, **fields)


def load(path: str) -> Config:
    """Read and type-check targets.yaml; validate.py then checks what needs the plan."""
    doc = _Doc(path)
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
    except OSError as e:
        raise ConfigError(path, "", f"cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(path, "", f"not UTF-8 text (byte {e.start})") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        raise ConfigError(where, "", f"not valid YAML: {getattr(e, 'problem', e)}") from None
    if root is None:
        raise ConfigError(path, "", "the file is empty; it needs a 'targets:' mapping")
    top = doc.mapping(root, "", ("targets",), ("targets",))
    targets = tuple(_target(doc, name, knode, vnode)
                    for name, knode, vnode in doc.open_mapping(top["targets"][1], "targets"))
    return Config(targets=targets)
