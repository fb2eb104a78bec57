"""Command line: python3 -m generator {generate,plan,targets,vendor,verify-drop,report} ...

This module parses the arguments and hands each command to the modules that do the
work; it prints what they return. The Makefile runs it with --via-make, so that errors
name make's variables (CHANNELS=) rather than the options (--channels).
"""

import argparse
import io
import os
import signal
import sys
from typing import List, Optional

from .edit import set_channels, undo_edit
from .errors import ConfigError, option_error, spell_options_for_make
from .files import Terminated, differences, holding, owned_folders
from .loader import load
from .model import Config
from .plan import plan_target
from .render import render_config
from .report import (columns_from_specs, image_texts_from_specs, notes_from_specs,
                     object_texts_from_specs, report)
from .validate import select, validate
from .vendor import MANIFEST, check_drop_options, verify_drop, write_drop

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cmd_generate(args) -> int:
    if args.check:
        if args.channels is not None:
            raise option_error("--channels", args.channels, "sets the list; regen-check "
                               "(--check) compares what the file holds")
        return _generate(args)
    with holding(args.config):      # the file read, maybe edited, and the tree agree
        if args.channels is not None:
            print(set_channels(args.config, args.target, args.channels))
        return _generate(args)


def _generate(args) -> int:
    config = select(validate(load(args.config)), args.target)
    fm = render_config(config, args.out)
    names = [t.name for t in config.targets]
    owned = owned_folders(args.out, names, whole_config=not args.target)
    if args.check:
        return _check(args, fm, owned)
    changed = fm.commit(owned)
    for verb, rel in changed:
        if not (args.quiet and verb in ("wrote", "removed")):
            print(f"{verb} {args.out}/{rel}")
    for d in sorted({rel.split("/")[0] for verb, rel in changed if verb.startswith("kept")}
                    - set(names)):
        print(f"kept {args.out}/{d}/: target {d} is not in {args.config}, but the folder "
              "holds files the generator did not write")
    if not changed and not args.quiet:
        print(f"{args.out}: up to date")
    return 0


def _check(args, fm, owned) -> int:
    """generate --check (make regen-check): the files the generator owns in the output
    tree against what the configuration renders; files it does not own are not looked at."""
    problems = fm.check(owned)
    if not problems:
        print(f"{args.out}: up to date with {args.config} "
              f"({len(fm.pending)} files the generator owns)")
        return 0
    print("\n".join(differences(args.out, fm, problems)))
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
    for target in select(validate(load(args.config)), args.target, args.channels).targets:
        tp = plan_target(target)
        for d in tp.dtypes:
            for k in d.kernels:
                if args.names:
                    print(k.table_entry)
                else:
                    shape = f"channels={k.channels}" if k.channels else "channels=any"
                    print(f"{target.name} {d.name} lanes={k.lanes} {shape} {k.table_entry}")
    return 0


def _one_target(args, channels: Optional[str] = None) -> Config:
    """The configuration of the one target a command needs (with a what-if list, for
    report)."""
    config = validate(load(args.config))
    if not args.target:
        known = ", ".join(t.name for t in config.targets)
        raise option_error("--target", "", f"{args.command} needs one target; known: {known}")
    return select(config, args.target, channels)


def cmd_vendor(args) -> int:
    if args.channels is None:
        return _vendor(args)
    # Everything that can refuse the command is asked before targets.yaml is edited: the
    # target, the folder, the HAL (the list itself is checked by the edit, before it
    # writes).
    _one_target(args)
    check_drop_options(ROOT, args.dest, args.hal)
    # the tree beside the configuration: generated/ for make's targets.yaml
    out = os.path.join(os.path.dirname(args.config), "generated")
    with holding(args.config):
        edit = set_channels(args.config, args.target, args.channels)
        print(edit)
        try:
            _generate(argparse.Namespace(config=args.config, target=args.target, out=out,
                                         check=False, quiet=False))
            return _vendor(args)
        except ConfigError:     # the drop refused as it was written: the list back too
            undo_edit(edit)
            _generate(argparse.Namespace(config=args.config, target=args.target, out=out,
                                         check=False, quiet=True))
            raise


def _vendor(args) -> int:
    tp = plan_target(_one_target(args).targets[0])
    changed = write_drop(ROOT, tp, args.dest, args.hal)
    for verb, name in changed:
        if verb != "wrote":
            print(f"{verb} {os.path.join(args.dest, name)}")
    written = sum(1 for verb, name in changed if verb == "wrote" and name != MANIFEST)
    print(f"{args.dest}: {tp.name}'s drop ({written} file{'' if written == 1 else 's'} of it "
          f"written, and its MANIFEST); check it with make verify-drop DEST={args.dest}")
    return 0


