"""Output: collect every file first, then write only what changed, atomically.

Nothing touches the output tree until every file has rendered, so a failure leaves
it as it was; each file is replaced by rename, so none is ever half-written.
"""

import os
import tempfile
from typing import Dict, Iterable, List


class FileManager:
    def __init__(self, root: str):
        self.root = root
        self.pending: Dict[str, str] = {}

    def add(self, relpath: str, content: str) -> None:
        if relpath in self.pending:
            raise AssertionError(f"the plan writes {relpath} twice")
        self.pending[relpath] = content

    def _replace(self, path: str, content: str) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(content)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise

    def commit(self, owned_dirs: Iterable[str]) -> List[str]:
        """Write changed files; delete files in ``owned_dirs`` the plan no longer emits.

        Returns the relative paths written or removed.
        """
        changed = []
        for rel, content in sorted(self.pending.items()):
            path = os.path.join(self.root, rel)
            try:
                with open(path, encoding="utf-8", newline="") as f:
                    if f.read() == content:
                        continue
            except FileNotFoundError:
                pass
            self._replace(path, content)
            changed.append(rel)
        for d in sorted(owned_dirs):
            full = os.path.join(self.root, d)
            if not os.path.isdir(full):
                continue
            for name in sorted(os.listdir(full)):
                rel = f"{d}/{name}"
                if rel not in self.pending and os.path.isfile(os.path.join(full, name)):
                    os.unlink(os.path.join(full, name))
                    changed.append(rel + " (removed)")
        return changed
