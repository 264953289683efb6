import codecs
import re
import time
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.support.text import (
    REMEMBERED_LENGTH,
    TextDecodeError,
    _remembered_clean_text,
    clean_repeated_text,
    clean_text,
    decode_text,
    page_text,
    safe_url,
    strip_invisible,
)

MB = 1_000_000


def timed(function, *args):
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


# clean_text -----------------------------------------------------------------------------------

CLEANED = {
    "<script>alert(1)</script>Llama 3.3 70B": "Llama 3.3 70B",
    "<SCRIPT type='text/javascript'>var a = '</b>';</SCRIPT>Groq": "Groq",
    "<img src=x onerror=alert(1)>Groq": "Groq",
    '<a href="javascript:alert(1)" onclick="x()">Together AI</a>': "Together AI",
    '<a title="a>b">Cerebras</a>': "Cerebras",
    "Cere\u0000bras\u200b": "Cerebras",
    "Together&nbsp;AI": "Together AI",
    "a < b": "a < b",
    "5 <= 6 & 7 > 3": "5 <= 6 & 7 > 3",
    "AT&amp;T": "AT&T",
    "&lt;script&gt;alert(1)&lt;/script&gt;Groq": "Groq",  # markup spelled with entities
    "&#60;img src=x onerror=alert(1)&#62;Fireworks": "Fireworks",
    "&amp;lt;b&amp;gt;": "&lt;b&gt;",  # decoded once, not twice
    "<style>p { color: red }</style>Nebius": "Nebius",
    "<template><p>hidden</p></template>Baseten": "Baseten",
    "a<!-- comment <b>x</b> -->b": "ab",
    "a<!-->b": "ab",
    "keep<!-- never closed": "keep",
    "keep<script>never closed": "keep",
    "keep<img src=x onerror=alert(1)": "keep",
    "<<b>script>alert(1)": "script>alert(1)",  # removing <b> must not make a <script> tag
    "<\u200bscript>alert(1)</script>x": "x",  # nor may an invisible character hide one
    "&lt;&#8203;script&gt;alert(1)": "script>alert(1)",
    "  Llama\t3.3\n\n70B  ": "Llama 3.3 70B",
    "Mis\u00adtral": "Mistral",  # soft hyphen
    "\ufeffQwen": "Qwen",  # BOM
    "evil\u202egnp.exe": "evilgnp.exe",  # bidi override
    "private\ue000use": "privateuse",
    "bad\ud800surrogate": "badsurrogate",
    "e\u0301": "é",  # NFC
    "\x1b[31mred\x1b[0m": "[31mred[0m",
    "<div>a</div><div>b</div>": "ab",
    "": "",
}


@pytest.mark.parametrize("raw", CLEANED)
def test_clean_text(raw):
    assert clean_text(raw) == CLEANED[raw]


def test_clean_text_truncates_on_a_character_boundary():
    assert clean_text("abcdefghij", 5) == "abcd…"
    assert clean_text("abcde", 5) == "abcde"
    assert clean_text("abc   defgh", 5) == "abc…"  # no space before the ellipsis
    # A combining mark is never cut from its base: 'q' with two marks has no precomposed form
    # (NFC only reorders the marks), so the cut falls before the second 'q', not after it.
    assert clean_text("q\u0302\u0323" * 10, 5) == "q\u0323\u0302…"
    assert len(clean_text("x" * 1000)) == 500


def test_clean_text_max_length_must_be_positive():
    with pytest.raises(ValueError, match="max_length"):
        clean_text("x", 0)


