"""What ``grader batch`` writes about copies: ``similarity.csv`` and a side-by-side page.

The page groups the flagged pairs (files that flags join, however
indirectly, are one group: a class of identical files is one entry, not
every pair), opens with an index of the groups (anchors ``#group-N``, which
the class page links to), and shows for each group its strongest pair side
by side, the shared passages numbered alike on both sides and each number a
link to its partner, then every flagged pair of the group. It is one
self-contained HTML file (no script, no network), and every byte of a
student's file in it is escaped.
"""

from __future__ import annotations

import csv
import html
import io

from grader.course.fingerprints import Passage, paired_passages
from grader.course.similarity import Cluster, Pair, Similarity, clusters

SIMILARITY_PAGE = "similarity.html"
"""The side-by-side page's file name, beside the class page that links to its groups."""
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
mark a.n { font-size: .7rem; vertical-align: super; margin-right: .15rem; color: #5d4037; }
table { border-collapse: collapse; margin-top: .6rem; font-size: .85rem; }
td, th { border: 1px solid #ccc; padding: .2rem .5rem; text-align: left; }
.note { color: #555; }
"""


def group_anchor(number: int) -> str:
    """The page's anchor of the ``number``-th group (from 1), as the class page links to it."""
    return f"group-{number}"


def similarity_html(chapter_id: str, similarity: Similarity) -> str:
    """One page: an index of the groups of copies, then each group's strongest pair side by
    side with its shared passages numbered and paired, and the group's other flagged pairs."""
    groups = clusters(similarity.pairs)
    index = "".join(
        f"<li><a href='#{group_anchor(n)}'>{html.escape(_group_title(group))}</a>: "
        f"{_evidence(group.strongest)}</li>"
        for n, group in enumerate(groups, start=1)
    )
    sections = [_section(similarity, group, n) for n, group in enumerate(groups, start=1)]
    body = (
        (f"<ol class='index'>{index}</ol>" + "\n".join(sections))
        if groups
        else ("<p>No pair is flagged.</p>")
    )
    if similarity.findings:
        found = "".join(
            f"<li>{html.escape(f.owner)}: {html.escape(f.reason)}</li>" for f in similarity.findings
        )
        body = f"<h2>Files that hold what they should not</h2><ul>{found}</ul>" + body
    flagged = sum(pair.flagged for pair in similarity.pairs)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(chapter_id)}: flagged copies</title><style>{_STYLE}</style></head>"
        f"<body><h1>{html.escape(chapter_id)}: {len(groups)} group(s) of copies, "
        f"{flagged} flagged pair(s)</h1>"
        "<p class='note'>Marked: passages both files share once names, strings, comments, "
        "layout, assert messages and the order of comparisons are set aside; code every "
        "student was given never counts. The same number marks a passage and its partner on "
        "the other side (click it to go there). A flag asks a person to look; it changes no "
        "grade.</p>"
        f"{body}</body></html>\n"
    )


def _group_title(group: Cluster) -> str:
    return f"{group.kind}: {', '.join(group.members)}"


def _evidence(pair: Pair) -> str:
    behaviour = (
        "no behavioural fingerprint"
        if pair.behaviour_score is None
        else f"behaviour score {pair.behaviour_score:.2f}"
    )
    shown = html.escape(f"{pair.a} and {pair.b}")
    return f"strongest {shown}, text score {pair.text_score:.2f}, {behaviour}"


def _section(similarity: Similarity, group: Cluster, number: int) -> str:
    pair = group.strongest
    anchor = group_anchor(number)
    left, right = paired_passages(
        similarity.entries[(pair.kind, pair.a)].fingerprint,
        similarity.entries[(pair.kind, pair.b)].fingerprint,
        pair.shared,
    )
    files = _file(similarity, pair, pair.a, left, f"{anchor}-a", f"{anchor}-b")
    files += _file(similarity, pair, pair.b, right, f"{anchor}-b", f"{anchor}-a")
    rows = "".join(
        f"<tr><td>{html.escape(p.a)}</td><td>{html.escape(p.b)}</td>"
        f"<td>{p.text_score:.2f}</td>"
        f"<td>{'' if p.behaviour_score is None else f'{p.behaviour_score:.2f}'}</td></tr>"
        for p in group.pairs
    )
    return (
        f"<section id='{anchor}'><h2>{number}. {html.escape(_group_title(group))}</h2>"
        f"<p>{_evidence(pair)}; {len(left)} shared passage(s)</p>"
        f"<div class='pair'>{files}</div>"
        "<table><tr><th>a</th><th>b</th><th>text</th><th>behaviour</th></tr>"
        f"{rows}</table></section>"
    )


def _file(
    similarity: Similarity,
    pair: Pair,
    owner: str,
    passages: list[Passage],
    side: str,
    other: str,
) -> str:
    """One side of a pair: its text, each shared passage marked with its number, which links
    to the first passage of that number on the ``other`` side."""
    text = similarity.entries[(pair.kind, owner)].fingerprint.text
    parts, at = [], 0
    seen: dict[int, int] = {}
    for start, end, number in passages:
        seen[number] = seen.get(number, 0) + 1
        suffix = "" if seen[number] == 1 else f"-{seen[number]}"
        parts.append(html.escape(text[at:start]))
        parts.append(
            f"<mark id='{side}-{number}{suffix}'><a class='n' href='#{other}-{number}'>"
            f"{number}</a>{html.escape(text[start:end])}</mark>"
        )
        at = end
    parts.append(html.escape(text[at:]))
    return f"<div class='file'><h3>{html.escape(owner)}</h3><pre>{''.join(parts)}</pre></div>"
