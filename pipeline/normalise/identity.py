"""Model and provider identity across sources: which spellings name one model (docs/identity.md).

Every source spells a model its own way: Artificial Analysis "Llama 3.3 Instruct 70B", OpenRouter
`meta-llama/llama-3.3-70b-instruct`, Bedrock `us.meta.llama3-3-70b-instruct-v1:0`, Cloudflare
`@cf/meta/llama-3.3-70b-instruct-fp8-fast`. The rules here read a spelling into

- its **variant** (precision, service tier, reasoning effort: `variants.py`) and **region** (a
  Bedrock inference profile, `us.` `eu.` `global.` ...: where one offer is served, not a model);
- its **spelling**: the id it would have on its own, in its own word order, with the vendor,
  platform and region prefixes, the platform's version suffixes (`-v1:0`, `@default`, `-maas`)
  and listing tags (`:free`, `:exacto`) removed, versions written with dots (`3-5` and Fireworks'
  `3p5` are 3.5) and dates as ISO dates;
- its **key**: what identifies the model whatever the order of its words ("Instruct 70B" and
  "70B-Instruct"; a name's one version number wherever it stands: "Claude 4.5 Sonnet" and
  `claude-sonnet-4-5`) and whatever the punctuation, glue or case (`Qwen3`, `qwen-3`). Spellings
  with one key name one model. Sizes, versions, dates and every other word stay in the key, so
  models that differ in one of them never share a key: closeness merges nothing;
- its **family**: the spelling without its date. A dated snapshot (`gpt-4o-2024-11-20`) is a model
  of its own, grouped under its family (`gpt-4o`).

The stable keys sources publish are read as hints (`Hints`): a Hugging Face repository id names
the weights an OpenRouter model serves (its key is taken when it only adds to the model's own:
`qwen/qwen3-coder` serves `Qwen/Qwen3-Coder-480B-A35B-Instruct`); an Artificial Analysis slug
makes a month in a name as precise as the source's own id says ("GPT-4o (Aug '24)", slug
`gpt-4o-2024-08-06`). A release date is not a snapshot date (Claude 3.5 Sonnet of June 2024 was
released on the 21st, its id says the 20th), so a month no id pins stays a month.

Providers: a key of letters and digits only, without a trailing "AI", "Labs", "Inc" or "Cloud"
(`Z.AI`, `z-ai` and `zai`; `Together.ai`, `Together AI` and `together`).

Pure functions, no I/O: entities.py applies them after the reviewed aliases, labels.py over a
build's labels, cli/resolve.py for a reviewer.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from datetime import date

from pipeline.normalise.variants import (
    DEFAULT_PRECISION,
    DEFAULT_SERVICE_TIER,
    SIZE,
    alias_key,
    clean_label,
    merged_effort,
    parse_variant,
)
from pipeline.schema.vocabulary import ID_PATTERN, REASONING_EFFORTS

# Entity ids are lower-case slugs; dots are allowed because model versions use them (kimi-k2.5).
ID_SLUG = re.compile(f"^{ID_PATTERN}$")


@dataclass(frozen=True)
class Hints:
    """Stable keys a source publishes beside a model's id or name (all optional)."""

    hugging_face_id: str | None = None  # OpenRouter: the weights' repository ('Qwen/Qwen3-8B')
    slug: str | None = None  # Artificial Analysis's slug ('gpt-4o-2024-08-06')

    @classmethod
    def of(cls, values: Mapping[str, object] | None) -> Hints:
        """Hints from a mapping (a frame's row, parsed JSON): unknown keys and values that are
        not non-empty text are left out."""
        if not values:
            return NO_HINTS
        kept = {
            name: clean_label(value)
            for name in HINT_FIELDS
            if isinstance(value := values.get(name), str) and clean_label(value)
        }
        return cls(**kept) if kept else NO_HINTS

    def merged(self, other: Hints) -> Hints:
        """These hints, with the fields they lack taken from `other` (one label staged by two
        sources: OpenRouter's catalogue and its endpoints both name `qwen/qwen3-coder`)."""
        if other is NO_HINTS or other == self:
            return self
        if self is NO_HINTS:
            return other
        values = {name: getattr(self, name) or getattr(other, name) for name in HINT_FIELDS}
        return Hints(**values)


