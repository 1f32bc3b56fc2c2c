"""The documentation holds together: a short README, links that lead somewhere, facts held to code.

The command reference is held to the parser in ``tests/kit/test_tools.py``
(``tools/refresh_docs.py --check``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

KIT = Path(__file__).resolve().parents[2]
PAGES = sorted([KIT / "README.md", KIT / "CHANGELOG.md", *(KIT / "docs").glob("*.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes for a page's headings."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def test_the_readme_is_a_screen_or_two_and_opens_with_the_two_commands() -> None:
    text = (KIT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)
    assert len(text.splitlines()) <= 150
    assert blocks[0].strip().endswith("pip install . && grader check ds.07 --submission reference")
    assert blocks[1].strip().endswith("pip install -e '.[dev]' && python -m pytest")
    ci = (KIT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install --quiet -e '.[dev]'" in ci and "\npython -m pytest" in ci


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(KIT)))
def test_every_link_leads_to_a_file_and_heading_that_exist(page: Path) -> None:
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name} links to {target}: no such file"
        if anchor:
            assert anchor in anchors(linked), f"{page.name} links to {target}: no such heading"


def test_the_json_reports_keys_are_the_schemas_in_its_order() -> None:
    """docs/reports.md's table names every key of the report, in the order the schema has them."""
    schema = json.loads(
        (KIT / "grader" / "output" / "schemas" / "check-report.schema.json").read_text()
    )
    table = (KIT / "docs" / "reports.md").read_text(encoding="utf-8")
    start = table.index("| key | meaning |")
    rows = re.findall(r"^\| `(\w+)` \|", table[start:].split("\n\n")[0], flags=re.MULTILINE)
    assert rows == list(schema["properties"])
