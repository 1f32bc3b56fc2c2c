"""The class page's figures: SVG charts and tables drawn from plain values, no result."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

_BAR = "#3f7fbf"
_WARN = "#d9822b"


def column_chart(title: str, bins: Sequence[Mapping[str, Any]], label: str) -> str:
    """A histogram as an SVG column chart, one column per bin, its count above it and the
    range it holds below it."""
    width, height, pad = 600, 180, 28
    top = max([int(b["count"]) for b in bins] + [1])
    step = (width - 2 * pad) / len(bins)
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height + 30}' "
        f"role='img' aria-label='{html.escape(title, quote=True)}'>"
        f"<title>{html.escape(title)}</title>"
    ]
    for i, b in enumerate(bins):
        count = int(b["count"])
        tall = (height - 2 * pad) * count / top
        x, y = pad + i * step, height - pad - tall
        parts.append(
            f"<rect class='bar' x='{x + 2:.1f}' y='{y:.1f}' width='{step - 4:.1f}' "
            f"height='{tall:.1f}' fill='{_BAR}'>"
            f"<title>{html.escape(str(b['label']))}: {count}</title></rect>"
        )
        if count:
            parts.append(
                f"<text x='{x + step / 2:.1f}' y='{y - 3:.1f}' text-anchor='middle'>{count}</text>"
            )
        parts.append(
            f"<text x='{x + step / 2:.1f}' y='{height - pad + 14:.1f}' text-anchor='middle' "
            f"class='bin'>{html.escape(str(b['label']))}</text>"
        )
    parts.append(
        f"<text x='{width / 2:.1f}' y='{height + 20}' text-anchor='middle'>"
        f"{html.escape(label)}</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(title: str, rows: Sequence[tuple[str, float | None, bool]]) -> str:
    """Horizontal bars of fractions 0..1, one per row ``(label, fraction, highlighted)``."""
    row_height, label_width, bar_width = 18, 300, 320
    height = row_height * len(rows) + 10
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{label_width + bar_width + 60}' "
        f"height='{height}' role='img' aria-label='{html.escape(title, quote=True)}'>"
        f"<title>{html.escape(title)}</title>"
    ]
    for i, (label, fraction, highlighted) in enumerate(rows):
        y = 5 + i * row_height
        share = fraction or 0.0
        colour = _WARN if highlighted else _BAR
        parts.append(
            f"<text x='{label_width - 6}' y='{y + 12}' text-anchor='end'>"
            f"{html.escape(label)}</text>"
            f"<rect class='bar' x='{label_width}' y='{y + 2}' width='{bar_width * share:.1f}' "
            f"height='{row_height - 5}' fill='{colour}'></rect>"
            f"<text x='{label_width + bar_width * share + 4:.1f}' y='{y + 12}'>"
            f"{'none' if fraction is None else f'{fraction:.0%}'}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """An HTML table of ``rows`` under ``header``, every cell escaped."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(summary: Mapping[str, Any]) -> str:
    """A summary's mean and median, in words."""
    if summary["mean"] is None:
        return "none"
    mean, median = summary["mean"], summary["median"]
    return f"mean {mean:.2f}, median {median:.2f} ({summary['count']})"
