"""Fuzz the generator's loader: mutated targets.yaml texts must load and plan, or fail
with a clean ConfigError (what the CLI prints as file:line: key: message), never with
another exception (a traceback for the user). On a text that loads, a random channel
list is set for a random target as make generate CHANNELS= sets it: a clean error, or
a new text that loads with exactly that list and keeps every comment line.

    python3 tests/fuzz/fuzz_generator.py [--iterations N] [--seconds S] [--seed K]
"""

import argparse
import os
import random
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from generator.edit import plan_edit                 # noqa: E402
from generator.errors import ConfigError            # noqa: E402
from generator.loader import load, load_text         # noqa: E402
from generator.plan import plan_target               # noqa: E402
from generator.render import environment, render_target  # noqa: E402
from generator.validate import validate              # noqa: E402

TOKENS = ["0", "-1", "1", "3", "16", "31", "32", "64", "65", "4097", "0x10", "012", "1:30",
          "1e3", "null", "~", "true", "[]", "{}", "[1, 2]", "{a: 1}", '""', "'x'", "f16",
          "f32", "gnu", "portable", "../x", "A", "&a", "*a", "!!str 5", "!!python/none",
          "lanes", "stats", "cores", "memory", "channels", "targets", ":", "-", "#", "\t",
          "    ", "\n", "0xAFF00004", "99999999999999999999", "?", "|", ">",
          # the kinds that found tracebacks and injections: tags forcing a
          # type, numbers past Python's digit limit, deep nesting, comment terminators
          "!!int abc", "!!int ''", "!!int 0x", "!!float 1", "!!binary AAAA", "!!map {}",
          "9" * 5000, "0x" + "f" * 5000, "[" * 600 + "]" * 600, "{a: " * 300 + "1" + "}" * 300,
          "x */ extern int injected; /*", '"a\\n#error x"', "'??/'", '")("', '"int"',
          "0xFFFFFFFF", "0xAFF00000", "18446744073709551616", "\u00b2", "\u0664\u0668",
          '"\\0"', "\\",
          # octal-looking integers, merge keys, aliases of whole targets
          "032", "064", "0_8", "<<: *a", "{<<: *a}", "*x", "&x"]

# Hostile variants of targets.yaml the fuzz also starts from (each a clean error).
SEEDS = [
    ("description: NUDT FT78NE DSP cluster (FT-Matrix), fp32 only", "description: x */ int y; /*"),
    ("cores: 8", "cores: !!int ''"),
    ("f32: {lanes: 16}", "f32: {lanes: !!int abc}"),
    ("channels: [32, 64, 128, 256]", "channels: " + "[" * 500 + "]" * 500),
    ("shared_scratch_address: 0xAFF01000", "shared_scratch_address: 0xAFF00000"),
    ('shared_qualifier: ""', 'shared_qualifier: ")("'),
    ("private_bytes: 786432", "private_bytes: " + "9" * 5000),
    ("channels: [32, 64, 128, 256]", "channels: [032, 064]"),
    # a target aliased past the node limit: several replacements at once
    [("  ft78ne:", "  ft78ne: &x"),
     ("\n\n  mt7004:", "\n" + "".join(f"  a{i}: *x\n" for i in range(800)) + "\n  mt7004:")],
]


def mutate(text: str, rng: random.Random) -> str:
    if rng.randrange(4) == 0:               # start from a hostile seed
        seed = rng.choice(SEEDS)
        for old, new in seed if isinstance(seed, list) else [seed]:
            text = text.replace(old, new, 1)
    lines = text.split("\n")
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        i = rng.randrange(len(lines))
        if op == 0 and len(lines) > 1:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 2:                       # replace a word
            words = lines[i].split(" ")
            j = rng.randrange(len(words))
            words[j] = rng.choice(TOKENS)
            lines[i] = " ".join(words)
        elif op == 3:                       # re-indent
            lines[i] = " " * rng.randrange(8) + lines[i].lstrip()
        elif op == 4 and lines[i]:          # flip a character
            j = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:j] + chr(rng.randrange(32, 127)) + lines[i][j + 1:]
        else:                               # append a token
            lines[i] += " " + rng.choice(TOKENS)
    return "\n".join(lines)


def check_edit(path: str, text: str, config, rng: random.Random) -> str:
    """Set a random list on a random target of a loaded config: '' when all is well,
    else what went wrong."""
    target = rng.choice(config.targets)
    channels = tuple(sorted({rng.choice((rng.randint(1, 300), rng.randint(1, 5000)))
                             for _ in range(rng.randint(1, 6))}))
    try:
        edit = plan_edit(path, config, target.name, channels)
    except ConfigError as e:
        clean = str(e).startswith((path, "--channels")) and "\n" not in str(e)
        return "" if clean else f"edit error without file or option: {e}"
    edited = validate(load_text(edit.text, path))
    if edited.target(target.name).channels != channels:
        return f"the edited text holds {edited.target(target.name).channels}, not {channels}"

    def comments(t):
        return [line for line in t.splitlines() if line.lstrip().startswith("#")]
    return "" if comments(edit.text) == comments(text) else "the edit lost a comment line"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--iterations", type=int, default=3000)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    with open(os.path.join(ROOT, "targets.yaml")) as f:
        original = f.read()
    rng = random.Random(args.seed)
    env = environment()
    start = time.monotonic()
    counts = {"loaded": 0, "clean error": 0}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "targets.yaml")
        n = 0
        while n < args.iterations and time.monotonic() - start < args.seconds:
            text = mutate(original, rng)
            with open(path, "w") as f:
                f.write(text)
            try:
                config = validate(load(path))
                for target in config.targets:
                    tp = plan_target(target)
                    if n % 25 == 0:
                        render_target(env, tp)
                counts["loaded"] += 1
                problem = check_edit(path, text, config, rng) if n % 3 == 0 else ""
                if problem:
                    print(f"{problem} (input {n}, seed {args.seed})\n--- input:\n{text}")
                    return 1
            except ConfigError as e:
                if not str(e).startswith(path) or "\n" in str(e):
                    print(f"error without file and line, or on two lines: {e}\n--- input:\n{text}")
                    return 1
                counts["clean error"] += 1
            except Exception:
                print(f"traceback on input {n} (seed {args.seed}):\n{traceback.format_exc()}"
                      f"--- input:\n{text}")
                return 1
            n += 1
    print(f"generator fuzz: {n} mutated targets.yaml, {counts['loaded']} loaded, "
          f"{counts['clean error']} clean errors, 0 tracebacks ({time.monotonic() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
