"""targets.yaml -> model.Config. Every error names the file, the line and the key.

YAML is composed with the safe loader into nodes (which carry line numbers) and
converted here by hand, so that unknown keys and wrong shapes are caught where
they stand in the file.
"""

import os
import re
from typing import Dict, List, Optional, Sequence, Tuple

import yaml

from .errors import ConfigError, option_error
from .model import (BACKENDS, DEFAULT_SPATIAL, DTYPES, EXTENSIONS, FAMILIES, Config, DTypeConfig,
                    Location, MemoryConfig, NativeSpellings, PartFigures, Target)

TARGET_NAME = re.compile(r"[a-z0-9_]{1,64}\Z")
# Strings that reach generated C must stay inside their comment or token. A
# description lands in a /* */ banner: one line of printable text without comment
# delimiters (and without ??/, a trigraph backslash under -std=c99).
DESCRIPTION = re.compile(r"[^\x00-\x1f\x7f]{1,200}\Z")
DESCRIPTION_FORBIDDEN = ("*/", "/*", "??/", "\\")
# An address-space qualifier: identifiers, each optionally followed by one balanced
# parenthesised list of identifiers, numbers and commas, e.g. __gsm__ or
# __attribute__((address_space(1))).
QUALIFIER_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[(),])")
NOT_A_QUALIFIER = frozenset((
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
    "_Bool", "_Complex", "struct", "union", "enum", "typedef", "extern", "static", "auto",
    "register", "inline", "restrict", "sizeof", "return", "if", "else", "for", "while", "do",
    "switch", "case", "default", "goto", "break", "continue", "half"))
# The native backend's default spellings, with the public sources they follow: a data
# file beside this one (every key a string).
NATIVE_DEFAULTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "native_defaults.yaml")
with open(NATIVE_DEFAULTS_FILE, encoding="utf-8") as _f:
    NATIVE_DEFAULTS = yaml.safe_load(_f)
