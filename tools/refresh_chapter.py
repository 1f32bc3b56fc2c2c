"""Re-make the catalog blocks of the chapter's text after ``chapter/catalog.toml`` changes.

The chapter (``chapter/<text>.md``) restates catalog data between
``<!-- catalog: NAME -->`` and ``<!-- end catalog -->`` markers: the counts,
the course tests, the tests students write, the pitfalls. After an edit to
the catalog, run ``python tools/refresh_chapter.py`` to write them again from
it; the prose around them is left as it is. ``--check`` changes nothing and
exits 1 if a block is out of date (the kit's tests run it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.inputs.catalog import kit_root, load_chapter
from grader.inputs.chapter_text import read_chapter_text, stale_blocks, with_catalog_blocks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    parser.add_argument("--kit", type=Path, default=kit_root(), help="the kit's folder")
    args = parser.parse_args(argv)
    chapter = load_chapter(root=args.kit)
    text = read_chapter_text(chapter)
    stale = stale_blocks(chapter, text)
    if stale and not args.check:
        chapter.text.write_text(with_catalog_blocks(chapter, text), encoding="utf-8")
    verb = "out of date" if args.check else "rewritten"
    print(f"{chapter.text.name}: {len(stale)} catalog blocks {verb}: {', '.join(stale) or 'none'}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