def test_clean_text_of_ten_megabytes_on_one_line():
    row = "<td class='x'>Groq</td><td>321 t/s</td><!-- c --><script>evil()</script>&amp; "
    text = row * (10 * MB // len(row))
    cleaned, elapsed = timed(clean_text, text)
    assert cleaned.startswith("Groq321 t/s & Groq321 t/s & Groq") and cleaned.endswith("…")
    assert len(cleaned) == 500
    assert elapsed < 2.0


# Floods of what makes a backtracking or per-match implementation slow. Two megabytes each is
# enough to show linear time (quadratic work on two million characters would take hours); they
# are built in the test, not at collection, so that one at a time is in memory.
HOSTILE = {
    "open-tag": lambda: "<a " + "x" * 2 * MB,  # one tag, never closed
    "comments": lambda: "<!--" * (2 * MB // 4),  # comments, never closed
    "scripts": lambda: "<script" * (2 * MB // 7),
    "tags": lambda: "<a<b" * (2 * MB // 4),
    "lone-lt": lambda: "< a" * (2 * MB // 3),
    "quotes": lambda: '<a "' * (2 * MB // 4),  # unclosed quoted attributes
    "entities": lambda: "&#8203;" * (2 * MB // 7),  # all decode to nothing: no early stop
    "zero-width": lambda: "日本\u200b" * (2 * MB // 3),
    "private-use": lambda: "".join(chr(0xE000 + i) + "a" for i in range(6400)) * (MB // 6400),
    "blank": lambda: " \t\n" * (2 * MB // 3),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_clean_text_hostile_floods_in_linear_time(name):
    text = HOSTILE[name]()
    cleaned, elapsed = timed(clean_text, text)
    assert len(cleaned) <= 500
    assert not re.search("<[A-Za-z!?/]|[\x00\u200b\ue000-\uf8ff]", cleaned)
    # 0.1-0.4 s when quiet; quadratic work on 2 MB would take hours, so a loaded CI machine's
    # seconds are no false alarm
    assert elapsed < 5.0


def test_clean_text_of_ten_megabytes_with_nul_bytes():
    cleaned, elapsed = timed(clean_text, "Cere\x00bras " * (10 * MB // 13))
    assert cleaned.startswith("Cerebras Cerebras") and "\x00" not in cleaned
    assert elapsed < 2.0


def test_clean_text_of_ten_thousand_nested_tags():
    text = "<div><span>" * 10_000 + "Llama 3.3 70B" + "</span></div>" * 10_000
    cleaned, elapsed = timed(clean_text, text)
    assert cleaned == "Llama 3.3 70B"
    assert elapsed < 1.0


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["<", ">", "&", "<b>", "<script>", "</script>", "&lt;", "&#0;", "!--"]),
            st.characters(),
        )
    ).map("".join),
    st.integers(min_value=1, max_value=60),
)
def test_clean_text_output_is_always_clean(text, max_length):
    cleaned = clean_text(text, max_length)
    assert len(cleaned) <= max_length
    assert cleaned == cleaned.strip() and "  " not in cleaned
    assert not any(c.isspace() and c != " " for c in cleaned)
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Co", "Cs") for c in cleaned)
    assert unicodedata.is_normalized("NFC", cleaned.removesuffix("…"))
    assert not re.search(r"<[A-Za-z!?/]", cleaned)


@pytest.mark.parametrize("raw", CLEANED)
def test_a_remembered_text_is_cleaned_as_clean_text_cleans_it_at_every_length(raw):
    for max_length in (3, 500):
        assert clean_repeated_text(raw, max_length) == clean_text(raw, max_length)
        assert clean_repeated_text(raw, max_length) == clean_text(raw, max_length)  # remembered


def test_a_long_text_is_cleaned_but_not_remembered():
    _remembered_clean_text.cache_clear()
    long = "<b>Groq</b> " * (REMEMBERED_LENGTH // 10)
    assert clean_repeated_text(long) == clean_text(long)
    assert _remembered_clean_text.cache_info().currsize == 0
    assert clean_repeated_text(long[:REMEMBERED_LENGTH]) == clean_text(long[:REMEMBERED_LENGTH])
    assert _remembered_clean_text.cache_info().currsize == 1  # a text of the limit is kept


def test_strip_invisible_keeps_whitespace_for_the_caller():
    assert strip_invisible("a\tb\nc\x00d\u200be") == "a\tb\ncde"
    many = "".join(chr(0xE000 + i) for i in range(100)) + "x"  # more than the replace fast path
    assert strip_invisible(many) == "x"


# safe_url -------------------------------------------------------------------------------------

SAFE = {
    "https://artificialanalysis.ai/models/llama-3-3-instruct-70b/providers": None,
    "http://example.org": None,
    "  https://example.org/a?b=1#c  ": "https://example.org/a?b=1#c",
    "HTTPS://Example.org/": None,
    "https://example.org:8443/x": None,
    "http://[::1]:8080/": None,
    "https://bücher.example/": None,
}


@pytest.mark.parametrize("url", SAFE)
def test_safe_url_accepts_absolute_http_urls(url):
    assert safe_url(url) == (SAFE[url] or url)


@pytest.mark.parametrize(
    "url",
    [
        None,
        "",
        "   ",
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "//evil.example",
        "ftp://example.org/file",
        "file:///etc/passwd",
        "http://",
        "https://",
        "http:///path",
        "http://:80/",
        "https:example.org",
        "/relative/path",
        "relative/path",
        "example.org",
        "http://exa mple.org/",
        "https://example.org/\x00",
        "https://example.org/\u200b",
        "https://example.org/\u202e",
        'https://example.org/"onmouseover="alert(1)',
        "https://example.org/<script>",
        "https://good.example\\@evil.example/",
        "http://[::1/",
        "http://example.org:99999/",
        "https://user@example.org:8443/x",
        "https://user:secret@example.org/",
        "https://example.org/" + "a" * 3000,
        42,
    ],
)
def test_safe_url_refuses_everything_else(url):
    assert safe_url(url) is None


# decode_text ----------------------------------------------------------------------------------


def test_decode_text_defaults_to_utf8():
    assert (
        decode_text("Llama 3.3 70B – ≈800 t/s".encode(), None, "s1") == "Llama 3.3 70B – ≈800 t/s"
    )
    assert decode_text(b"plain", "text/html", "s1") == "plain"


def test_decode_text_uses_the_declared_charset():
    data = "Café".encode("latin-1")
    assert decode_text(data, "text/html; charset=ISO-8859-1", "s1") == "Café"
    assert decode_text(data, 'text/html; charset="windows-1252"', "s1") == "Café"


def test_decode_text_strips_a_bom_which_decides_the_encoding():
    assert decode_text(codecs.BOM_UTF8 + b"Groq", None, "s1") == "Groq"
    assert decode_text(codecs.BOM_UTF8 + b"Groq", "text/html; charset=latin-1", "s1") == "Groq"
    assert decode_text(codecs.BOM_UTF16_LE + "Groq".encode("utf-16-le"), None, "s1") == "Groq"
    assert decode_text(codecs.BOM_UTF16_BE + "Groq".encode("utf-16-be"), None, "s1") == "Groq"


def test_decode_text_keeps_nul_bytes_for_clean_text_to_remove():
    text = decode_text(b"Cere\x00bras", "text/plain", "s1")
    assert text == "Cere\x00bras" and clean_text(text) == "Cerebras"


def test_decode_text_invalid_utf8_names_the_snapshot_and_the_offset():
    with pytest.raises(TextDecodeError) as caught:
        decode_text(b"Groq \xff\xfe 321", "text/html; charset=utf-8", "groq-20260601-ab12")
    error = caught.value
    assert isinstance(error, ValueError)
    assert "groq-20260601-ab12" in str(error) and "byte offset 5" in str(error)
    assert (error.where, error.offset, error.encoding) == ("groq-20260601-ab12", 5, "utf-8")


def test_decode_text_offset_counts_the_bom():
    with pytest.raises(TextDecodeError, match="byte offset 4"):
        decode_text(codecs.BOM_UTF8 + b"a\xc3", None, "s1")


@pytest.mark.parametrize(
    ("content_type", "reason"),
    [
        ("text/html; charset=klingon", "unknown charset"),
        ("text/plain; charset=base64", "not a text"),
    ],
)
def test_decode_text_refuses_unusable_charsets(content_type, reason):
    with pytest.raises(TextDecodeError, match=reason) as caught:
        decode_text(b"abc", content_type, "snap-9")
    assert "snap-9" in str(caught.value)


# page_text ------------------------------------------------------------------------------------

PAGE = """<!DOCTYPE html>
<html><head><title>Inference</title><style>td { color: red }</style>
<script>var quote = "Groq serves 9,999 t/s";</script></head>
<body><noscript>Enable JavaScript</noscript><template><p>not shown</p></template>
<!-- a comment with 1,000 t/s -->
<h1>Cere<b>bras</b>  hits&nbsp;~2,314&#160;t/s</h1>
<table><tr><td>gpt-oss-120B</td><td>Cerebras</td><td>3,000</td></tr></table>
<p>Line one<br>line two</p><p>R&amp;D</p>
</body></html>"""


def test_page_text_is_the_visible_text():
    text = page_text(PAGE)
    assert "Cerebras hits ~2,314 t/s" in text  # inline tags join, entities decode, spaces collapse
    assert "gpt-oss-120B Cerebras 3,000" in text  # cells do not run together
    assert "Line one line two" in text and "R&D" in text
    for hidden in ("color", "9,999", "Enable JavaScript", "not shown", "1,000", "<"):
        assert hidden not in text
    assert text == " ".join(text.split())


def test_page_text_of_empty_and_odd_documents():
    assert page_text("") == ""
    assert page_text("  \n ") == ""
    assert page_text("just text") == "just text"
    assert page_text("<p>Cere\x00bras\u200b</p>") == "Cerebras"  # lxml refuses NUL itself
    assert page_text('<?xml version="1.0" encoding="latin-1"?><p>Café</p>') == "Café"
    assert page_text('<meta charset="windows-1252"><p>≈800 t/s</p>') == "≈800 t/s"


def test_page_text_of_ten_thousand_nested_elements():
    deep = "<p>before</p>" + "<div>" * 10_000 + "deep &amp; text" + "</div>" * 10_000
    text, elapsed = timed(page_text, deep + "<script>x()</script><p>after</p>")
    assert text == "before deep & text after"
    assert elapsed < 1.0


def test_page_text_too_deep_for_lxml_reads_the_same():
    # Past libxml2's nesting limit page_text falls back to regexes: the same text comes out.
    deep = "<div>" * 5000 + PAGE + "</div>" * 5000
    assert page_text(deep) == page_text(PAGE)


def test_page_text_of_a_huge_document():
    row = "<tr><td>Groq</td><td>Llama 3.3 70B</td><td>321</td></tr>\n"
    document = "<table>" + row * (5 * MB // len(row)) + "</table><p>The end</p>"
    text, elapsed = timed(page_text, document)
    assert text.startswith("Groq Llama 3.3 70B 321 Groq") and text.endswith("321 The end")
    assert elapsed < 3.0


def test_a_long_run_of_angle_brackets_is_linear():
    import time

    started = time.perf_counter()
    cleaned = clean_text("<" * 40_000 + "script", max_length=10**6)
    assert time.perf_counter() - started < 2.0
    assert "<s" not in cleaned and "script" not in cleaned
