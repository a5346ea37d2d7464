"""The viewer page, assembled for the local server or as one self-contained HTML file.

The page is `static/index.html` with the styles, the scripts (cytoscape, cytoscape-dagre and
the viewer, vendored under `static/`) and a small config filled in at its markers. Served, they
are links and the page fetches the trace from the server. Exported, everything is inline: the
CSS and JS, the trace text in a `<script type="text/plain">` and every frame as a data URL, so
the file replays the run from a file:// URL with no server (CI artefacts, sharing).

    html = served_page(live=False)
    size = export_html(run_dir, Path("run.html"))
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from tether.errors import TetherError
from tether.replay.trace import trace_path

STATIC = Path(__file__).parent / "static"
STYLES = ("viewer.css",)
SCRIPTS = ("vendor/cytoscape.min.js", "vendor/cytoscape-dagre.min.js", "viewer.js")
MIME = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png"}


def _script_text(text: str) -> str:
    """Text safe inside a <script> element: nothing in it can close the element."""
    return text.replace("</", "<\\/")


def _fill(styles: str, data: str, scripts: str, live: bool) -> str:
    config = json.dumps({"live": live})
    data += f'\n<script id="viewer-config" type="application/json">{config}</script>'
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    return (html.replace("<!--styles-->", styles).replace("<!--data-->", data)
            .replace("<!--scripts-->", scripts))


def served_page(*, live: bool) -> str:
    """The page as the server sends it: styles and scripts linked under static/."""
    styles = "".join(f'<link rel="stylesheet" href="static/{s}">' for s in STYLES)
    scripts = "".join(f'<script src="static/{s}"></script>' for s in SCRIPTS)
    return _fill(styles, "", scripts, live)


def export_html(run_dir: Path | str, out: Path | str) -> int:
    """Write one self-contained HTML file replaying the run; return its size in bytes."""
    run_dir, out = Path(run_dir), Path(out)
    path = trace_path(run_dir)
    if not path.is_file():
        raise TetherError(f"no trace at {path} (was the run made with --no-record?)")
    trace = path.read_text(encoding="utf-8")
    frames = {}
    base = path.parent.resolve()
    for f in sorted((base / "frames").glob("*")) if (base / "frames").is_dir() else []:
        if f.suffix.lower() in MIME:
            data = base64.b64encode(f.read_bytes()).decode("ascii")
            frames[f"frames/{f.name}"] = f"data:{MIME[f.suffix.lower()]};base64,{data}"
    styles = "".join(f"<style>{(STATIC / s).read_text(encoding='utf-8')}</style>" for s in STYLES)
    scripts = "".join(f"<script>{_script_text((STATIC / s).read_text(encoding='utf-8'))}</script>"
                      for s in SCRIPTS)
    data = (f'<script id="trace-data" type="text/plain">{_script_text(trace)}</script>\n'
            f'<script id="frames-data" type="application/json">'
            f"{_script_text(json.dumps(frames))}</script>")
    html = _fill(styles, data, scripts, live=False)
    out.write_text(html, encoding="utf-8")
    return len(html.encode("utf-8"))