HINT_FIELDS: tuple[str, ...] = tuple(field.name for field in fields(Hints))
NO_HINTS = Hints()


@dataclass(frozen=True)
class ModelIdentity:
    """What the rules read from one spelling of a model (with its source's hints)."""

    spelling: str | None  # the id it would have on its own; None when no name is left
    key: str  # spellings with one key name one model ('' when no name is left)
    family: str | None  # the spelling without its date
    date: str | None  # the snapshot date as written, ISO where it can be ('2024-11-20', '0528')
    region: str | None  # a Bedrock inference profile ('us', 'eu', 'global')
    precision: str
    service_tier: str
    reasoning_effort: str | None
    steps: tuple[str, ...]  # the rules that changed the spelling, in order, for a reviewer

    @property
    def family_key(self) -> str:
        return family_key(self.key)


# Bedrock's cross-region inference profiles: the region an offer is served from.
REGION_PROFILES = frozenset({"us", "us-gov", "eu", "apac", "jp", "au", "ca", "global"})
# Vendors and platforms that prefix model ids with a hyphen or a space but never name a model
# themselves ("Meta-Llama-3.1-70B-Instruct", "openai-gpt-5.1", "NVIDIA Nemotron Nano"). Vendors
# whose name is also their models' name (deepseek, mistral, qwen, minimax) are not here.
VENDOR_PREFIXES = frozenset(
    {
        "meta",
        "openai",
        "anthropic",
        "google",
        "microsoft",
        "amazon",
        "aws",
        "nvidia",
        "ibm",
        "cohere",
        "c4ai",
        "ai21",
        "xai",
        "mistralai",
        "databricks",
        "snowflake",
        "azure",
        "xiaomi",
        "baidu",
        "tencent",
        "alibaba",
        "bytedance",
        "moonshot",
        "moonshotai",
        "zhipu",
        "zhipuai",
        "stepfun",
        "zai",
    }
)
# Words that say nothing about which model it is: a weights format (Llama-2-7b-chat-hf,
# ERNIE-4.5-21B-A3B-PT), a platform's serving suffix (Vertex's `-maas`), a default alias
# (`@default`).
_DROPPED_WORDS = frozenset({"hf", "pt", "paddle", "maas", "default"})
# Spellings of one word ("gemma-3-27b-it" is "Gemma 3 27B Instruct"; Google's `-exp` is
# "Experimental").
_SYNONYMS = {"it": "instruct", "inst": "instruct", "exp": "experimental"}
_MONTHS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_MONTH_YEAR = re.compile(
    r"\b(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*"
    r"(?:'\s*(?P<yy>\d{2})|\s(?P<yyyy>(?:19|20)\d{2}))\b"
)
_BEDROCK_VERSION = re.compile(r"-v\d+:\d+$")
_REGIONS = "|".join(sorted(REGION_PROFILES, key=len, reverse=True))  # us-gov before us
_DOTTED_VENDOR = re.compile(
    rf"^(?:(?P<region>{_REGIONS})\.)?(?P<vendor>[a-z]+)\.(?P<rest>[a-z].*)$"
)
_STARTS_WITH_VERSION = re.compile(r"^[a-z]?\d")
# words of a name: separators, and dots that are not a decimal point
_SPLIT = re.compile(r"[\s\-_/:,()\[\]+'\"|!?*&]+|\.(?!\d)|(?<!\d)\.")
_FIREWORKS_POINT = re.compile(r"^(?P<head>[a-z]*\d+)p(?P<tail>\d+)$")  # kimi-k2p5: k2.5
_NUMBER = re.compile(r"^\d+(?:\.\d+)*[a-z]?$")
_GLUED = re.compile(r"^(?P<word>[a-z]{2,})(?P<number>\d+(?:\.\d+)*[a-z]?)$")  # qwen3, llama3.1
_LETTER_NUMBER = re.compile(r"^[a-z]\d+(?:\.\d+)*[a-z]?$")  # k2, r1, o3, m2.7: one word
_EXPLICIT_VERSION = re.compile(r"^v\d+(?:\.\d+)*$")
_PADDED_VERSION = re.compile(r"^00[1-9]$")
_CONTEXT = re.compile(r"^\d+k$")  # phi-3-mini-128k: a context window, part of the name
_BARE = re.compile(r"^(?:0|[1-9]\d?)$")  # a number that can continue a version: 3-5 is 3.5
_ENDS_IN_DIGITS = re.compile(r"^(?:[a-z]*\d+|v\d+)$")
_YEAR = re.compile(r"^(?:19|20)\d{2}$")
_MONTH = re.compile(r"\d{4}-\d{2}")
_TWO_DIGITS = re.compile(r"^\d{2}$")
_DATE_NUMBER = re.compile(r"^\d{4}$|^\d{6}$")  # 0528, 2507 (MMDD or YYMM), 250615 (YYMMDD)

