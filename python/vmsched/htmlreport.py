"""Shared pieces of the Markdown and self-contained HTML reports (`reproduce`, `arena`).

An HTML report embeds its plots as data URIs (``<img class="plot" src="data:image/png;...">``),
so the one file can be mailed or opened from anywhere; a short script marks the page with how
many plots the browser decoded (``<body data-plots-loaded="k/n">``), which the report tests
read in headless Chromium.
"""

from __future__ import annotations

import base64
import html
import os
import tempfile
from pathlib import Path
from typing import Sequence


def md_table(headers: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    esc = lambda s: str(s).replace("|", "\\|")
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in body]
    return "\n".join(lines)


def html_table(headers, body, verdict_col: int | None = None) -> str:
    e = html.escape
    out = ["<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in headers) + "</tr></thead><tbody>"]
    for r in body:
        cls = ""
        if verdict_col is not None:
            v = r[verdict_col]
            cls = ' class="ok"' if v.startswith("holds") else (' class="bad"' if v.startswith("out") else "")
        out.append(f"<tr{cls}>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


HTML_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%TITLE%</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }
tr.ok td:last-child, li.ok { color: #1b5e20; } tr.bad td:last-child, li.bad { color: #b71c1c; }
img.plot { max-width: 100%; border: 1px solid #eee; }
</style></head>
<body data-plots-loaded="pending">
%BODY%
<script>
window.addEventListener("load", function () {
  var imgs = document.querySelectorAll("img.plot"), ok = 0;
  imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });
  document.body.setAttribute("data-plots-loaded", ok + "/" + imgs.length);
});
</script>
</body></html>
"""



def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig, path: Path) -> Path:
    """Write ``fig`` to ``path`` atomically (a reader never sees half a PNG) and close it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, dpi=110, format="png")
    pyplot().close(fig)
    tmp.replace(path)
    return path


def img_tag(alt: str, png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="plot" alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file of its own renamed into place, so
    that a reader never sees half a file and a failed write leaves the old one (and no
    temporary) behind; the file gets the usual permissions (the umask's), not mkstemp's 0600."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_json_files(folder: Path, texts: "dict[str, str]") -> None:
    """Write each ``name.json`` of ``texts`` into ``folder`` (created if missing), then remove
    every other ``*.json`` there: the folder holds exactly these results, none left from an
    earlier run (the new files are written before any old one goes)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        atomic_write(folder / name, text)
    for old in folder.glob("*.json"):
        if old.name not in texts:
            old.unlink()
