"""What ``grader batch`` writes about copies: ``similarity.csv`` and a side-by-side page.

The page shows each flagged pair's two files next to each other with the
passages they share marked; it is one self-contained HTML file (no script,
no network), and every byte of a student's file in it is escaped.
"""

from __future__ import annotations

import csv
import html
import io

from grader.similarity import Pair, Similarity, marked_spans

CSV_COLUMNS = ("kind", "a", "b", "text_score", "behaviour_score", "flagged")


def similarity_csv(similarity: Similarity) -> str:
    """Every listed pair, flagged ones first, then by text score, highest first."""
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for pair in sorted(similarity.pairs, key=lambda p: (not p.flagged, -p.text_score)):
        writer.writerow(
            [
                pair.kind,
                _cell(pair.a),
                _cell(pair.b),
                f"{pair.text_score:.4f}",
                "" if pair.behaviour_score is None else f"{pair.behaviour_score:.4f}",
                "yes" if pair.flagged else "no",
            ]
        )
    return stream.getvalue()


def _cell(value: str) -> str:
    """A text cell a spreadsheet will not run as a formula."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1b1b1b; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.file { border: 1px solid #ccc; border-radius: 4px; overflow: auto; max-height: 70vh; }
.file h3 { margin: 0; padding: .4rem .6rem; background: #f2f2f2; font-size: .95rem; }
pre { margin: 0; padding: .6rem; font-size: .8rem; line-height: 1.35; }
mark { background: #ffd54f; }
.note { color: #555; }
"""


def similarity_html(chapter_id: str, similarity: Similarity) -> str:
    """One page: each flagged pair's files side by side, shared passages marked."""
    flagged = [pair for pair in similarity.pairs if pair.flagged]
    sections = [_section(similarity, pair) for pair in flagged]
    body = "\n".join(sections) or "<p>No pair is flagged.</p>"
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(chapter_id)}: flagged pairs</title><style>{_STYLE}</style></head>"
        f"<body><h1>{html.escape(chapter_id)}: {len(flagged)} flagged pair(s)</h1>"
        "<p class='note'>Marked: passages both files share once names, strings, comments and "
        "layout are set aside; code every student was given never counts. A flag asks a person "
        "to look; it changes no grade.</p>"
        f"{body}</body></html>\n"
    )


def _section(similarity: Similarity, pair: Pair) -> str:
    behaviour = (
        "no behavioural fingerprint"
        if pair.behaviour_score is None
        else f"behaviour score {pair.behaviour_score:.2f}"
    )
    files = "".join(_file(similarity, pair, owner) for owner in (pair.a, pair.b))
    title = f"{pair.kind}: {pair.a} and {pair.b}"
    return (
        f"<section><h2>{html.escape(title)}</h2>"
        f"<p>text score {pair.text_score:.2f}, {behaviour}</p>"
        f"<div class='pair'>{files}</div></section>"
    )


def _file(similarity: Similarity, pair: Pair, owner: str) -> str:
    entry = similarity.entries[(pair.kind, owner)]
    text = entry.fingerprint.text
    parts, at = [], 0
    for start, end in marked_spans(entry.fingerprint, pair.shared):
        parts.append(html.escape(text[at:start]))
        parts.append(f"<mark>{html.escape(text[start:end])}</mark>")
        at = end
    parts.append(html.escape(text[at:]))
    return f"<div class='file'><h3>{html.escape(owner)}</h3><pre>{''.join(parts)}</pre></div>"