# classes of the words a name is read into
WORD, VERSION, SIZE_CLASS, EXPLICIT, DATE = "word", "version", "size", "explicit", "date"


@dataclass(frozen=True)
class _Token:
    kind: str
    value: str  # canonical: what the key holds
    written: str  # as the spelling renders it (glued versions stay glued: 'qwen3')


def _valid_date(year: int, month: int, day: int | None = None) -> bool:
    try:
        date(year, month, day or 1)
    except ValueError:
        return False
    return 1990 <= year <= 2100


def _eight_digit_date(text: str) -> str | None:
    if len(text) == 8 and text.isdigit():
        year, month, day = int(text[:4]), int(text[4:6]), int(text[6:])
        if _valid_date(year, month, day):
            return f"{text[:4]}-{text[4:6]}-{text[6:]}"
    return None


def _month_years(text: str) -> tuple[str, list[str]]:
    """Month-year expressions ("Nov '24", "March 2025") taken out of a lower-cased name, as
    YYYY-MM dates."""
    found: list[str] = []

    def take(match: re.Match[str]) -> str:
        year = int(match["yyyy"]) if match["yyyy"] else 2000 + int(match["yy"])
        found.append(f"{year:04d}-{_MONTHS[match['month']]:02d}")
        return " "

    return _MONTH_YEAR.sub(take, text), found


def _join_versions(words: list[str | _Token]) -> list[str | _Token]:
    """`3`, `5` -> `3.5`; `llama3`, `1` -> `llama3.1`; `k2`, `5` -> `k2.5`: a version written with
    a dash (ids cannot hold a dot). Only small numbers without a leading zero continue one, and
    dates are read first, so dates (`05-06`, `0613`) and sizes (`8b`) never do."""
    joined: list[str | _Token] = []
    for word in words:
        previous = joined[-1] if joined else None
        if (
            isinstance(word, str)
            and isinstance(previous, str)
            and _BARE.match(word)
            and _ENDS_IN_DIGITS.match(previous)
            and not re.search(r"\d{3,}$", previous)
            and not re.search(r"(?:^|\D)0\d$", previous)
        ):
            joined[-1] = f"{previous}.{word}"
        else:
            joined.append(word)
    return joined


def _version(text: str) -> str:
    """A version as the key holds it: `2.0` is `2` (a .0 adds nothing)."""
    while text.endswith(".0") and text.count(".") >= 1 and not text.startswith("0."):
        text = text[:-2]
    return text


