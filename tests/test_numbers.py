import contextlib
import math
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.support.figures import (
    MAX_DIGITS,
    MAX_TEXT_LENGTH,
    Figure,
    FigureError,
    format_figure,
    parse_count_statement,
    parse_figure,
)


def fields(figure: Figure) -> tuple:
    return (figure.value, figure.low, figure.high, figure.unit, figure.qualifier, figure.context)


# text -> (value, low, high, unit, qualifier, context)
READABLE = {
    "~321 t/s": (321.0, None, None, "t/s", "approx", None),
    "≈800": (800.0, None, None, None, "approx", None),
    "2,314": (2314.0, None, None, None, None, None),
    "1,753.0": (1753.0, None, None, None, None, None),
    ">1,000": (1000.0, None, None, None, "at_least", None),
    "over 1,000": (1000.0, None, None, None, "at_least", None),
    "1,000+": (1000.0, None, None, None, "at_least", None),
    "up to 740": (740.0, None, None, None, "up_to", None),
    "35–434 t/s across models": (None, 35.0, 434.0, "t/s", "range", "across models"),
    "35-434 t/s across models": (None, 35.0, 434.0, "t/s", "range", "across models"),
    "35 to 434 t/s": (None, 35.0, 434.0, "t/s", "range", None),
    "35 t/s – 434 t/s": (None, 35.0, 434.0, "t/s", "range", None),
    "between 35 and 434": (None, 35.0, 434.0, None, "range", None),
    "72,000 per server": (72000.0, None, None, None, None, "per server"),
    ">1,000 per user": (1000.0, None, None, None, "at_least", "per user"),
    "$0.35": (0.35, None, None, "usd", None, None),
    "~$0.35 per 1M tokens": (0.35, None, None, "usd", "approx", "per 1M tokens"),
    "$0.10–$0.35": (None, 0.1, 0.35, "usd", "range", None),
    "0.35 USD": (0.35, None, None, "usd", None, None),
    "100+": (100.0, None, None, None, "at_least", None),
    "100+ models": (100.0, None, None, "models", "at_least", None),
    "11K+": (11000.0, None, None, None, "at_least", None),
    "1.5M": (1_500_000.0, None, None, None, None, None),
    "2B": (2e9, None, None, None, None, None),
    "~2,100": (2100.0, None, None, None, "approx", None),
    "1.54 s": (1.54, None, None, "s", None, None),
    "1.54s": (1.54, None, None, "s", None, None),
    "350 ms": (350.0, None, None, "ms", None, None),
    "276 tokens/sec": (276.0, None, None, "t/s", None, None),
    "3,000 tokens per second": (3000.0, None, None, "t/s", None, None),
    "2,522 TPS": (2522.0, None, None, "t/s", None, None),
    "120 tok/s": (120.0, None, None, "t/s", None, None),
    "2,000-plus tok/s": (2000.0, None, None, "t/s", "at_least", None),
    "≈800 t/s on 8B-class": (800.0, None, None, "t/s", "approx", "on 8B-class"),
    "~981 t/s on Kimi K2.6": (981.0, None, None, "t/s", "approx", "on Kimi K2.6"),
    "up to 740 t/s on gpt-oss-120b": (740.0, None, None, "t/s", "up_to", "on gpt-oss-120b"),
    "1,900+ sold directly": (1900.0, None, None, None, "at_least", "sold directly"),
    "~50 open models": (50.0, None, None, None, "approx", "open models"),
    "~321 t/s· Llama 3.3 70B": (321.0, None, None, "t/s", "approx", "Llama 3.3 70B"),
    "<1 s": (1.0, None, None, "s", "up_to", None),
    "Over 1,000 Tokens/S per user": (1000.0, None, None, "t/s", "at_least", "per user"),
    "  ~321\u00a0 t/s \n": (321.0, None, None, "t/s", "approx", None),
    "2,314\u200b t/s": (2314.0, None, None, "t/s", None, None),
    ".5 s": (0.5, None, None, "s", None, None),
    "0": (0.0, None, None, None, None, None),
}


@pytest.mark.parametrize("text", READABLE)
def test_reads_the_figures_sources_write(text):
    figure = parse_figure(text)
    assert fields(figure) == READABLE[text]
    assert figure.text == " ".join(text.replace("\u200b", "").split())


def test_a_separator_is_kept_when_dropping_it_would_change_the_reading():
    # '5 s' would read as five seconds; the context stays '· s' so that the round trip holds.
    assert parse_figure("5 · s").context == "· s"
    assert parse_figure("5 ·").context is None


