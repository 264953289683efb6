"""The reviewed files may only cite registered sources: a typo must be reported, never dropped;
and a file that breaks a rule is refused with an error naming the file and the rule."""

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.sources.registry import load_registry
from pipeline.sources.reviewed import (
    ReviewedFileError,
    ReviewedFiles,
    load_claims,
    load_platforms,
    unregistered_sources,
)
from pipeline.support.settings import BUNDLED_METADATA, Settings


def _bundled() -> tuple[tuple, tuple]:
    reviewed = ReviewedFiles.load(BUNDLED_METADATA)
    return reviewed.claims, reviewed.platforms


def test_the_bundled_reviewed_files_cite_only_registered_sources() -> None:
    registry = load_registry(Settings.resolve().registry)
    assert unregistered_sources(*_bundled(), registry) == []


def test_a_misspelt_source_is_named_with_where_it_is_cited() -> None:
    registry = load_registry(Settings.resolve().registry)
    claims, platforms = _bundled()
    claim = claims[0]
    typo = dataclasses.replace(
        claim, evidence=(dataclasses.replace(claim.evidence[0], source="cerebras-launhc"),)
    )
    platform = dataclasses.replace(
        platforms[0],
        doc_source="amazon-bedrok-models",
        catalogue_sources=("clodflare-workers-ai", "amazon-bedrok-models"),
    )
    problems = unregistered_sources((typo,), (platform,), registry)
    assert problems == [
        f"'cerebras-launhc', not in the registry, cited by claim {claim.id!r}",
        "'amazon-bedrok-models', not in the registry, cited by "
        f"platform {platform.id!r} doc_source, platform {platform.id!r} catalogue",
        f"'clodflare-workers-ai', not in the registry, cited by platform {platform.id!r} catalogue",
    ]


# Malformed reviewed files: each rule gives a ReviewedFileError naming the file and the problem.

CLAIM = """
[[claim]]
id = "acme-llama-1000"
provider = "acme"
model = "llama-3.3-70b"
figure = "1,000"
scope = "peak_per_user"
precision = "fp8"

  [[claim.evidence]]
  source = "acme-launch"
  quote = "1,000 tokens per second"
"""

PLATFORM = """
[[platform]]
id = "acme-cloud"
name = "Acme Cloud"
owner = "Acme"
kind = "gateway"
aliases = ["Acme"]
doc_source = "acme-docs"
catalogue_sources = []
stated_count = "100+ models"
notable = ["Llama"]
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _refused(load: Callable[[Path], object], path: Path, *expected: str) -> None:
    with pytest.raises(ReviewedFileError) as caught:
        load(path)
    for part in (path.name, *expected):
        assert part in str(caught.value), f"{part!r} not in {str(caught.value)!r}"


def test_the_templates_of_the_malformed_cases_are_valid(tmp_path: Path) -> None:
    (claim,) = load_claims(_write(tmp_path, "claims.toml", CLAIM))
    assert (claim.id, claim.precision, claim.evidence[0].source) == (
        "acme-llama-1000",
        "fp8",
        "acme-launch",
    )
    (platform,) = load_platforms(_write(tmp_path, "platforms.toml", PLATFORM))
    assert (platform.id, platform.kind, platform.aliases) == ("acme-cloud", "gateway", ("Acme",))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('id = "acme-llama-1000"', 'id = "Acme Llama"', "id 'Acme Llama' is not a slug"),
        ('provider = "acme"', 'provider = "acme_inc"', "provider 'acme_inc' is not a slug"),
        ('model = "llama-3.3-70b"', 'model = ""', "field 'model' must be a non-empty string"),
        ('scope = "peak_per_user"', 'scope = "fastest"', "scope must be one of peak_per_user"),
        ('precision = "fp8"', 'precision = "fp7"', "unknown precision 'fp7'"),
        ('figure = "1,000"', 'figure = "fast"', "figure: cannot read 'fast' as a figure"),
        ('figure = "1,000"', 'figure = "900-1,000"', "figure '900-1,000' is not a single number"),
        ('figure = "1,000"', "figure = 1000", "field 'figure' must be a non-empty string"),
        ("  [[claim.evidence]]", "  [claim.nothing]", "needs at least one [[claim.evidence]]"),
        ('  quote = "1,000 tokens per second"\n', "", "field 'quote' must be a non-empty string"),
        (CLAIM.strip(), 'claim = "acme-llama-1000"', "expected [[claim]] entries"),
        (CLAIM.strip(), "claim = [5]", "claim #1 is not a table"),
        ("  [[claim.evidence]]\n  source", "evidence = [1]\n  source", "evidence entries must be"),
        ('scope = "peak_per_user"', 'scope = "peak_per_user', "cannot read"),  # broken TOML
    ],
    ids=[
        "id-slug",
        "provider-slug",
        "model-empty",
        "scope",
        "precision",
        "figure-text",
        "figure-range",
        "figure-number",
        "no-evidence",
        "no-quote",
        "not-a-list",
        "not-a-table",
        "evidence-not-a-table",
        "broken-toml",
    ],
)
def test_a_malformed_claims_file_is_refused(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    assert old in CLAIM
    path = _write(tmp_path, "claims.toml", CLAIM.replace(old, new))
    _refused(load_claims, path, expected)


def test_a_duplicate_claim_id_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "claims.toml", CLAIM + CLAIM)
    _refused(load_claims, path, "claims.toml: duplicate claim id 'acme-llama-1000'")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('id = "acme-cloud"', 'id = "Acme Cloud"', "id is not a slug"),
        ('kind = "gateway"', 'kind = "marketplace"', "kind must be one of managed_cloud_catalogue"),
        ('name = "Acme Cloud"\n', "", "field 'name' must be a non-empty string"),
        ('aliases = ["Acme"]', 'aliases = "Acme"', "field 'aliases' must be a list of non-empty"),
        ('notable = ["Llama"]', 'notable = ["Llama", ""]', "field 'notable' must be a list"),
        ("[[platform]]", "[[something]]", "expected [[platform]] entries"),
        ('kind = "gateway"', "kind = gateway", "cannot read"),  # broken TOML
    ],
    ids=["id-slug", "kind", "no-name", "aliases", "notable", "no-platforms", "broken-toml"],
)
def test_a_malformed_platforms_file_is_refused(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    assert old in PLATFORM
    path = _write(tmp_path, "platforms.toml", PLATFORM.replace(old, new))
    _refused(load_platforms, path, expected)


def test_a_duplicate_platform_id_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "platforms.toml", PLATFORM + PLATFORM)
    _refused(load_platforms, path, "platforms.toml: duplicate platform id 'acme-cloud'")