def _read_dates(words: list[str]) -> list[str | _Token]:
    """The date words of a name as date tokens, the others as they are: YYYY-MM-DD, YYYYMMDD,
    MM-YYYY, YYYY-MM, two two-digit numbers with a leading zero or a first above 9 (MM-DD: `05-06`,
    `12-17`), four digits (MMDD or YYMM: `0528`, `2507`), six (YYMMDD), a year."""
    read: list[str | _Token] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word.isalpha():  # most words: no digit, no date
            read.append(word)
            index += 1
            continue
        rest = words[index + 1 : index + 3]
        value: str | None = None
        used = 1
        if word.startswith("date:"):
            value = word.removeprefix("date:")
        elif (
            _YEAR.match(word)
            and len(rest) >= 2
            and _TWO_DIGITS.match(rest[0])
            and _TWO_DIGITS.match(rest[1])
            and _valid_date(int(word), int(rest[0]), int(rest[1]))
        ):
            value, used = f"{word}-{rest[0]}-{rest[1]}", 3
        elif (
            _TWO_DIGITS.match(word)
            and rest
            and _YEAR.match(rest[0])
            and _valid_date(int(rest[0]), int(word))
        ):
            value, used = f"{rest[0]}-{word}", 2
        elif (
            _YEAR.match(word)
            and rest
            and _TWO_DIGITS.match(rest[0])
            and _valid_date(int(word), int(rest[0]))
        ):
            value, used = f"{word}-{rest[0]}", 2  # YYYY-MM, as a month-dated id writes it
        elif (
            _TWO_DIGITS.match(word)
            and rest
            and _TWO_DIGITS.match(rest[0])
            and (word.startswith("0") or rest[0].startswith("0") or int(word) >= 10)
            and 1 <= int(word) <= 12
            and 1 <= int(rest[0]) <= 31
        ):
            value, used = f"{word}-{rest[0]}", 2
        elif eight := _eight_digit_date(word):
            value = eight
        elif _YEAR.match(word):
            value = word
        elif _DATE_NUMBER.match(word):
            value = _short_date(word)
            read.append(_Token(DATE, value, word))
            index += 1
            continue
        elif len(word) == 2 and word.isdigit() and word.startswith("0"):
            value = word  # a lone month or day ('08')
        read.append(_Token(DATE, value, value) if value is not None else word)
        index += used
    return read


def _short_date(word: str) -> str:
    """Four or six digits as a date: YYMM where the first two cannot be a month (`2507`:
    2025-07), YYMMDD from 2020 on (`250615`: 2025-06-15; `000123` is a number); MMDD stays as
    written (`0528`: the year unsaid)."""
    year = 2000 + int(word[:2])
    if len(word) == 4 and int(word[:2]) > 12 and _valid_date(year, int(word[2:])):
        return f"{year}-{word[2:]}"
    if len(word) == 6 and year >= 2020 and _valid_date(year, int(word[2:4]), int(word[4:])):
        return f"{year}-{word[2:4]}-{word[4:]}"
    return word


def _tokens(words: list[str]) -> list[_Token]:
    """Classify the words of a name (lower case, split): dates, then versions joined, then
    sizes, versions, explicit versions (v2) and words."""
    tokens: list[_Token] = []
    for word in _join_versions(_read_dates(words)):
        if isinstance(word, _Token):
            tokens.append(word)
        elif word.isalpha():  # most words: a word
            if word not in _DROPPED_WORDS:
                tokens.append(_Token(WORD, _SYNONYMS.get(word, word), word))
        elif SIZE.match(word) or _CONTEXT.match(word):
            tokens.append(_Token(SIZE_CLASS, word, word))
        elif _PADDED_VERSION.match(word):
            # Google's stable versions: gemini-2.0-flash-001 is the first, -002 the second
            value = f"v{int(word)}"
            if value != "v1":
                tokens.append(_Token(EXPLICIT, value, word))
        elif _EXPLICIT_VERSION.match(word):
            value = _version(word)
            if value != "v1":  # the first version of a model is the model (nova-lite-v1)
                tokens.append(_Token(EXPLICIT, value, word))
        elif _NUMBER.match(word):
            tokens.append(_Token(VERSION, _version(word), word))
        elif (glued := _GLUED.match(word)) and not _LETTER_NUMBER.match(word):
            number = glued["number"]
            tokens.append(_Token(WORD, _SYNONYMS.get(glued["word"], glued["word"]), word))
            kind = SIZE_CLASS if SIZE.match(number) else VERSION
            tokens.append(_Token(kind, _version(number) if kind == VERSION else number, ""))
        elif word not in _DROPPED_WORDS:
            tokens.append(_Token(WORD, _SYNONYMS.get(word, word), word))
    return tokens