# text -> a fragment of the reason
UNREADABLE = {
    "": "has no number",
    "   ": "has no number",
    "Hundreds of models": "has no number",
    "Multi-provider": "has no number",
    "Llama 3.3 70B": "does not start with a number",
    "2 and 3": "two numbers that are not a range",
    "2 3": "two numbers that are not a range",
    "2, 3": "two numbers that are not a range",
    "2/3": "two numbers that are not a range",
    "2 x 3 t/s": "two numbers that are not a range",
    "-5": "negative",
    "−5 t/s": "negative",
    "~-5": "negative",
    "$-0.35": "negative",
    "5 to -3": "negative",
    "1" * (MAX_DIGITS + 1): f"more than {MAX_DIGITS}",
    "0." + "0" * 40 + "1": f"more than {MAX_DIGITS}",
    "9" * MAX_DIGITS + "B": "once written out",
    "NaN": "NaN and infinity",
    "nan t/s": "NaN and infinity",
    "inf": "NaN and infinity",
    "Infinity": "NaN and infinity",
    "∞ t/s": "NaN and infinity",
    "1" * (MAX_TEXT_LENGTH + 1): "longer than a figure",
    "1e9": "runs into letters",
    "5x faster": "runs into letters",
    "2nd": "runs into letters",
    "1,0000": "malformed number",
    "2,3": "malformed number",
    "1.2.3": "malformed number",
    "~35–434": "a range cannot also be 'approx'",
    "35–434+": "a range cannot also be 'at least'",
    "434–35": "runs backwards",
    "1–2K": "ambiguous range",
    "35 t/s–434 ms": "mixes units",
    "between 3": "'between' needs two numbers",
    "~100+": "contradicts the qualifier",
}


@pytest.mark.parametrize("text", UNREADABLE)
def test_refuses_what_it_cannot_read_and_says_why(text):
    with pytest.raises(FigureError) as caught:
        parse_figure(text)
    message = str(caught.value)
    assert UNREADABLE[text] in message
    shown = " ".join(text.split())
    if shown:
        assert repr(shown[:40])[:-1] in message  # names the text (long ones abbreviated)


def test_refuses_what_is_not_text():
    with pytest.raises(FigureError, match="expected text, got float"):
        parse_figure(float("nan"))  # type: ignore[arg-type]
    with pytest.raises(FigureError, match="expected text, got NoneType"):
        parse_count_statement(None)  # type: ignore[arg-type]


def test_figure_error_is_a_value_error():
    assert issubclass(FigureError, ValueError)


# format_figure: canonical display
CANONICAL = {
    "~321 t/s": "~321 t/s",
    "≈800 t/s on 8B-class": "~800 t/s on 8B-class",
    "1,753.0": "1,753",  # the fewest decimals that give the value back
    "2314": "2,314",
    "1,000+": ">1,000",
    "over 1,000 tokens per second per user": ">1,000 t/s per user",
    "up to 740": "up to 740",
    "35-434 TPS across models": "35–434 t/s across models",
    "between 35 and 434": "35–434",
    "$0.3": "$0.30",  # dollars keep two decimals
    "$1": "$1.00",
    "$0.035": "$0.035",
    "~$0.35": "~$0.35",
    "$0.1 to $0.35": "$0.10–$0.35",
    "11K+": ">11,000",
    "100+ models": ">100 models",
    "1.54s": "1.54 s",
    "350 ms": "350 ms",
    "12345678.125": "12,345,678.125",
    "0.0001": "0.0001",
    "1" + "0" * 29: "100" + ",000" * 9,  # no exponent notation
}


@pytest.mark.parametrize("text", CANONICAL)
def test_format_figure_writes_the_canonical_form(text):
    assert format_figure(parse_figure(text)) == CANONICAL[text]


def test_format_figure_without_a_number_writes_its_text():
    figure = Figure(None, None, None, None, None, None, "Hundreds  of models")
    assert format_figure(figure) == "Hundreds of models"


@pytest.mark.parametrize(
    ("figure", "reason"),
    [
        (Figure(-1.0, None, None, None, None, None, ""), "negative"),
        (Figure(math.nan, None, None, None, None, None, ""), "not a finite number"),
        (Figure(math.inf, None, None, "t/s", None, None, ""), "not a finite number"),
        (Figure(None, None, None, None, "approx", None, ""), "not a finite number"),
        (Figure(None, 1.0, None, None, "range", None, ""), "high is None"),
        (Figure(1.0, None, None, "tokens", None, None, ""), "unknown unit"),
        (Figure(1.0, None, None, None, "about", None, ""), "unknown qualifier"),
    ],
)
def test_format_figure_refuses_impossible_figures(figure, reason):
    with pytest.raises(FigureError, match=reason):
        format_figure(figure)


@pytest.mark.parametrize("text", list(READABLE) + list(CANONICAL))
def test_round_trip_of_every_example(text):
    figure = parse_figure(text)
    again = parse_figure(format_figure(figure))
    assert fields(again) == fields(figure)
    assert format_figure(again) == format_figure(figure)


COUNTS = {
    "100+ models": ((100.0, None, None, "models", "at_least", None), []),
    "~50 open models": ((50.0, None, None, None, "approx", "open models"), []),
    "1,900+ sold directly (11K+ incl. community)": (
        (1900.0, None, None, None, "at_least", "sold directly"),
        [(11000.0, None, None, None, "at_least", "incl. community")],
    ),
    "75 models (Llama, Qwen and more)": (
        (75.0, None, None, "models", None, "(Llama, Qwen and more)"),
        [],
    ),
    "Hundreds of models": (None, []),
    "Multi-provider": (None, []),
    "Curated + bring-your-own-LLM": (None, []),
    "Llama 3 family": (None, []),
    "": (None, []),
    "Hundreds (300+ models)": (None, [(300.0, None, None, "models", "at_least", None)]),
}


