"""CSV, TSV and XLSX uploads as Markdown tables (real files made with openpyxl)."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from openpyxl import Workbook

from minarad.errors import InvalidInput
from minarad.files.sheets import kind_of, parse_sheets, sheets_to_markdown


def _markdown(data: bytes, kind: str, rows: int = 100, cols: int = 20) -> str:
    sheets = parse_sheets(data, kind, max_rows=rows, max_cols=cols, name=f"upload.{kind}")
    return sheets_to_markdown(sheets, max_rows=rows, max_cols=cols)


def _xlsx(*sheets) -> bytes:
    book = Workbook()
    book.remove(book.active)
    for title, rows in sheets:
        ws = book.create_sheet(title)
        for row in rows:
            ws.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_csv_becomes_a_markdown_table():
    text = _markdown('name,qty,note\nbolt,3,"a | b"\nnut,10,"two\nlines"\n'.encode(), "csv")
    assert text.splitlines() == [
        "## upload.csv", "", "| name | qty | note |", "| --- | --- | --- |",
        "| bolt | 3 | a \\| b |", "| nut | 10 | two<br>lines |"]


def test_tsv_and_a_byte_order_mark():
    text = _markdown("\ufeffa\tb\n1\t2\n".encode(), "tsv")
    assert "| a | b |" in text and "| 1 | 2 |" in text


def test_xlsx_gives_one_table_per_sheet_with_typed_cells():
    data = _xlsx(("Sales", [["month", "amount", "when"], ["Jan", 10.0, dt.date(2026, 1, 31)],
                            ["Feb", 12.5, None]]),
                 ("Notes", [["note"], ["checked"]]))
    text = _markdown(data, "xlsx")
    assert "## Sales" in text and "## Notes" in text
    assert "| Jan | 10 | 2026-01-31T00:00:00 |" in text and "| Feb | 12.5 |  |" in text
    assert text.index("## Sales") < text.index("## Notes")


def test_caps_cut_rows_and_columns_and_say_so():
    rows = [[f"c{n}" for n in range(8)]] + [[str(r * 10 + n) for n in range(8)]
                                            for r in range(50)]
    data = _xlsx(("Big", rows))
    text = _markdown(data, "xlsx", rows=5, cols=3)
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table[0] == "| c0 | c1 | c2 |" and len(table) == 2 + 5
    assert "_(cut: showing 5 of 50 rows and 3 of 8 columns)_" in text
    csv_text = _markdown("\n".join(",".join(r) for r in rows).encode(), "csv", rows=5, cols=3)
    assert "_(cut: showing 5 of 50 rows and 3 of 8 columns)_" in csv_text


def test_an_empty_header_cell_is_named():
    assert "| a | column 2 |" in _markdown(b"a,\n1,2\n", "csv")


@pytest.mark.parametrize("data, kind, reason", [
    (b'a,"b\n1,2', "csv", "line"),
    (b"a,b\n\xff\xfe,1\n", "csv", "not UTF-8"),
    (b"PK\x03\x04 not really a zip", "xlsx", "not a readable XLSX"),
    (b"just text", "xlsx", "not a readable XLSX"),
])
def test_a_malformed_sheet_is_one_clear_error(data, kind, reason):
    with pytest.raises(InvalidInput) as err:
        _markdown(data, kind)
    assert err.value.code == "malformed_sheet" and reason in err.value.message


def test_only_spreadsheet_extensions_are_parsed():
    assert kind_of("a/b/1-x.XLSX") == "xlsx"
    with pytest.raises(InvalidInput) as err:
        kind_of("x.exe")
    assert err.value.code == "unsupported_sheet"
