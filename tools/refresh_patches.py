"""Re-make every mutant and wheat patch against the current ``reference/radix.py``.

The grader applies patches exactly (context and line numbers), so an edit to
the reference that moves lines breaks every patch below it. After such an
edit, run ``python tools/refresh_patches.py``: each patch is applied with
``patch``'s tolerance for moved lines, then written again as a fresh unified
diff. A patch whose context changed fails loudly and is left as it was; fix
that one by hand. ``--check`` changes nothing and exits 1 if a patch is out of
date (the kit's tests run it).
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from grader.inputs.catalog import kit_root, load_chapter


def refreshed(reference: Path, patch: Path) -> str:
    """``patch`` as a canonical unified diff against ``reference`` (apply, then diff afresh)."""
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / reference.name
        shutil.copyfile(reference, target)
        subprocess.run(
            ["patch", "--quiet", "--forward", "--fuzz=0", "-p1", "-i", str(patch.resolve())],
            cwd=folder,
            check=True,
            capture_output=True,
        )
        before = reference.read_text(encoding="utf-8").splitlines(keepends=True)
        after = target.read_text(encoding="utf-8").splitlines(keepends=True)
    name = reference.name
    return "".join(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}", lineterm="\n"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    parser.add_argument("--kit", type=Path, default=kit_root(), help="the kit's folder")
    args = parser.parse_args(argv)
    chapter = load_chapter(root=args.kit)
    patches = [m.patch for m in chapter.mutants] + [w.patch for w in chapter.wheats]
    stale = []
    for patch in patches:
        try:
            text = refreshed(chapter.reference, patch)
        except subprocess.CalledProcessError as error:
            print(f"{patch.name}: does not apply ({error.stdout.decode().strip()}); fix it by hand")
            return 1
        if text != patch.read_text(encoding="utf-8"):
            stale.append(patch.name)
            if not args.check:
                patch.write_text(text, encoding="utf-8")
    verb = "out of date" if args.check else "rewritten"
    print(f"{len(stale)} of {len(patches)} patches {verb}: {', '.join(stale) or 'none'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
