"""generate --channels (make generate CHANNELS=...): set one target's channels: list in
targets.yaml, so that generate, vendor, regen-check and CI all build the same list.

The edit is minimal: only the characters of the list itself change (written as a flow
list, [48, 96]), so every comment and the file's layout stay. The new text is loaded
and validated before anything is written: an invalid list leaves the file byte for
byte as it was. A list that holds comments, or that another target shares through a
YAML anchor, cannot be replaced in place: the user edits it by hand.
"""

import dataclasses
import os
from typing import Optional, Tuple

import yaml

from .errors import ConfigError, option, option_error
from .files import FileManager
from .loader import channels_from_text, compose, load, load_text, read_text
from .model import Config
from .validate import select, validate, validate_target


@dataclasses.dataclass(frozen=True)
class ChannelsEdit:
    path: str
    line: int                   # of the target's channels: key
    target: str
    old: Tuple[int, ...]
    new: Tuple[int, ...]
    text: str                   # the whole file with the new list

    def __str__(self) -> str:
        def words(channels):
            return " ".join(map(str, channels))
        dropped = [c for c in self.old if c not in self.new]
        change = (f"{words(self.old)} (unchanged)" if self.old == self.new
                  else f"{words(self.old)} -> {words(self.new)}")
        if dropped:     # a kernel the firmware may still call goes to the generic one
            add = option("--channels") + ("" if option("--channels").endswith("=") else " ")
            change += (f" (dropped {words(dropped)}: those counts now run the generic "
                       f"kernel; {add}\"+{words(self.new)}\" adds counts instead)")
        return f"{self.path}:{self.line}: {self.target} channels: {change}"


def _uses(node: yaml.Node, counts: dict) -> None:
    """How often each node is reached from the root (an alias reaches its anchor's)."""
    stack = [node]
    while stack:
        n = stack.pop()
        counts[id(n)] = counts.get(id(n), 0) + 1
        if counts[id(n)] > 1:
            continue
        if isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)
        elif isinstance(n, yaml.MappingNode):
            stack.extend(v for _, v in n.value)


def _channels_node(root: yaml.Node, name: str) -> Tuple[yaml.Node, yaml.Node, yaml.Node]:
    """(target's mapping, key, value) of targets.<name>.channels in a file that loaded."""
    targets = next(v for k, v in root.value if k.value == "targets")
    target = next(v for k, v in targets.value if k.value == name)
    key, value = next((k, v) for k, v in target.value if k.value == "channels")
    return target, key, value


def _span(value: yaml.Node) -> Tuple[int, int]:
    """Where the list's text starts and ends (a block list ends with its last item, not
    at the next key, so that the comments and blank lines before that stay)."""
    if isinstance(value, yaml.SequenceNode) and not value.flow_style and value.value:
        return value.start_mark.index, value.value[-1].end_mark.index
    return value.start_mark.index, value.end_mark.index


def plan_edit(path: str, config: Config, name: str, channels: Tuple[int, ...]) -> ChannelsEdit:
    """The edit that sets target ``name``'s list to ``channels`` (validated against the
    target first, so that an error names the option), checked by loading the result."""
    target = config.target(name)
    validate_target(dataclasses.replace(target, channels=channels, channels_overridden=True))
    text = read_text(path)
    root = compose(text, path)
    mapping, key, value = _channels_node(root, name)
    line = key.start_mark.line + 1
    where, what = f"{path}:{line}", f"targets.{name}.channels"
    counts: dict = {}
    _uses(root, counts)
    if counts[id(value)] > 1 or counts[id(mapping)] > 1:
        raise ConfigError(where, what, "this list (or its target) is shared with another "
                          f"through a YAML anchor, so {option('--channels')} cannot set it "
                          f"for {name} alone: edit {path} by hand")
    start, end = _span(value)
    if "#" in text[start:end]:
        raise ConfigError(where, what, "the list holds comments, which a new list cannot "
                          f"keep: edit {path} by hand")
    new_text = text[:start] + "[" + ", ".join(map(str, channels)) + "]" + text[end:]
    loaded = validate(load_text(new_text, path))
    others = [t for t in config.targets if t.name != name]
    if loaded.target(name) != dataclasses.replace(target, channels=channels) or \
            [t for t in loaded.targets if t.name != name] != others:
        raise ConfigError(where, what, f"could not replace the list in place: edit {path} "
                          "by hand")
    return ChannelsEdit(path, line, name, target.channels, channels, new_text)


def write_edit(edit: ChannelsEdit) -> None:
    """Replace the file whole (the file manager's all-or-nothing rename)."""
    if edit.old == edit.new:
        return
    folder, name = os.path.split(os.path.abspath(edit.path))
    fm = FileManager(folder)
    fm.add(name, edit.text)
    fm.commit([])


def undo_edit(edit: ChannelsEdit) -> None:
    """Put the list back as it was before ``edit`` (the rest of the file is the edit's)."""
    write_edit(dataclasses.replace(edit, old=edit.new, new=edit.old,
                                   text=plan_edit(edit.path, validate(load(edit.path)),
                                                  edit.target, edit.old).text))


def set_channels(path: str, name: Optional[str], text: str) -> ChannelsEdit:
    """generate --target name --channels text: the edit, made (or refused: the file
    stays byte for byte); the caller holds the file's folder (files.holding)."""
    config = validate(load(path))
    if not name:
        known = ", ".join(t.name for t in config.targets)
        raise option_error("--channels", text, f"needs {option('--target')}: the target "
                           f"whose channels: list in {path} to set (known: {known})")
    target = select(config, name).targets[0]        # an unknown target, named
    if text.lstrip().startswith("+"):                # "+40 80": added to the list
        added = channels_from_text(text.lstrip()[1:], shown=text)
        channels = tuple(sorted(set(target.channels) | set(added)))
    else:
        channels = channels_from_text(text)
    edit = plan_edit(path, config, name, channels)
    write_edit(edit)
    return edit
