"""Per-type checks of the data an artifact is completed with (pure functions)."""

from __future__ import annotations

import csv
import io

from minarad.errors import InvalidInput


def _refuse(type_: str, reason: str) -> InvalidInput:
    return InvalidInput(f"{type_} data refused: {reason}", code="invalid_artifact_data",
                        type=type_, reason=reason)


def validate_data(type_: str, data: object) -> object:
    """Check ``data`` for an artifact of ``type_`` and return it in its stored form.

    - chart: ``{"charts": [ECharts option objects, ...]}`` (at least one).
    - spreadsheet: ``{"csvContent": CSV text, "title"?, "description"?}``; the CSV must parse.
    - report: Markdown or HTML text, or ``{"content": text, "format"?: "markdown"|"html"}``;
      stored as the mapping.

    Raises:
        InvalidInput: ``invalid_artifact_data``, with the reason.
    """
    return _VALIDATORS[type_](data)


def _chart(data: object) -> dict:
    if not isinstance(data, dict) or "charts" not in data:
        raise _refuse("chart", 'expected an object with "charts": [ECharts options]')
    charts = data["charts"]
    if not isinstance(charts, list) or not charts:
        raise _refuse("chart", '"charts" must be a non-empty list of ECharts option objects')
    for number, option in enumerate(charts, 1):
        if not isinstance(option, dict) or not option:
            raise _refuse("chart", f"chart {number} is not an ECharts option object")
    return data


def _spreadsheet(data: object) -> dict:
    if not isinstance(data, dict) or not isinstance(data.get("csvContent"), str):
        raise _refuse("spreadsheet", 'expected an object with "csvContent": CSV text')
    for key in ("title", "description"):
        if key in data and not isinstance(data[key], str):
            raise _refuse("spreadsheet", f'"{key}" must be text')
    rows = parse_csv(data["csvContent"], "spreadsheet")
    if not rows:
        raise _refuse("spreadsheet", "the CSV has no rows")
    return data


def parse_csv(text: str, type_: str = "spreadsheet", delimiter: str = ",") -> list[list[str]]:
    """Parse CSV text strictly (an unclosed quote or stray character is an error).

    Raises:
        InvalidInput: the text does not parse, with the line.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        return [row for row in reader if row]
    except csv.Error as exc:
        raise _refuse(type_, f"the CSV does not parse at line {reader.line_num}: {exc}") from None


def _report(data: object) -> dict:
    if isinstance(data, str):
        data = {"content": data}
    if not isinstance(data, dict) or not isinstance(data.get("content"), str):
        raise _refuse("report", 'expected Markdown or HTML text, or {"content": text}')
    if not data["content"].strip():
        raise _refuse("report", "the report is empty")
    fmt = data.get("format") or guess_format(data["content"])
    if fmt not in ("markdown", "html"):
        raise _refuse("report", '"format" must be "markdown" or "html"')
    return {**data, "format": fmt}


def guess_format(content: str) -> str:
    """``html`` when the text starts like an HTML document or element, else ``markdown``."""
    head = content.lstrip()[:200].lower()
    return "html" if head.startswith(("<!doctype html", "<html", "<body", "<div", "<section",
                                      "<article", "<h1", "<p>", "<table")) else "markdown"


_VALIDATORS = {"chart": _chart, "spreadsheet": _spreadsheet, "report": _report}