@pytest.mark.parametrize("text", COUNTS)
def test_parse_count_statement(text):
    main, inner = parse_count_statement(text)
    expected_main, expected_inner = COUNTS[text]
    assert (fields(main) if main else None) == expected_main
    assert [fields(figure) for figure in inner] == expected_inner


def test_count_statement_texts_are_the_parts():
    main, inner = parse_count_statement("1,900+ sold directly (11K+ incl. community)")
    assert main is not None and main.text == "1,900+ sold directly"
    assert [figure.text for figure in inner] == ["11K+ incl. community"]


def test_count_statement_that_starts_with_a_number_must_read():
    with pytest.raises(FigureError, match="two numbers"):
        parse_count_statement("2 and 3 models")
    with pytest.raises(FigureError, match="negative"):
        parse_count_statement("Many (-5 models)")


ADVERSARIAL = [
    "1," * 5000,
    "1" * 10_000,
    "~" * 10_000,
    "1 " * 5000,
    "(" * 5000 + "1" + ")" * 5000,
    "(1" * 5000,
    "$" * 10_000,
    "1" + " tokens per" * 900,
    "9.9" * 3333,
    "\u200b" * 9_999 + "1",
    "1-" * 5000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_adversarial_input_is_refused_quickly(text):
    started = time.perf_counter()
    for attempt in (parse_figure, parse_count_statement):
        with contextlib.suppress(FigureError):
            attempt(text)
    assert time.perf_counter() - started < 0.5


def test_near_limit_inputs_parse_quickly():
    # At the length limit: patterns that make a backtracking regex blow up.
    texts = [
        "1" + " " * 100 + "t" * 99,
        "1" + ",000" * 49,
        "~" + "1" * 29 + "." + "x" * 100,
        "1 tokens" + " per" * 48,
        "1" + "-" * 199,
        "1" + " to" * 66,
    ]
    started = time.perf_counter()
    for text in texts:
        assert len(text) <= MAX_TEXT_LENGTH
        with contextlib.suppress(FigureError):
            parse_figure(text)
    assert time.perf_counter() - started < 0.1


# Property tests -------------------------------------------------------------------------------

PIECES = st.sampled_from(
    [
        "~", "≈", ">", "≥", "<", "up to ", "over ", "between ", "about ", "$", "US$",
        "0", "1", "9", "12", "350", ",", ".", ",000", ".5", "K", "k", "M", "B", "+", "-plus",
        "-", "–", "−", " to ", " and ", " ", "t/s", " t/s", " tok/s", " tokens per second",
        " TPS", " s", "s", " ms", " models", " usd", " per user", " across models",
        " on 8B-class", "·", ";", "(", ")", "x", "e", "nan", "/", "\u200b", "\x00", "\t", "é",
    ]
)  # fmt: skip
FIGURE_LIKE = st.lists(PIECES, max_size=10).map("".join)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def never_crashes(text: str) -> None:
    for attempt in (parse_figure, parse_count_statement):
        with contextlib.suppress(FigureError):
            attempt(text)


@SETTINGS
@given(st.text())
def test_any_text_raises_nothing_but_figure_error(text):
    never_crashes(text)


@SETTINGS
@given(FIGURE_LIKE)
def test_figure_like_text_raises_nothing_but_figure_error(text):
    never_crashes(text)


@SETTINGS
@given(FIGURE_LIKE)
def test_round_trip_of_whatever_parses(text):
    try:
        figure = parse_figure(text)
    except FigureError:
        return
    written = format_figure(figure)
    again = parse_figure(written)
    assert fields(again) == fields(figure)
    assert format_figure(again) == written


VALUES = st.one_of(
    st.just(0.0),
    st.integers(min_value=0, max_value=10**12).map(float),
    st.floats(min_value=1e-6, max_value=1e12, allow_nan=False, allow_infinity=False),
)
CONTEXTS = st.sampled_from(
    [None, "per server", "per user", "across models", "on 8B-class", "sold directly",
     "incl. community", "on Kimi K2.6", "(FP8, speculative decoding)", "open models"]
)  # fmt: skip


@st.composite
def figures(draw: st.DrawFn) -> Figure:
    unit = draw(st.sampled_from([None, "t/s", "s", "ms", "usd", "models"]))
    qualifier = draw(st.sampled_from([None, "approx", "at_least", "up_to", "range"]))
    context = draw(CONTEXTS)
    if qualifier == "range":
        low, high = sorted((draw(VALUES), draw(VALUES)))
        return Figure(None, low, high, unit, qualifier, context, "")
    return Figure(draw(VALUES), None, None, unit, qualifier, context, "")


@SETTINGS
@given(figures())
def test_generated_figures_round_trip(figure):
    written = format_figure(figure)
    again = parse_figure(written)
    assert fields(again) == fields(figure)
    assert again.text == written
