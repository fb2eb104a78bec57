"""Command line: python3 -m generator {generate,plan,targets,vendor,report} ..."""

import argparse
import dataclasses
import difflib
import io
import os
import re
import signal
import subprocess
import sys
from typing import List, Optional

from .errors import ConfigError
from .files import FileManager, Terminated, written_by_us
from .loader import MAX_SPECIALIZED_CHANNELS, TARGET_NAME, channel_list, load
from .model import Config, Location
from .plan import plan_target
from .render import environment, render_target
from .validate import validate, validate_target


DECIMAL = re.compile(r"[0-9]{1,9}\Z")     # ASCII digits only: int() takes any script's


def _parse_channels(text: str):
    values = []
    for w in text.replace(",", " ").split():
        if not DECIMAL.match(w):
            raise ConfigError("--channels", w, "not a positive integer (decimal digits "
                              f"0-9, at most 9 of them); allowed: 1 to {MAX_SPECIALIZED_CHANNELS}")
        values.append(int(w))

    def fail(i, message):
        raise ConfigError("--channels", str(values[i]) if i is not None else "", message)
    return channel_list(values, fail)


def _selected(args) -> Config:
    """targets.yaml, validated, with --target and --channels applied."""
    config = validate(load(args.config))
    targets = config.targets
    if args.target:
        t = config.target(args.target)
        if t is None:
            known = ", ".join(x.name for x in config.targets)
            raise ConfigError("--target", args.target, f"unknown target; known: {known}")
        targets = (t,)
    if args.channels is not None:
        if not args.target:
            raise ConfigError("--channels", "", "needs --target (which target's list to replace)")
        locations = dict(targets[0].locations, channels=Location("--channels"))
        targets = (validate_target(dataclasses.replace(
            targets[0], channels=_parse_channels(args.channels), channels_overridden=True,
            locations=locations)),)
    return dataclasses.replace(config, targets=targets)


def _target_folders(out: str) -> List[str]:
    """Folders of out that hold a generated target: a build.mk with the banner."""
    try:
        names = sorted(os.listdir(out))
    except OSError:
        return []
    return [n for n in names if TARGET_NAME.match(n) and not os.path.islink(os.path.join(out, n))
            and written_by_us(os.path.join(out, n, "build.mk"))]


def _diff(out: str, rel: str, text: str, room: int) -> List[str]:
    try:
        with open(os.path.join(out, rel), encoding="utf-8", errors="replace", newline="") as f:
            old = f.read()
    except OSError:
        return []
    lines = list(difflib.unified_diff(old.splitlines(), text.splitlines(), f"{out}/{rel}",
                                      f"{out}/{rel} (rendered)", lineterm="", n=1))
    return lines[:room]


def cmd_generate(args) -> int:
    config = _selected(args)
    env = environment()
    fm = FileManager(args.out)
    for target in config.targets:
        for rel, text in render_target(env, plan_target(target)):
            fm.add(rel, text)
    names = [t.name for t in config.targets]

    def owned_dirs() -> List[str]:
        # The whole configuration owns the output tree: a target folder whose target
        # is no longer configured loses the files the generator wrote there.
        return sorted(set(names) | (set() if args.target else set(_target_folders(args.out))))
    if args.check:
        return _check(args, fm, owned_dirs)
    changed = fm.commit(owned_dirs)
    for verb, rel in changed:
        print(f"{verb} {args.out}/{rel}")
    for d in sorted({rel.split("/")[0] for verb, rel in changed if verb.startswith("kept")}
                    - set(names)):
        print(f"kept {args.out}/{d}/: target {d} is not in {args.config}, but the folder "
              "holds files the generator did not write")
    if not changed and not args.quiet:
        print(f"{args.out}: up to date")
    return 0


def _check(args, fm: FileManager, owned_dirs) -> int:
    """generate --check (make regen-check): the files the generator owns in the output
    tree against what the configuration renders; files it does not own are not looked at."""
    problems = fm.check(owned_dirs)
    if not problems:
        print(f"{args.out}: up to date with {args.config} "
              f"({len(fm.pending)} files the generator owns)")
        return 0
    room = 40
    for problem, rel in problems:
        print(f"{args.out}/{rel}: {problem}")
    for problem, rel in problems:
        if rel in fm.pending and problem.startswith("differs") and room > 0:
            lines = _diff(args.out, rel, fm.pending[rel], room)
            room -= len(lines)
            print("\n".join(lines))
    remake = "make generate" + (" TARGET=" + args.target if args.target else "")
    print(f"{args.out}: stale: run {remake} (it rewrites and removes only files the generator "
          "owns) and commit the result", file=sys.stderr)
    return 1


def cmd_targets(args) -> int:
    """The configured target names, one a line (what the Makefile builds and tests)."""
    for t in load(args.config).targets:
        print(t.name)
    return 0


def cmd_plan(args) -> int:
    config = _selected(args)
    for target in config.targets:
        tp = plan_target(target)
        for d in tp.dtypes:
            for k in d.kernels:
                if args.names:
                    print(k.table_entry)
                else:
                    shape = f"channels={k.channels}" if k.channels else "channels=any"
                    print(f"{target.name} {d.name} lanes={k.lanes} {shape} {k.table_entry}")
    return 0


def _one_target(args):
    config = _selected(args)
    if not args.target:
        raise ConfigError("--target", "", f"{args.command} needs one target")
    return config.targets[0]