def _key(tokens: list[_Token]) -> str:
    """The order-free key of a name's tokens: a multiset of units. A name with one version
    number keeps it as a unit of its own, wherever it stands ("Claude 4.5 Sonnet",
    `claude-sonnet-4-5`); with two or more, each stays with the word before it ("Hermes 3 -
    Llama 3.1 70B" is not "Hermes 3.1 - Llama 3 70B")."""
    versions = sum(1 for token in tokens if token.kind == VERSION)
    units: list[str] = []
    previous_word: str | None = None
    for token in tokens:
        if token.kind == WORD:
            units.append(token.value)
            previous_word = token.value
        elif token.kind == VERSION:
            if versions > 1 and previous_word is not None and units and units[-1] == previous_word:
                units[-1] = f"{previous_word}#{token.value}"
            else:
                units.append(f"#{token.value}")
        elif token.kind == SIZE_CLASS:
            units.append(f"~{token.value}")
        elif token.kind == EXPLICIT:
            units.append(token.value)
        elif token.kind == DATE:
            units.append(f"@{token.value}")
    return " ".join(sorted(units))


def family_key(key: str) -> str:
    """A key without its dates: the key of the model's family."""
    return " ".join(unit for unit in key.split(" ") if unit and not unit.startswith("@"))


def key_units(key: str) -> Counter[str]:
    return Counter(unit for unit in key.split(" ") if unit)


def _spelling(tokens: list[_Token], *, dates: bool = True) -> str | None:
    """The tokens in written order as an id ('qwen3-coder-480b-a35b-instruct')."""
    parts: list[str] = []
    for token in tokens:
        if token.kind == DATE and not dates:
            continue
        if not token.written:  # a version glued to the word before it
            continue
        parts.append(token.written)
    return _slug("-".join(parts))


_NOT_SLUG = re.compile(r"[^a-z0-9.]+")
_SEPARATOR_RUN = re.compile(r"[-.]*-[-.]*")  # a run of separators holding a dash: one dash
_DOTS = re.compile(r"\.{2,}")


def slugify(text: str) -> str | None:
    """`text` as an entity id: NFKC, lower case, every run of characters other than a-z, 0-9 and
    `.` one `-`, trimmed; None when nothing is left."""
    return _slug(unicodedata.normalize("NFKC", text).casefold())


def _slug(folded: str) -> str | None:
    """slugify of a text already in NFKC and lower case."""
    slug = _DOTS.sub(".", _SEPARATOR_RUN.sub("-", _NOT_SLUG.sub("-", folded))).strip("-.")
    return slug if ID_SLUG.match(slug) else None


def _read_tags(name: str, steps: list[str]) -> tuple[str, list[str], str | None]:
    """Split the listing tags off an id's last segment: `deepseek-r1:671b` keeps its size,
    `:thinking`/`:high` are an effort, `@20251101` a date; the tags that are no part of the
    model go (OpenRouter's `:free` and `:exacto`, Bedrock's `:0`, `@default`, Replicate's
    version hashes, a trailing `-free`). Returns (name, extra words, effort)."""
    name, *tags = name.split(":")
    words: list[str] = []
    effort: str | None = None
    if "@" in name.lstrip("@"):
        name, _, at = name.rpartition("@")
        if re.fullmatch(r"\d{8}", at):
            words.append(at)
            steps.append(f"date '@{at}'")
        else:
            steps.append(f"platform tag '@{at}' dropped")
    for tag in tags:
        folded = alias_key(tag)
        marker = parse_variant(f"x ({tag})").reasoning_effort if tag else None
        if SIZE.match(folded.replace(" ", "")):
            words.append(folded)
            steps.append(f"size tag ':{tag}'")
        elif marker is not None:
            effort = _combine_effort(effort, marker)
            steps.append(f"effort tag ':{tag}'")
        elif tag:
            steps.append(f"listing tag ':{tag}' dropped")
    if name.casefold().endswith("-free") and len(name) > len("-free"):
        # a free listing of the model, as some gateways write it (glm-5-free, kimi-k2.5-free)
        steps.append("listing suffix '-free' dropped")
        name = name[: -len("-free")]
    return name, words, effort