# The YAML composer: libyaml's where PyYAML was built with it (Debian's is), the same
# nodes and marks as the pure-Python one's, six times faster (a targets.yaml is
# composed by every generator command, and the generator's tests compose hundreds).
COMPOSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
NATIVE_PLACEHOLDERS = {
    "load": ("ptr",), "store": ("value", "ptr"), "broadcast": ("scalar",),
    "add": ("a", "b"), "sub": ("a", "b"), "mul": ("a", "b"), "div": ("a", "b"),
    "half_load": ("ptr",), "half_store": ("value", "ptr"),
}
# An operation: identifiers, numbers, parentheses, commas, + - * /, and placeholders;
# nothing that could end the expression or the macro (; { } # " ' \ newlines), and no /
# that opens a comment (// or /*).
NATIVE_EXPRESSION = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[(),+*\- ]|/(?![/*])|\{[a-z]+\})*\Z")
NATIVE_TYPE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?: [A-Za-z_][A-Za-z0-9_]*){0,3}\Z")
NATIVE_HEADER = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9_.\-]*/)*[A-Za-z0-9_][A-Za-z0-9_.\-]*\.h\Z")
MAX_LANES = 64          # the widest vector include/bng_vec.h defines
MAX_CORES = 31            # core_mask is a C int: bit 31 is its sign
MAX_SPECIALIZED_CHANNELS = 4096
MAX_SPECIALIZED_SPATIAL = 2**24   # 4096 x 4096: a larger plane runs the generic kernel
MIN_PRIVATE_BYTES = 4096
MAX_PRIVATE_BYTES = 2**31   # emitted as an unsigned constant; no DSP core has more
MAX_UNROLL = 256
MAX_FILE_BYTES = 1 << 20    # a targets.yaml is a few KiB: anything larger is a mistake
MAX_INTEGER_CHARS = 40      # longer than any 64-bit value in any YAML integer form
# YAML 1.1 reads a leading zero as octal (032 is 26): refused, never silently taken.
OCTAL = re.compile(r"[-+]?0[0-9_]+\Z")
# Nodes the conversion may visit, an alias counted at each use: a targets file of a few
# hundred targets has a few thousand; aliases can multiply a small file's nodes (and the
# targets, and the rendering work) without bound.
MAX_NODES = 20000


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
        expected = f"expected an integer from {lo} to {hi}"
        if not (isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:int"):
            self.fail(node, key, expected)
        if len(node.value) > MAX_INTEGER_CHARS:
            self.fail(node, key, f"{expected}; this one has {len(node.value)} characters")
        try:    # a !!int tag forces the type onto any text: '', 'abc'
            value = self.constructor.construct_yaml_int(node)
        except (ValueError, IndexError):
            self.fail(node, key, f"{expected}; '{node.value}' is not one")
        if OCTAL.match(node.value):
            digits = node.value.lstrip("+-").lstrip("0_") or "0"
            self.fail(node, key, f"'{node.value}' has a leading zero, which YAML 1.1 reads as "
                      f"octal ({value}); write {digits} for decimal (or hex, 0x..., for another base)")
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


def _qualifier_problem(text: str) -> Optional[str]:
    """None when text is a qualifier the generated C can carry, else what is wrong."""
    tokens, at = [], 0
    while at < len(text):
        m = QUALIFIER_TOKEN.match(text, at)
        if not m:
            if not text[at:].strip():
                break
            return f"'{text[at]}' cannot stand in a qualifier"
        tokens.append(m.group(1))
        at = m.end()
    depth, previous = 0, None
    for t in tokens:
        if t in NOT_A_QUALIFIER:
            return f"'{t}' is a C keyword or type, not a qualifier"
        if t == "(":
            if previous is None or (depth == 0 and not re.match(r"[A-Za-z_]", previous)):
                return "a '(' must follow an identifier"
            depth += 1
        elif t == ")":
            if depth == 0:
                return "a ')' closes nothing"
            depth -= 1
        elif depth == 0 and not re.match(r"[A-Za-z_]", t):
            return f"'{t}' cannot stand outside parentheses"
        previous = t
    if depth:
        return "a '(' is not closed"
    return None


def _native(doc: _Doc, node, key: str) -> NativeSpellings:
    names = tuple(NATIVE_DEFAULTS)
    fields = doc.mapping(node, key, names, ()) if node is not None else {}
    out = dict(NATIVE_DEFAULTS)
    for name, (_, vnode) in fields.items():
        k = f"{key}.{name}"
        text = doc.string(vnode, k)
        if name == "header":
            if text and not NATIVE_HEADER.match(text):
                doc.fail(vnode, k, "a header path like compiler/m3000.h (letters, digits, "
                         "_ . - and /), or \"\" for none")
        elif name == "type":
            if not NATIVE_TYPE.match(text) or text.split()[0] in ("struct", "union", "enum"):
                doc.fail(vnode, k, "one to four C words naming the float vector type, e.g. "
                         "lvector float")
        else:
            wanted = NATIVE_PLACEHOLDERS[name]
            used = re.findall(r"\{([a-z]+)\}", text)
            if not text and name.startswith("half_"):
                pass
            elif not NATIVE_EXPRESSION.match(text) or sorted(used) != sorted(wanted) \
                    or text.count("(") != text.count(")"):
                doc.fail(vnode, k, "a C expression of identifiers, numbers, ( ) , + - * / "
                         f"using {', '.join('{' + w + '}' for w in wanted)} once each"
                         + (", or \"\" for the lane-wise conversion" if name.startswith("half_") else "")
                         + f"; e.g. {NATIVE_DEFAULTS[name] or 'vec_ldh({ptr})'}")
        out[name] = text
    return NativeSpellings(**out)


def _description(doc: _Doc, node, key: str) -> str:
    text = doc.string(node, key)
    bad = next((d for d in DESCRIPTION_FORBIDDEN if d in text), None)
    if not DESCRIPTION.match(text) or bad:
        doc.fail(node, key, "one line of 1 to 200 printable characters, without "
                 "control characters, comment delimiters, '??/' or backslashes (it goes "
                 "into a C comment in every generated file)")
    return text


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


SPACES = ("unified", "split")
MAX_SPACE_BYTES = 2**31


def _spaces(doc: _Doc, node, key: str, private_bytes: int) -> Tuple[str, int, int, int]:
    """The optional memory.spaces: {kind: unified} (the default), or {kind: split,
    scalar_bytes: S, vector_bytes: V, p_workspace_bytes: P (optional)}, whose vector
    memory holds private_bytes (and _p's workspace: 0 for the plan's least)."""
    if node is None:
        return "unified", 0, 0, 0
    sizes = ("scalar_bytes", "vector_bytes")
    f = doc.mapping(node, key, ("kind",) + sizes + ("p_workspace_bytes",), ("kind",))
    kind = doc.choice(f["kind"][1], f"{key}.kind", SPACES)
    if kind == "unified":
        for name in sizes + ("p_workspace_bytes",):
            if name in f:
                doc.fail(f[name][0], f"{key}.{name}",
                         "only a split target has separate memories; remove it, or set kind: split")
        return kind, 0, 0, 0
    for name in sizes:
        if name not in f:
            doc.fail(node, f"{key}.{name}", "missing required key (kind: split)")
    scalar = doc.integer(f["scalar_bytes"][1], f"{key}.scalar_bytes", 1024, MAX_SPACE_BYTES)
    vnode = f["vector_bytes"][1]
    vector = doc.integer(vnode, f"{key}.vector_bytes", MIN_PRIVATE_BYTES, MAX_SPACE_BYTES)
    if vector < private_bytes:
        doc.fail(vnode, f"{key}.vector_bytes",
                 f"{vector} is smaller than memory.private_bytes ({private_bytes}), which "
                 "the _s entry points take from vector memory on a split target")
    p_workspace = 0
    if "p_workspace_bytes" in f:
        pnode = f["p_workspace_bytes"][1]
        p_workspace = doc.integer(pnode, f"{key}.p_workspace_bytes", 1, vector)
    return kind, scalar, vector, p_workspace


def _region(doc: _Doc, node, key: str, address_bits: int, least: int = 0) -> Tuple[int, int]:
    """An optional {address: A, bytes: B} of memory (memory.gsm: the part of the
    cluster's global shared memory _s may keep rows in between its passes;
    memory.shared: the shared memory the fixed addresses must lie in); (0, 0) without
    it."""
    if node is None:
        return 0, 0
    f = doc.mapping(node, key, ("address", "bytes"), ("address", "bytes"))
    top = 2**address_bits
    anode, bnode = f["address"][1], f["bytes"][1]
    address = doc.integer(anode, f"{key}.address", 1, top - 1)
    if address % 64:
        doc.fail(anode, f"{key}.address", f"{address:#x} is not 64-byte aligned")
    size = doc.integer(bnode, f"{key}.bytes", least, top - address)
    if size % 64:
        doc.fail(bnode, f"{key}.bytes", f"{size} is not a multiple of 64; allowed: e.g. "
                 f"{size // 64 * 64}")
    return address, size


def _memory(doc: _Doc, node, key: str) -> MemoryConfig:
    names = ("private_bytes", "address_bits", "shared_params_address",
             "shared_scratch_address", "shared_qualifier")
    f = doc.mapping(node, key, names + ("spaces", "gsm", "shared"), names)
    address_bits = doc.integer(f["address_bits"][1], f"{key}.address_bits", 16, 64)

    def address(name: str, align: int, lowest: int) -> int:
        """Address 0 is NULL: the parameter block and the scratch cannot start there."""
        vnode = f[name][1]
        value = doc.integer(vnode, f"{key}.{name}", lowest, 2**address_bits - 1)
        if value % align:
            doc.fail(vnode, f"{key}.{name}", f"{value:#x} is not {align}-byte aligned")
        return value
    qnode = f["shared_qualifier"][1]
    qualifier = doc.string(qnode, f"{key}.shared_qualifier")
    problem = _qualifier_problem(qualifier)
    if problem:
        doc.fail(qnode, f"{key}.shared_qualifier", f"{problem}; allowed: empty, or "
                 "identifiers each with an optional (...) list, e.g. __gsm__ or "
                 "__attribute__((address_space(1)))")
    private_bytes = doc.integer(f["private_bytes"][1], f"{key}.private_bytes",
                                MIN_PRIVATE_BYTES, min(MAX_PRIVATE_BYTES, 2**address_bits - 1))
    spaces, scalar_bytes, vector_bytes, p_workspace_bytes = _spaces(
        doc, f["spaces"][1] if "spaces" in f else None, f"{key}.spaces", private_bytes)
    gsm_address, gsm_bytes = _region(doc, f["gsm"][1] if "gsm" in f else None, f"{key}.gsm",
                                     address_bits)
    shared_address, shared_bytes = _region(doc, f["shared"][1] if "shared" in f else None,
                                           f"{key}.shared", address_bits, least=64)
    return MemoryConfig(
        private_bytes=private_bytes,
        spaces=spaces, scalar_bytes=scalar_bytes, vector_bytes=vector_bytes,
        p_workspace_bytes=p_workspace_bytes,
        gsm_address=gsm_address, gsm_bytes=gsm_bytes,
        shared_address=shared_address, shared_bytes=shared_bytes,
        address_bits=address_bits,
        shared_params_address=address("shared_params_address", 8, 1),
        shared_scratch_address=address("shared_scratch_address", 64, 1),
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


# A count on the command line: ASCII digits only (int() takes any script's).
DECIMAL = re.compile(r"[0-9]{1,9}\Z")


def channels_from_text(text: str, shown: Optional[str] = None) -> Tuple[int, ...]:
    """A channel list from the command line ("48 96" or "48,96"), validated; errors
    name the option (with ``shown``, the value as the user gave it) and the first
    offending value."""
    words = text.replace(",", " ").split()
    shown = text if shown is None else shown
    for w in words:
        if not DECIMAL.match(w):
            raise option_error("--channels", shown, "not a positive integer (decimal digits "
                               f"0-9, at most 9 of them); allowed: 1 to "
                               f"{MAX_SPECIALIZED_CHANNELS}", item=w)
    values = [int(w) for w in words]

    def fail(i, message):
        raise option_error("--channels", shown, message, item=None if i is None else words[i])
    return channel_list(values, fail)


def _channels(doc: _Doc, node, key: str) -> Tuple[int, ...]:
    if not isinstance(node, yaml.SequenceNode):
        doc.fail(node, key, "expected a list of channel counts, e.g. [32, 64]")
    items = node.value
    values = [doc.integer(n, key, 1, MAX_SPECIALIZED_CHANNELS) for n in items]

    def fail(i, message):
        doc.fail(items[i] if i is not None else node, key, message)
    return channel_list(values, fail)


def _extensions(doc: _Doc, node, key: str) -> Tuple[str, ...]:
    """The optional extensions: list: entry points beyond the vendor's four."""
    if node is None:
        return ()
    if not isinstance(node, yaml.SequenceNode):
        doc.fail(node, key, f"expected a list of some of {', '.join(EXTENSIONS)}, e.g. [reduce, apply]")
    seen = set()
    for item in node.value:
        value = doc.choice(item, key, EXTENSIONS)
        if value in seen:
            doc.fail(item, key, f"{value} is listed twice")
        seen.add(value)
    if "relu" in seen and not seen & set(FAMILIES):
        doc.fail(node, key, f"relu is a flag of the calls of {', '.join(FAMILIES)}: list one of them too")
    return tuple(e for e in EXTENSIONS if e in seen)     # canonical order


def _spatial(doc: _Doc, node, key: str, extensions: Tuple[str, ...]) -> Tuple[int, ...]:
    """The optional spatial: list (nchw only): the extents H*W to specialize, ascending;
    [] for the generic kernel alone; without the key, DEFAULT_SPATIAL."""
    if node is None:
        return DEFAULT_SPATIAL
    if "nchw" not in extensions:
        doc.fail(node, key, "spatial: lists the nchw kernels' extents; add nchw to "
                 "extensions: or remove the key")
    if not isinstance(node, yaml.SequenceNode):
        doc.fail(node, key, "expected a list of spatial extents (H*W), e.g. [3136, 784]")
    values = [doc.integer(n, key, 1, MAX_SPECIALIZED_SPATIAL) for n in node.value]
    for i, v in enumerate(values):
        if v in values[:i]:
            doc.fail(node.value[i], key, f"{v} is listed twice")
    return tuple(sorted(values))


# ---- part: the part's figures for make model (optional) ----
# Each key of targets.yaml part: with the range it may take; every one is required
# there, so that a prediction never rests on a default nobody wrote down.
PART_FIGURES = {
    "clock_mhz": (1, 100000),
    "ddr_mb_per_s": (1, 10**7),
    "gsm_bytes": (1, 2**40),
    "gsm_mb_per_s": (1, 10**7),
    "dma_latency_ns": (0, 10**7),
    "dma_in_flight": (1, 1024),
    "vector_alu_per_cycle": (1, 64),
    "vector_ldst_per_cycle": (1, 64),
}


def _part(doc: _Doc, node, key: str) -> Optional[PartFigures]:
    """The optional part: mapping (None without it); integers, file:line errors."""
    if node is None:
        return None
    f = doc.mapping(node, key, tuple(PART_FIGURES), tuple(PART_FIGURES))
    return PartFigures(**{name: doc.integer(f[name][1], f"{key}.{name}", lo, hi)
                          for name, (lo, hi) in PART_FIGURES.items()})


def _target(doc: _Doc, name: str, knode, node) -> Target:
    key = f"targets.{name}"
    if not TARGET_NAME.match(name):
        doc.fail(knode, key, "a target name is 1 to 64 lower-case letters, digits and _")
    names = ("description", "dtypes", "cores", "vector_backend", "memory", "channels",
             "max_unroll", "native", "extensions", "spatial", "part")
    f = doc.mapping(node, key, names, names[:-4])
    fields = dict(
        name=name,
        description=_description(doc, f["description"][1], f"{key}.description"),
        dtypes=_dtypes(doc, f["dtypes"][1], f"{key}.dtypes"),
        cores=doc.integer(f["cores"][1], f"{key}.cores", 1, MAX_CORES),
        vector_backend=doc.choice(f["vector_backend"][1], f"{key}.vector_backend", BACKENDS),
        memory=_memory(doc, f["memory"][1], f"{key}.memory"),
        channels=_channels(doc, f["channels"][1], f"{key}.channels"),
        max_unroll=doc.integer(f["max_unroll"][1], f"{key}.max_unroll", 1, MAX_UNROLL),
        native=_native(doc, f["native"][1] if "native" in f else None, f"{key}.native"),
        extensions=_extensions(doc, f["extensions"][1] if "extensions" in f else None,
                               f"{key}.extensions"),
        part=_part(doc, f["part"][1] if "part" in f else None, f"{key}.part"),
    )
    fields["spatial"] = _spatial(doc, f["spatial"][1] if "spatial" in f else None,
                                 f"{key}.spatial", fields["extensions"])
    # Where each setting stood, for the checks validate.py makes after loading.
    locations = {"": doc.location(knode)}
    locations.update({k: doc.location(v) for k, (_, v) in f.items()})
    for k, v in f["memory"][1].value:
        locations[f"memory.{k.value}"] = doc.location(v)
        if k.value in ("spaces", "gsm", "shared"):
            locations.update({f"memory.{k.value}.{sk.value}": doc.location(sv)
                              for sk, sv in v.value})
    return Target(locations=locations, **fields)


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


MAX_NESTING = 64     # flow collections ([ ] and { }) nested deeper are no targets file


def _too_deep(text: str) -> Optional[int]:
    """The line where flow collections nest past MAX_NESTING, before YAML's own
    recursion runs out (quoted text and comments are skipped)."""
    depth, line, quote = 0, 1, None
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
            if quote is None or quote == "#":
                quote = None
        elif quote:
            if ch == quote and quote != "#":
                quote = None
        elif ch in "\"'" or (ch == "#" and (i == 0 or text[i - 1] in " \t\n")):
            quote = ch
        elif ch in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return line
        elif ch in "]}":
            depth = max(0, depth - 1)
    return None


def _too_many_nodes(root: yaml.Node) -> Optional[int]:
    """The line where the nodes the conversion would visit, each alias counted at each
    use (so a cycle counts without end), pass MAX_NODES; None if they do not. Walked in
    document order; inside an alias's contents the line is that of the alias's use."""
    count, seen = 0, set()
    stack = [(root, root.start_mark.line + 1, False)]
    while stack:
        node, line, repeated = stack.pop()
        count += 1
        if count > MAX_NODES:
            return line
        repeated = repeated or id(node) in seen
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            children = [(item, item.start_mark.line + 1) for item in node.value]
        elif isinstance(node, yaml.MappingNode):
            children = [(n, k.start_mark.line + 1) for k, v in node.value for n in (k, v)]
        else:
            continue
        stack.extend((child, line if repeated else at, repeated)
                     for child, at in reversed(children))
    return None


def read_text(path: str) -> str:
    """A targets file's text: at most MAX_FILE_BYTES of UTF-8."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ConfigError(path, "", f"cannot read: {e.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(path, "", f"larger than {MAX_FILE_BYTES} bytes: not a targets file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}:{_line_of(data.decode('latin-1'), e.start)}", "",
                          f"not UTF-8 text (byte {e.start})") from None


def compose(text: str, path: str) -> yaml.Node:
    """The text's YAML nodes (with their marks), within this file's limits."""
    deep = _too_deep(text)
    if deep:
        raise ConfigError(f"{path}:{deep}", "", f"lists or mappings nested more than "
                          f"{MAX_NESTING} deep: not a targets file")
    try:
        root = yaml.compose(text, Loader=COMPOSER)
    except yaml.reader.ReaderError as e:     # a character YAML does not allow (NUL, ...)
        raise ConfigError(f"{path}:{_line_of(text, e.position)}", "",
                          f"not valid YAML: character {e.character!r} is not allowed") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        raise ConfigError(where, "", f"not valid YAML: {getattr(e, 'problem', e)}") from None
    except RecursionError:
        raise ConfigError(path, "", "nested too deeply") from None
    if root is None:
        raise ConfigError(path, "", "the file is empty; it needs a 'targets:' mapping")
    crowded = _too_many_nodes(root)
    if crowded:
        raise ConfigError(f"{path}:{crowded}", "", f"more than {MAX_NODES} values, aliases "
                          "counted at each use (*name repeats its anchor's contents): not a "
                          "targets file")
    return root


def load_text(text: str, path: str) -> Config:
    """Type-check a targets file's text; errors name ``path`` and the line."""
    doc = _Doc(path)
    top = doc.mapping(compose(text, path), "", ("targets",), ("targets",))
    targets = tuple(_target(doc, name, knode, vnode)
                    for name, knode, vnode in doc.open_mapping(top["targets"][1], "targets"))
    return Config(targets=targets)


def load(path: str) -> Config:
    """Read and type-check targets.yaml; validate.py then checks what needs the plan."""
    return load_text(read_text(path), path)
