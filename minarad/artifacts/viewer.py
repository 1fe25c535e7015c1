"""Self-contained HTML viewers for artifacts (pure functions: data in, bytes out).

A chart viewer inlines the vendored ECharts (``vendor/echarts.min.js``,
pinned, see ``vendor/VERSION.echarts``) and the chart options, so the file
opens offline; a report is rendered from Markdown (markdown-it-py) or taken
as HTML and always cleaned by nh3 (no scripts, no event handlers, no
foreign frames); a spreadsheet is an HTML table. Every page forbids loading
anything from elsewhere (Content-Security-Policy) and marks
``<body data-state="ready">`` once drawn.
"""

from __future__ import annotations

import functools
import html
import json
from importlib import resources

from minarad.artifacts.models import Artifact
from minarad.artifacts.validation import parse_csv

ECHARTS_VERSION = "5.6.0"
#: CSS size of one chart (its PNG is twice this).
CHART_WIDTH, CHART_HEIGHT = 800, 500

_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 2em auto; max-width: 960px;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; } table { border-collapse: collapse; }
td, th { border: 1px solid #ccc; padding: .25em .5em; text-align: left; }
.chart { width: WIDTHpx; height: HEIGHTpx; margin: 1em 0; }
.meta { color: #666; font-size: .85em; }
""".replace("WIDTH", str(CHART_WIDTH)).replace("HEIGHT", str(CHART_HEIGHT))


@functools.lru_cache(maxsize=1)
def echarts_source() -> str:
    """The vendored, minified ECharts (loaded once per process)."""
    return (resources.files("minarad.artifacts") / "vendor" / "echarts.min.js").read_text(
        encoding="utf-8")


def render_viewer(artifact: Artifact) -> bytes:
    """The viewer page of a completed artifact, as UTF-8 bytes."""
    body, scripts = _BODIES[artifact.type](artifact)
    script_src = "'unsafe-inline'" if scripts else "'none'"
    given = artifact.data.get("title") if isinstance(artifact.data, dict) else None
    title = html.escape(artifact.title or given or artifact.id)
    page = (
        "<!doctype html>\n<html><head><meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        f"script-src {script_src}; style-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{title}</title>\n<style>{_STYLE}</style></head>\n"
        f"<body data-state=\"{'loading' if scripts else 'ready'}\">\n"
        f"<h1>{title}</h1>\n<p class=\"meta\">{html.escape(artifact.uri)} · "
        f"{html.escape(artifact.updated)}</p>\n{body}\n{scripts}</body></html>\n")
    return page.encode("utf-8")


def render_chart_sheet(charts: list[dict]) -> bytes:
    """One page drawing ``charts`` (ECharts options) one below the other, for images.

    The materializer draws the charts of every artifact of a message on one
    such page, so ECharts is loaded once, however many charts there are.
    """
    divs, scripts = _chart_elements(charts)
    return ("<!doctype html>\n<html><head><meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            f"script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n<style>{_STYLE}"
            "body { margin: 0; }</style></head>\n"
            f"<body data-state=\"loading\">\n{divs}\n{scripts}</body></html>\n").encode()


def _chart_body(artifact: Artifact) -> tuple[str, str]:
    return _chart_elements(artifact.data["charts"])  # type: ignore[index]  # validated


def _chart_elements(charts: list[dict]) -> tuple[str, str]:
    divs = "\n".join(f'<div class="chart" id="chart-{n}"></div>' for n in range(len(charts)))
    options = _script_json(charts)
    scripts = (f"<script>{echarts_source()}</script>\n"
               f'<script type="application/json" id="options">{options}</script>\n'
               "<script>\n"
               "var options = JSON.parse(document.getElementById('options').textContent);\n"
               "var failed = 0;\n"
               "options.forEach(function (option, n) {\n"
               "  var element = document.getElementById('chart-' + n);\n"
               "  try {\n"
               "    echarts.init(element, null, {renderer: 'canvas'})\n"
               "      .setOption(Object.assign({animation: false}, option));\n"
               "  } catch (e) {\n"
               "    failed += 1;\n"
               "    echarts.dispose(element);\n"
               "    element.textContent = 'Chart ' + (n + 1) + ' cannot be drawn: ' + e.message;\n"
               "    console.error('chart ' + (n + 1) + ': ' + e.message);\n"
               "  }\n"
               "});\n"
               "document.body.dataset.state = failed ? 'failed' : 'ready';\n"
               "</script>\n")
    return divs, scripts


def _script_json(value: object) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _spreadsheet_body(artifact: Artifact) -> tuple[str, str]:
    data = artifact.data
    assert isinstance(data, dict)
    rows = parse_csv(data["csvContent"])
    head, rest = rows[0], rows[1:]
    parts = []
    if data.get("description"):
        parts.append(f"<p>{html.escape(data['description'])}</p>")
    parts.append("<table><thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in head)
                 + "</tr></thead><tbody>")
    parts += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
              for row in rest]
    parts.append("</tbody></table>")
    return "\n".join(parts), ""


def _report_body(artifact: Artifact) -> tuple[str, str]:
    data = artifact.data
    assert isinstance(data, dict)
    return sanitise_report(data["content"], data.get("format", "markdown")), ""


def sanitise_report(content: str, fmt: str) -> str:
    """Render a report's Markdown (or take its HTML) and clean it with nh3."""
    import nh3

    if fmt == "markdown":
        from markdown_it import MarkdownIt

        content = MarkdownIt("commonmark", {"html": True}).enable("table").render(content)
    return nh3.clean(content, link_rel="noopener noreferrer nofollow",
                     attribute_filter=_only_inline_images)


def _only_inline_images(tag: str, attribute: str, value: str) -> str | None:
    """Keep an image's source only when it is inline (``data:image/...``).

    The viewer loads nothing from elsewhere; a remote or relative image would
    only be blocked by the page's security policy.
    """
    if tag == "img" and attribute in ("src", "srcset") and not value.startswith("data:image/"):
        return None
    return value


_BODIES = {"chart": _chart_body, "spreadsheet": _spreadsheet_body, "report": _report_body}