def _combine_effort(held: str | None, value: str | None) -> str | None:
    """An effort from the label and one from a tag as one (variants.merged_effort); none when
    they contradict."""
    if held is None or value is None:
        return held or value
    return merged_effort(held, value)


def _strip_prefixes(name: str, steps: list[str]) -> tuple[str, str | None]:
    """Bedrock's `region.vendor.` prefixes and version suffix; returns (name, region)."""
    region: str | None = None
    if _BEDROCK_VERSION.search(name):
        suffix = _BEDROCK_VERSION.search(name)
        assert suffix is not None
        steps.append(f"version suffix '{suffix.group(0)}' dropped")
        name = name[: suffix.start()]
    match = _DOTTED_VENDOR.match(name.casefold())
    if match and " " not in name and ("-" in match["rest"] or match["region"]):
        region = match["region"]
        rest = name[match.start("rest") :]
        if region:
            steps.append(f"region profile '{region}.'")
        if _STARTS_WITH_VERSION.match(match["rest"]):
            # deepseek.r1: the vendor's name is the model's own first word
            name = f"{name[match.start('vendor') : match.end('vendor')]}-{rest}"
        else:
            steps.append(f"vendor prefix '{match['vendor']}.'")
            name = rest
    return name, region


def _strip_vendor_words(words: list[str], steps: list[str]) -> list[str]:
    """Leading vendor or platform words that never name a model themselves ('meta', 'openai',
    'databricks'). A platform's own id is not one: models.dev's `minimax` lists `MiniMax-M2.5`,
    its `mistral` `mistral-large-2411`."""
    while len(words) > 1 and words[0] in VENDOR_PREFIXES:
        steps.append(f"vendor prefix '{words[0]}'")
        words = words[1:]
    return words


def _refine_month(tokens: list[_Token], hints: Hints, steps: list[str]) -> list[_Token]:
    """A month written in a name ("Aug '24") made as precise as the source's own id says (a date
    of that month in Artificial Analysis's slug `gpt-4o-2024-08-06`); otherwise it stays a
    month. Of two dates that agree ("R1 0528 (May '25)"), the one the name writes as a number is
    kept."""
    months = [token for token in tokens if token.kind == DATE and _MONTH.fullmatch(token.value)]
    if not months:
        return tokens
    others = [token for token in tokens if token.kind == DATE and token not in months]
    refined: list[_Token] = []
    for token in tokens:
        if token not in months:
            refined.append(token)
            continue
        month = token.value
        if any(_agrees(other.value, month) for other in others):
            steps.append(f"month '{month}' agrees with the name's date")
            continue
        precise = _slug_date(hints.slug, month)
        if precise and precise != month:
            steps.append(f"month '{month}' made '{precise}' by the source's slug")
            refined.append(_Token(DATE, precise, precise))
        else:
            refined.append(token)
    return refined


def _agrees(written: str, month: str) -> bool:
    """Whether a date written as a number (0528, 2024-05-28) lies in `month` (YYYY-MM)."""
    year, number = month[:4], month[5:]
    if written.startswith(month):
        return True
    if re.fullmatch(r"\d{4}", written):  # MMDD or YYMM
        return written[:2] == number or written == year[2:] + number
    return False


