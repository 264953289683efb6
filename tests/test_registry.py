from pathlib import Path

import pytest

from pipeline.sources.registry import RegistryError, load_registry
from pipeline.support.settings import BUNDLED_METADATA

GOOD = """
[[source]]
id = "example-page"
kind = "benchmark"
publisher = "Example"
url = "https://example.org/page"
tier = "T1"
format = "aa_provider_page"
cadence = "weekly"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sources.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_registry_loads_with_required_ids():
    sources = load_registry(BUNDLED_METADATA / "sources.toml")
    assert len(sources) >= 20
    assert sources["cloudflare-workers-ai"].format == "cloudflare_models"
    assert sources["openrouter"].url == "https://openrouter.ai/api/v1/models"
    assert {s.kind for s in sources.values()} == {
        "benchmark",
        "compilation",
        "claim",
        "platform_doc",
    }
    assert {s.tier for s in sources.values()} == {"T1", "T2", "T3"}


def test_minimal_entry_loads(tmp_path):
    source = load_registry(write(tmp_path, GOOD))["example-page"]
    assert source.host == "example.org"
    assert source.max_age.days == 7


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('kind = "benchmark"', 'kind = "blog"', "unknown kind 'blog'"),
        ('tier = "T1"', 'tier = "T4"', "unknown tier 'T4'"),
        ('format = "aa_provider_page"', 'format = "pdf"', "unknown format 'pdf'"),
        ('cadence = "weekly"', 'cadence = "fortnightly"', "unknown cadence 'fortnightly'"),
        ('tier = "T1"', 'tier = "T1"\nscheduled = "no"', "must be true or false"),
        ('url = "https://example.org/page"', 'url = "javascript:alert(1)"', "not an http(s) URL"),
        ('url = "https://example.org/page"', 'url = "ftp://example.org/x"', "not an http(s) URL"),
        ('url = "https://example.org/page"', 'url = "https://"', "not an http(s) URL"),
        ('id = "example-page"', 'id = "Example Page"', "lower-case slug"),
        ('publisher = "Example"\n', "", "missing publisher"),
        ('cadence = "weekly"', 'cadence = "weekly"\ncolour = "red"', "unknown field(s) colour"),
        ('tier = "T1"', "tier = 1", "must be strings"),
    ],
)
def test_bad_entry_is_rejected_naming_it(tmp_path, old, new, message):
    with pytest.raises(RegistryError) as error:
        load_registry(write(tmp_path, GOOD.replace(old, new)))
    assert message in str(error.value)
    assert "source #1" in str(error.value)


def test_duplicate_id_names_the_second_entry(tmp_path):
    with pytest.raises(RegistryError, match=r"source #2 \('example-page'\): duplicate id"):
        load_registry(write(tmp_path, GOOD + GOOD))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no \\[\\[source\\]\\] entries"),
        ("[[source]\nid=", "cannot read"),
        ("source = 3", "no"),
    ],
)
def test_unreadable_registry(tmp_path, text, message):
    with pytest.raises(RegistryError, match=message):
        load_registry(write(tmp_path, text))


def test_missing_registry_file(tmp_path):
    with pytest.raises(RegistryError, match="file not found"):
        load_registry(tmp_path / "nope.toml")


def test_registry_that_is_not_utf8(tmp_path):
    path = tmp_path / "sources.toml"
    path.write_bytes(b"\xff\xfe" + GOOD.encode("utf-16-le"))
    with pytest.raises(RegistryError, match="cannot read"):
        load_registry(path)


def test_every_bundled_source_records_its_terms():
    """Each entry says what its data is under; what nobody knows stays unknown."""
    sources = load_registry(BUNDLED_METADATA / "sources.toml")
    text = (BUNDLED_METADATA / "sources.toml").read_text(encoding="utf-8")
    assert text.count("\nlicense = ") == len(sources)
    aa = [s for s in sources.values() if s.publisher == "Artificial Analysis"]
    assert aa and all(
        (s.license, s.attribution_required, s.terms_url)
        == ("publisher-terms", True, "https://artificialanalysis.ai/documentation")
        for s in aa
    )
    assert sources["openrouter"].license == "publisher-terms"
    assert sources["openrouter"].terms_url == "https://openrouter.ai/terms"
    assert sources["models-dev"].license == "MIT"
    assert sources["llmperf-groq-70b"].license == "Apache-2.0"
    assert sources["cerebras-llama-4-maverick-record"].license == "unknown"
    assert sources["cerebras-llama-4-maverick-record"].attribution_required is None


def test_an_entry_without_terms_has_unknown_ones(tmp_path):
    source = load_registry(write(tmp_path, GOOD))["example-page"]
    assert (source.license, source.terms_url, source.attribution_required) == ("unknown", "", None)


@pytest.mark.parametrize(
    ("terms", "message"),
    [
        ('license = "MIT or whatever"', "neither an SPDX id"),
        ('license = "publisher-terms"', "needs terms_url"),
        ('license = "MIT"\nterms_url = "javascript:alert(1)"', "terms_url"),
        ("license = 3", "must be strings"),
        ('attribution_required = "yes"', "must be true or false"),
    ],
)
def test_bad_terms_are_rejected_naming_the_entry(tmp_path, terms, message):
    with pytest.raises(RegistryError, match="source #1") as error:
        load_registry(write(tmp_path, GOOD + terms + "\n"))
    assert message in str(error.value)
