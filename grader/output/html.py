"""The mutation testing report as one self-contained HTML page.

The page carries the mutation-testing-elements viewer (vendored in
``grader/output/vendor``, about 230 KB) and the report itself, so it opens
offline, from a CI artifact, an e-mail or an LMS, and never depends on a CDN
being up, reachable from a campus network, or trustworthy. The report JSON is
embedded with every ``<`` escaped, so no text in it can close the script.
"""

from __future__ import annotations

import html
import json
from functools import cache
from pathlib import Path
from typing import Any

VIEWER = Path(__file__).with_name("vendor") / "mutation-test-elements.js"

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<script>
{viewer}
</script>
</head>
<body>
<mutation-test-report-app title-postfix="{title}"></mutation-test-report-app>
<script>
document.querySelector("mutation-test-report-app").report = {report};
</script>
</body>
</html>
"""


@cache
def _viewer() -> str:
    return VIEWER.read_text(encoding="utf-8")


def mutation_report_html(report: dict[str, Any], title: str) -> str:
    """A page that shows ``report`` (the data of ``mutation_report``) in the viewer."""
    data = json.dumps(report, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")
    return PAGE.format(title=html.escape(title), viewer=_viewer(), report=data)