def cmd_verify_drop(args) -> int:
    problems, notes, matched = verify_drop(args.dest)
    for line in problems + notes:
        print(f"{args.dest}/{line}")
    if problems:
        print(f"{args.dest}: does not match its MANIFEST ({len(problems)} of "
              f"{len(problems) + matched} files)", file=sys.stderr)
        return 1
    print(f"{args.dest}: all {matched} files of the drop match their sha256 in the MANIFEST"
          + (f"; {len(notes)} not in it (named above)" if notes else ""))
    return 0


def cmd_report(args) -> int:
    config = _one_target(args, args.channels)
    if args.tree:
        # make report's first stage: the (what-if) target's files, in a tree of its own
        fm = render_config(config, args.tree)
        fm.commit(owned_folders(args.tree, [args.target], whole_config=False))
        return 0
    base = plan_target(_one_target(args).targets[0])
    print(report(plan_target(config.targets[0]), columns_from_specs(args.objects),
                 notes_from_specs(args.note), base, object_texts_from_specs(args.objects),
                 image_texts_from_specs(args.image, args.objects),
                 image_texts_from_specs(args.forward_image, args.objects, "--forward-image")))
    return 0


class _Parser(argparse.ArgumentParser):
    """A usage error is one line, like every other error."""

    def error(self, message):
        raise ConfigError(self.prog, "", message)


def _parse(argv: List[str]):
    p = _Parser(prog="python3 -m generator",
                description="Generate batchnormgrad kernels from targets.yaml.")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")
    p.add_argument("--via-make", action="store_true",
                   help="errors name make's variables (CHANNELS=) instead of the options")
    sub = p.add_subparsers(dest="command", required=True)
    for name, helptext in (("generate", "render the kernels into the output tree"),
                           ("plan", "list the kernels the plan emits"),
                           ("targets", "list the configured targets"),
                           ("vendor", "render one target's drop for a firmware tree, with a MANIFEST"),
                           ("verify-drop", "check a drop against its MANIFEST"),
                           ("report", "per kernel: shape, unroll, tile plan, code size")):
        s = sub.add_parser(name, help=helptext)
        if name == "verify-drop":
            s.add_argument("--dest", required=True, help="the drop's folder")
            continue
        s.add_argument("--config", default="targets.yaml", help="default: targets.yaml")
        if name == "targets":
            continue
        s.add_argument("--target", help="one target (default: all)")
        if name == "generate":
            s.add_argument("--channels", help="set the target's channels: list in the config "
                           'file (a minimal edit), then render, e.g. "48 96"')
            s.add_argument("--out", default="generated", help="default: generated")
            s.add_argument("--quiet", action="store_true",
                           help="say only what needs a look (files kept, not the ones written or "
                                "removed)")
            s.add_argument("--check", action="store_true",
                           help="write nothing; exit 1 if a file the generator owns in the "
                                "output tree differs from what the configuration renders")
        elif name == "plan":
            s.add_argument("--channels", help='this run only: replace the target\'s list')
            s.add_argument("--names", action="store_true", help="kernel table names only")
        elif name == "vendor":
            s.add_argument("--dest", required=True, help="folder to write the drop into")
            s.add_argument("--hal", help="add a reference HAL: hthreads (NUDT's device runtime)")
            s.add_argument("--channels", help="first set the target's channels: list and "
                           "render it, as generate --channels does (nothing is edited when "
                           "the drop would be refused)")
        else:
            s.add_argument("--channels", help="a what-if: replace the target's list for "
                           "this report only")
            s.add_argument("--tree", help="render the target's files into this folder (the "
                           "sources make report builds), and nothing else")
            s.add_argument("--objects", action="append", default=[],
                           help="LABEL,NM,OBJECT[,OBJECT...]: code sizes from one compiler")
            s.add_argument("--note", action="append", default=[],
                           help="LABEL=TEXT: what a column's compiler and sizes are")
            s.add_argument("--image", action="append", default=[],
                           help="LABEL,ELF: a firmware image linked from a column's objects")
            s.add_argument("--forward-image", action="append", default=[],
                           help="LABEL,ELF: one calling the training forward")
    args = p.parse_args(argv)
    for key, value in vars(args).items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and "\0" in v:
                raise option_error("--" + key.replace("_", "-"), v, "contains a NUL byte")
    return args


COMMANDS = {"generate": cmd_generate, "plan": cmd_plan, "targets": cmd_targets,
            "vendor": cmd_vendor, "verify-drop": cmd_verify_drop, "report": cmd_report}


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    spell_options_for_make("--via-make" in argv)
    try:
        args = _parse(argv)
        status = COMMANDS[args.command](args)
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
