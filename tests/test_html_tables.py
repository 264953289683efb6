"""Tables as text (pipeline/extract/html.py): what every table parser reads."""

from __future__ import annotations

from pipeline.extract.html import find_text_table, parse_html, text_tables


def _table(headers: list[str], rows: list[list[str]], *, thead: bool = True) -> str:
    head = "<tr>" + "".join(f"<th>{h}</th>" for h in headers) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    if thead:
        return f"<table><thead>{head}</thead><tbody>{body}</tbody></table>"
    return f"<table>{head}{body}</table>"


def test_cells_keep_their_places_whatever_their_spacing() -> None:
    page = _table(["A", "B", "C"], [["1", " two\n words\t", ""], ["", "", "3"]])
    (table,) = text_tables(parse_html(f"<html><body>{page}</body></html>"))
    assert table.headers == ("A", "B", "C")
    assert table.rows == [["1", "two words", ""], ["", "", "3"]]


def test_a_table_without_thead_and_a_row_without_cells() -> None:
    page = _table(["A", "B"], [["1", "2"], []], thead=False)
    (table,) = text_tables(parse_html(f"<html><body>{page}</body></html>"))
    assert table.headers == ("A", "B")
    assert table.rows == [["1", "2"], [""]]  # an empty row is one empty cell: its width is wrong


def test_a_wide_table_is_searched_the_same_way_as_a_narrow_one() -> None:
    headers = [f"Column {n}" for n in range(100)] + ["Output Speed", "API Provider"]
    page = _table(headers, [[str(n) for n in range(102)]])
    document = parse_html(f"<html><body>{page}</body></html>")
    for _ in range(2):  # the second answer is the remembered one for narrow tables: the same
        table = find_text_table(document, ("provider",), ("output speed",))
        assert table is not None
        assert (table.column("provider"), table.column("output speed")) == (101, 100)
        assert table.column("no such header") is None
    narrow = parse_html(
        "<html><body>" + _table(["API Provider", "Speed"], [["x", "1"]]) + "</body>"
    )
    for _ in range(2):
        assert find_text_table(narrow, ("provider",), ("output speed",)) is None
        assert find_text_table(narrow, ("speed",)).column("speed") == 1  # type: ignore[union-attr]


def test_control_characters_lxml_refuses_are_dropped_and_the_rest_kept() -> None:
    page = _table(["Name"], [["\x01Gr\x1f\u00f8q\x0b"], ["a\x7fb"]])
    (table,) = text_tables(parse_html(f"<html><body>{page}</body></html>"))
    assert table.rows[0] == ["Gr\u00f8q"]
    assert table.rows[1] == ["a\x7fb"]  # DEL is not C0: lxml takes it, clean_text decides