def _slug_date(slug: str | None, month: str) -> str | None:
    """The date of `month` the slug writes (`gpt-4o-2024-08-06`, `grok-2-1212` for Dec '24)."""
    if not slug:
        return None
    for token in _tokens([word for word in _SPLIT.split(slug.casefold()) if word]):
        if token.kind == DATE and _agrees(token.value, month):
            return token.value
    return None


def model_identity(label: str, hints: Hints = NO_HINTS) -> ModelIdentity:
    """Read one spelling of a model (a source's id or name) with its source's hints."""
    if not isinstance(label, str):
        label = ""
    own = _own_identity(label, hints)
    if not hints.hugging_face_id or not own.key:
        return own
    weights = _own_identity(hints.hugging_face_id, NO_HINTS)
    if not weights.key or weights.key == own.key or not names_the_weights(own.key, weights.key):
        return own  # the repository's name says something else: a candidate, not a key
    step = f"hugging_face_id '{hints.hugging_face_id}' names the weights"
    return ModelIdentity(
        spelling=weights.spelling,
        key=weights.key,
        family=weights.family,
        date=weights.date,
        region=own.region,
        precision=own.precision,
        service_tier=own.service_tier,
        reasoning_effort=own.reasoning_effort,
        steps=(*own.steps, step),
    )


def names_the_weights(own: str, weights: str) -> bool:
    """Whether a repository's key names the weights of a model with key `own`: it holds every
    version, size and date of the model's and shares a word with it; it may add anything
    (`qwen3-coder` serves `Qwen3-Coder-480B-A35B-Instruct`) and lack one word of the model's
    (`deepseek-chat-v3.1` serves `DeepSeek-V3.1`), never more."""
    extra = key_units(own) - key_units(weights)
    if any(not _is_word(unit) for unit in extra) or sum(extra.values()) > 1:
        return False
    return bool(
        {u for u in key_units(own) if _is_word(u)} & {u for u in key_units(weights) if _is_word(u)}
    )


def _is_word(unit: str) -> bool:
    return unit[:1] not in ("#", "~", "@") and "#" not in unit and not _EXPLICIT_VERSION.match(unit)


def _own_identity(label: str, hints: Hints) -> ModelIdentity:
    text = clean_label(unicodedata.normalize("NFKC", label if isinstance(label, str) else ""))
    steps: list[str] = []
    region: str | None = None
    tag_words: list[str] = []
    tag_effort: str | None = None
    head, _, name = text.rpartition("/")
    if text and " " not in name:  # an id: path, listing tags, Bedrock prefixes
        if head:
            steps.append(f"path '{head}/'")
        name, region = _strip_prefixes(name, steps)
        name, tag_words, tag_effort = _read_tags(name, steps)
        text = name
    variant = parse_variant(text)
    if variant.tokens:
        steps.append(f"variant {', '.join(repr(token) for token in variant.tokens)}")
    lowered = variant.base.casefold().replace("’", "'")
    lowered, months = _month_years(lowered)
    words = [word for word in _SPLIT.split(lowered) if word]
    words = [_fireworks_point(word) for word in words] + tag_words
    words = _strip_vendor_words(words, steps)
    words = words + [f"date:{month}" for month in months]
    tokens = _refine_month(_tokens(words), hints, steps)
    effort = _combine_effort(variant.reasoning_effort, tag_effort)
    if effort not in (None, *REASONING_EFFORTS):
        effort = None
    spelling = _spelling(tokens)
    dates = [token.value for token in tokens if token.kind == DATE]
    return ModelIdentity(
        spelling=spelling,
        key=_key(tokens) if spelling else "",
        family=(_spelling(tokens, dates=False) or spelling) if dates else spelling,
        date=dates[0] if dates else None,
        region=region,
        precision=variant.precision if variant.precision else DEFAULT_PRECISION,
        service_tier=variant.service_tier or DEFAULT_SERVICE_TIER,
        reasoning_effort=effort,
        steps=tuple(steps),
    )


