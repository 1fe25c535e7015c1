"""CSV, TSV and XLSX as Markdown tables an agent can read without the binary.

Each sheet becomes a ``## <sheet>`` heading and a Markdown table whose first
row is the header; rows and columns past the caps are cut, and a note says
what was cut. A file that does not parse is one clear error
(``malformed_sheet``), never a partial table.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import io

from minarad.errors import InvalidInput

KINDS = ("csv", "tsv", "xlsx")


@dataclasses.dataclass
class Sheet:
    """One table: its name, the kept rows and the full size."""

    name: str
    rows: list[list[str]]
    total_rows: int
    total_cols: int

    def to_markdown(self, max_rows: int, max_cols: int) -> str:
        """The sheet as a heading, a Markdown table and a note of what was cut."""
        lines = [f"## {self.name}", ""]
        if not self.rows:
            return "\n".join(lines + ["(empty sheet)", ""])
        width = min(max(len(r) for r in self.rows), max_cols)
        header, body = self.rows[0], self.rows[1:max_rows + 1]
        lines.append(_row([c or f"column {n}" for n, c in enumerate(_pad(header, width), 1)]))
        lines.append("|" + " --- |" * width)
        lines += [_row(_pad(r, width)) for r in body]
        cut = _cut_note(self.total_rows - 1, len(body), self.total_cols, width)
        return "\n".join(lines + ([""] + [cut] if cut else []) + [""])


def _pad(row: list[str], width: int) -> list[str]:
    return (row + [""] * width)[:width]


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def _cut_note(data_rows: int, kept_rows: int, cols: int, kept_cols: int) -> str:
    parts = []
    if kept_rows < data_rows:
        parts.append(f"{kept_rows} of {data_rows} rows")
    if kept_cols < cols:
        parts.append(f"{kept_cols} of {cols} columns")
    return f"_(cut: showing {' and '.join(parts)})_" if parts else ""


def kind_of(filename: str) -> str:
    """``csv``, ``tsv`` or ``xlsx`` from a file name.

    Raises:
        InvalidInput: another extension (``unsupported_sheet``).
    """
    ext = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    if ext not in KINDS:
        raise InvalidInput(f"{filename}: not a spreadsheet; use .csv, .tsv or .xlsx",
                           code="unsupported_sheet")
    return ext


def parse_sheets(data: bytes, kind: str, *, max_rows: int, max_cols: int,
                 name: str = "sheet") -> list[Sheet]:
    """Read ``data`` (a ``csv``, ``tsv`` or ``xlsx`` file) into sheets.

    Raises:
        InvalidInput: ``malformed_sheet`` with the reason (and line for CSV/TSV).
    """
    if kind == "xlsx":
        return _xlsx(data, max_rows, max_cols)
    return [_delimited(data, "\t" if kind == "tsv" else ",", max_rows, max_cols, name)]


def sheets_to_markdown(sheets: list[Sheet], *, max_rows: int, max_cols: int) -> str:
    """All sheets as Markdown, one section each."""
    return "\n".join(s.to_markdown(max_rows, max_cols) for s in sheets)


def _malformed(name: str, reason: str) -> InvalidInput:
    return InvalidInput(f"{name}: malformed sheet: {reason}", code="malformed_sheet",
                        reason=reason)


def _delimited(data: bytes, delimiter: str, max_rows: int, max_cols: int, name: str) -> Sheet:
    import csv

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _malformed(name, f"not UTF-8 (byte {exc.start})") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    return _collect(name, reader, max_rows, max_cols, lambda: f"line {reader.line_num}")


def _collect(name: str, rows, max_rows: int, max_cols: int, where) -> Sheet:
    import csv

    kept, total, cols = [], 0, 0
    try:
        for row in rows:
            if not any(row):
                continue
            total += 1
            cols = max(cols, len(row))
            if total <= max_rows + 1:
                kept.append([_text(c) for c in row[:max_cols]])
    except csv.Error as exc:
        raise _malformed(name, f"{where()}: {exc}") from None
    return Sheet(name, kept, total, cols)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def _xlsx(data: bytes, max_rows: int, max_cols: int) -> list[Sheet]:
    import zipfile

    from openpyxl import load_workbook
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError, ValueError, OSError) as exc:
        raise _malformed("workbook", f"not a readable XLSX file ({exc})") from None
    try:
        return [_collect(ws.title, ([v for v in row] for row in ws.iter_rows(values_only=True)),
                         max_rows, max_cols, lambda: "row") for ws in book.worksheets]
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise _malformed("workbook", f"a sheet cannot be read ({exc})") from None
    finally:
        book.close()