def cmd_vendor(args) -> int:
    from .vendor import write_drop
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    _check_dest(args.dest, root)
    tp = plan_target(_one_target(args))
    command = f"make vendor TARGET={tp.name} DEST={args.dest}"
    if tp.target.channels_overridden:
        command += ' CHANNELS="' + " ".join(str(c) for c in tp.target.channels) + '"'
    if args.hal:
        command += f" HAL={args.hal}"
    changed = write_drop(root, tp, args.dest, command, args.hal)
    for verb, name in changed:
        if verb != "wrote":
            print(f"{verb} {os.path.join(args.dest, name)}")
    drop = [name for verb, name in changed if verb == "wrote"]
    print(f"{args.dest}: {tp.name}'s drop and MANIFEST ({len(drop)} files written)")
    return 0


def _check_dest(dest: str, root: str) -> None:
    """A drop goes into a firmware tree: not into the project (its headers would shadow
    the project's own), except under build/; links are resolved first."""
    if not dest:
        raise ConfigError("--dest", "", "is empty: name the folder to write the drop into")
    if any(not c.isprintable() for c in dest):
        raise ConfigError("--dest", dest, "contains control characters (a newline would "
                          "forge a line of the MANIFEST): name a plain folder")
    if os.path.lexists(dest) and not os.path.isdir(dest):
        raise ConfigError("--dest", dest, "exists and is not a folder")
    real, project = os.path.realpath(dest), os.path.realpath(root)

    def inside(folder: str) -> bool:
        return os.path.commonpath([real, folder]) == folder
    advice = "a drop goes into a firmware tree, e.g. ../firmware/third_party/bng"
    if real == project:
        raise ConfigError("--dest", dest, f"is the project: {advice}")
    if inside(os.path.realpath(os.path.join(root, "generated"))):
        raise ConfigError("--dest", dest, f"is inside generated/: {advice}")
    if inside(project) and not inside(os.path.realpath(os.path.join(root, "build"))):
        raise ConfigError("--dest", dest, f"is inside the project ({real}), where its files "
                          f"would shadow the project's own: {advice} (or a folder under build/)")


def cmd_report(args) -> int:
    from .report import report, symbol_sizes
    tp = plan_target(_one_target(args))    # with --channels: the objects' own plan
    columns = {}
    for spec in args.objects:
        label, nm, *objects = spec.split(",") + [""]
        objects = [o for o in objects if o]
        if not label or not nm or not objects:
            raise ConfigError("--objects", spec, "expected LABEL,NM,OBJECT[,OBJECT...], "
                              "e.g. host,nm,build/mt7004/obj/batch_norm_grad.o")
        missing = [o for o in objects if not os.path.isfile(o)]
        if missing or not objects:
            raise ConfigError("--objects", label, f"no object file {missing[0] if missing else ''}: "
                              "build the target's library first (make report does)")
        try:
            columns[label] = symbol_sizes(nm, objects)
        except (OSError, subprocess.CalledProcessError) as e:
            raise ConfigError("--objects", label, f"{nm} failed: {e}") from None
    print(report(tp, columns))
    return 0


class _Parser(argparse.ArgumentParser):
    """A usage error is one line, like every other error."""

    def error(self, message):
        raise ConfigError(self.prog, "", message)


def _parse(argv: Optional[List[str]]):
    p = _Parser(prog="python3 -m generator",
                description="Generate batchnormgrad kernels from targets.yaml.")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")
    sub = p.add_subparsers(dest="command", required=True)
    for name, helptext in (("generate", "render the kernels into the output tree"),
                           ("plan", "list the kernels the plan emits"),
                           ("targets", "list the configured targets"),
                           ("vendor", "render one target's drop for a firmware tree, with a MANIFEST"),
                           ("report", "per kernel: shape, unroll, tile plan, code size")):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("--config", default="targets.yaml", help="default: targets.yaml")
        if name == "targets":
            continue
        s.add_argument("--target", help="one target (default: all)")
        s.add_argument("--channels", help='replace the target\'s channel list, e.g. "48 96"')
        if name == "generate":
            s.add_argument("--out", default="generated", help="default: generated")
            s.add_argument("--quiet", action="store_true")
            s.add_argument("--check", action="store_true",
                           help="write nothing; exit 1 if a file the generator owns in the "
                                "output tree differs from what the configuration renders")
        elif name == "plan":
            s.add_argument("--names", action="store_true", help="kernel table names only")
        elif name == "vendor":
            s.add_argument("--dest", required=True, help="folder to write the drop into")
            s.add_argument("--hal", choices=("hthreads",),
                           help="add a reference HAL: hthreads (NUDT's device runtime)")
        else:
            s.add_argument("--objects", action="append", default=[],
                           help="LABEL,NM,OBJECT[,OBJECT...]: code sizes from one compiler")
    args = p.parse_args(argv)
    for key, value in vars(args).items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and "\0" in v:
                raise ConfigError("--" + key.replace("_", "-"), v, "contains a NUL byte")
    return args


def main(argv: Optional[List[str]] = None) -> int:
    debug = "--debug" in (sys.argv[1:] if argv is None else argv)
    try:
        args = _parse(argv)
        status = {"generate": cmd_generate, "plan": cmd_plan, "targets": cmd_targets,
                  "vendor": cmd_vendor, "report": cmd_report}[args.command](args)
        sys.stdout.flush()
        return status
    except ConfigError as e:
        if debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:     # plan | head: the reader has what it wanted
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())   # no second error at exit
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass
        return 128 + signal.SIGPIPE
    except (KeyboardInterrupt, Terminated) as e:
        if debug:
            raise
        signum = getattr(e, "signum", signal.SIGINT)
        print(f"error: interrupted by {signal.Signals(signum).name}; no file was left "
              "half-written", file=sys.stderr)
        return 128 + signum