def _fireworks_point(word: str) -> str:
    match = _FIREWORKS_POINT.match(word)
    return f"{match['head']}.{match['tail']}" if match else word


# --- providers

_PROVIDER_SUFFIXES = (("ai", 5), ("labs", 3), ("inc", 3), ("cloud", 3))
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def provider_key(name: str) -> str:
    """A provider's key: letters and digits only, without a trailing "AI", "Labs", "Inc" or
    "Cloud" where enough is left to name it ('' for nothing)."""
    text = unicodedata.normalize("NFKC", name if isinstance(name, str) else "").casefold()
    key = _NOT_ALNUM.sub("", text)
    for suffix, keep in _PROVIDER_SUFFIXES:
        if key.endswith(suffix) and len(key) - len(suffix) >= keep:
            key = key[: -len(suffix)]
    return key


# --- one id per key, and candidates for review


def group_ids(members: Iterable[tuple[str, str, bool]]) -> dict[str, str]:
    """The id of each key's group of spellings: (key, spelling, from a stable id) -> key: id.
    A spelling of a source's stable id is preferred over one read from a display name, then the
    spelling most of the group's labels have, then the first by text: the same spellings always
    give the same id, and one more source rarely changes it."""
    counts: Counter[tuple[str, bool, str]] = Counter(members)
    chosen: dict[str, tuple[bool, int, str]] = {}
    for (key, spelling, stable), count in counts.items():
        rank = (not stable, -count, spelling)
        if key not in chosen or rank < chosen[key]:
            chosen[key] = rank
    return {key: spelling for key, (_, _, spelling) in chosen.items()}


@dataclass(frozen=True)
class Candidate:
    """A known entity close to an undecided one, for a reviewer: never applied."""

    entity_id: str
    score: float  # 0..1, higher is closer
    reason: str


def rank_candidates(key: str, known: Mapping[str, str], *, limit: int = 3) -> list[Candidate]:
    """The known entities (id -> key) closest to `key`, best first: the share of units they
    have in common, the same family (its units without dates) weighing as much again, and the
    keys' text similarity breaking ties."""
    units = key_units(key)
    if not units:
        return []
    family_units = key_units(family_key(key))
    scored: list[Candidate] = []
    for entity_id, other in known.items():
        other_units = key_units(other)
        if not other_units or other == key:
            continue
        shared = sum((units & other_units).values())
        if not shared:
            continue
        overlap = shared / sum((units | other_units).values())
        same_family = family_units and family_units == key_units(family_key(other))
        score = (overlap + (1.0 if same_family else 0.0)) / 2
        reasons = ["same family, another date"] if same_family else []
        text = difflib.SequenceMatcher(None, key, other).ratio()
        score = round(score * 0.9 + text * 0.1, 3)
        shared_units = sorted((units & other_units).elements())
        reasons.append("shares " + " ".join(unit.lstrip("#~@") for unit in shared_units))
        scored.append(Candidate(entity_id, score, "; ".join(reasons)))
    scored.sort(key=lambda candidate: (-candidate.score, candidate.entity_id))
    return scored[:limit]


def rank_provider_candidates(
    key: str, known: Mapping[str, str], *, limit: int = 3, cutoff: float = 0.6
) -> list[Candidate]:
    """The known providers (id -> provider_key) spelt most like `key`, best first; one whose
    key begins the other's ('azure', 'azurecognitiveservices') counts as close."""
    scored: list[Candidate] = []
    for entity_id, other in known.items():
        if not other or other == key:
            continue
        ratio = difflib.SequenceMatcher(None, key, other).ratio()
        if key.startswith(other) or other.startswith(key):
            scored.append(
                Candidate(entity_id, round(max(ratio, cutoff), 3), "one name begins the other")
            )
        elif ratio >= cutoff:
            scored.append(Candidate(entity_id, round(ratio, 3), "spelt alike"))
    scored.sort(key=lambda candidate: (-candidate.score, candidate.entity_id))
    return scored[:limit]
