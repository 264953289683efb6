"""The synthetic benchmark corpus: deterministic bytes in the real formats, a registry and alias
tables the pipeline's own loaders accept, and one more day on demand."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from benchmarks.corpus import (
    CATALOGUE_SOURCE,
    COMPILATION_SOURCE,
    Corpus,
    CorpusSpec,
    StoreWriter,
    add_day,
    generate,
)
from pipeline.extract import PARSERS, SnapshotInput
from pipeline.normalise.entities import Resolver
from pipeline.raw.snapshots import SnapshotStore
from pipeline.schema.staging import OPENROUTER_PERCENTILES
from pipeline.sources.registry import load_registry
from pipeline.sources.reviewed import ReviewedFiles, load_claims, load_platforms

SPEC = CorpusSpec(models=5, providers=3, days=3)


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _frames(corpus: Corpus) -> dict[str, list]:
    """Every snapshot parsed by the parser its registry entry names: {frame name: [frames]}."""
    sources = load_registry(corpus.registry)
    store = SnapshotStore(corpus.raw_dir)
    reviewed = ReviewedFiles.load(corpus.metadata_dir)
    found: dict[str, list] = {}
    for meta in store.list():
        source = sources[meta.source_id]
        snapshot = SnapshotInput(meta, source, store.read(meta), reviewed)
        parsed = PARSERS[source.format].parse(snapshot)
        for name, frame in parsed.items():
            found.setdefault(name, []).append(frame)
    return found


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return generate(SPEC, tmp_path_factory.mktemp("bench") / "corpus")


@pytest.fixture(scope="module")
def frames(corpus: Corpus) -> dict[str, list]:
    return _frames(corpus)


def test_same_seed_gives_identical_files(corpus: Corpus, tmp_path: Path) -> None:
    again = generate(SPEC, tmp_path / "again")
    assert _files(again.root) == _files(corpus.root)
    other = generate(CorpusSpec(5, 3, 3, seed=7), tmp_path / "other")
    pages = {k: v for k, v in _files(other.raw_dir).items() if k.startswith("bench-aa-")}
    assert pages.keys().isdisjoint(_files(corpus.raw_dir))  # other figures, other sha256


def test_counts_and_registry(corpus: Corpus) -> None:
    assert (corpus.pages, corpus.endpoints, corpus.snapshots) == (15, 45, 17)
    sources = load_registry(corpus.registry)
    aa = [s for s in sources.values() if s.format == "aa_provider_page"]
    assert [s.id for s in aa] == [f"bench-aa-model-{n}" for n in range(1, 6)]
    assert {(s.tier, s.cadence, s.kind) for s in aa} == {("T1", "weekly", "benchmark")}
    assert aa[0].url == "https://bench.speedbook.invalid/models/model-1/providers"
    assert sources[CATALOGUE_SOURCE].format == "cloudflare_models"
    assert sources[COMPILATION_SOURCE].format == "compilation_page"
    store = SnapshotStore(corpus.raw_dir)
    days = [m.retrieved_at for m in store.list("bench-aa-model-3")]
    assert days == ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"]
    for meta in store.list():
        assert meta.obtained_by == "manual"
        assert "synthetic" in meta.note.casefold()


def test_every_page_parses_with_one_row_per_provider(corpus: Corpus, frames: dict) -> None:
    pages = frames["aa_endpoints"]
    assert len(pages) == corpus.pages
    assert all(len(page) == SPEC.providers for page in pages)
    assert sum(len(page) for page in pages) == corpus.endpoints
    assert all(page["output_tokens_per_s"].notna().all() for page in pages)
    assert any(page["ttft_s"].notna().any() for page in pages)
    assert any(page["price_blended_usd_per_mtok"].notna().any() for page in pages)
    # The other formats parse too: the catalogue lists every model, the compilation every
    # provider (a headline each, plus a context figure).
    assert sum(len(f) for f in frames["catalogue_entries"]) == SPEC.models
    compiled = frames["compilation_figures"][0]
    assert (compiled["role"] == "headline").sum() == SPEC.providers
    assert set(compiled["qualifier"].dropna()) >= {"approx", "up_to", "range"}


def test_metadata_resolves_every_label(corpus: Corpus, frames: dict) -> None:
    resolver = Resolver.load(corpus.metadata_dir)
    assert "groq" in resolver.providers  # the bundled tables are kept
    labels: set[tuple[str, str]] = set()
    for page in frames["aa_endpoints"]:
        labels |= {("provider", label) for label in page["endpoint_label"]}
        labels |= {("model", label) for label in page["page_model"]}
    for compiled in frames["compilation_figures"]:
        labels |= {("provider", label) for label in compiled["provider_label"]}
        labels |= {("model", label) for label in compiled["model_label"].dropna()}
    for entries in frames["catalogue_entries"]:
        labels |= {("model", label) for label in entries["platform_model_id"]}
    resolutions = {label: resolver.resolve(kind, label) for kind, label in labels}
    assert [label for label, r in resolutions.items() if not r.resolved] == []
    assert resolutions["Provider 2 (Turbo)"].entity_id == "bench-provider-2"
    # The variant markers on the pages are read: precision, service tier, reasoning effort.
    variants = {(r.precision, r.service_tier, r.reasoning_effort) for r in resolutions.values()}
    assert {("fp8", "turbo", None), ("unknown", "turbo", None), ("fp8", "standard", None)} <= (
        variants
    )
    assert ("unknown", "standard", "high") in variants
    # The reviewed files beside them still load, with the catalogue tied to a platform.
    assert load_claims(corpus.metadata_dir / "claims.toml")
    platforms = load_platforms(corpus.metadata_dir / "platforms.toml")
    assert any(CATALOGUE_SOURCE in p.catalogue_sources for p in platforms)
    assert not (corpus.metadata_dir / "sources.toml").exists()


def test_the_corpus_is_written_through_the_stores_public_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every snapshot goes through `open_store(...).add`, as a fetch's would: no file of the
    store is written by the generator itself."""
    import benchmarks.corpus as corpus_module

    added: list[str] = []
    real = corpus_module.open_store

    def counting(location: object) -> object:
        store = real(location)  # type: ignore[arg-type]
        original = store.add

        def add(source_id: str, data: bytes, **kwargs: object) -> object:
            added.append(source_id)
            return original(source_id, data, **kwargs)  # type: ignore[arg-type]

        store.add = add  # type: ignore[method-assign]
        return store

    monkeypatch.setattr(corpus_module, "open_store", counting)
    written = generate(SPEC, tmp_path / "corpus")
    assert len(added) == written.snapshots == len(SnapshotStore(written.raw_dir).list())


def test_the_writer_leaves_known_bytes_to_the_store(tmp_path: Path) -> None:
    writer = StoreWriter(tmp_path)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    kwargs = {"url": "https://x.invalid/", "content_type": "text/html", "extension": "html"}
    assert writer.write("s", b"<p>a</p>", retrieved_at=when, note="n", **kwargs)
    assert not writer.write("s", b"<p>a</p>", retrieved_at=when, note="n", **kwargs)
    assert writer.write("s", b"<p>b</p>", retrieved_at=when.replace(day=2), note="n", **kwargs)
    # Back to the first bytes: the store's rule makes it current again without a second copy.
    assert writer.write("s", b"<p>a</p>", retrieved_at=when.replace(day=3), note="n", **kwargs)
    listed = SnapshotStore(tmp_path).list("s")
    assert len(listed) == 3
    assert listed[0].sha256 == listed[-1].sha256 != listed[1].sha256
    assert len(list((tmp_path / "s").glob("*.html"))) == 2


def test_add_day_writes_the_pages_a_longer_corpus_has(tmp_path: Path) -> None:
    spec = CorpusSpec(models=5, providers=3, days=2, start=date(2026, 3, 1))
    small = generate(spec, tmp_path / "small")
    assert add_day(small, spec, spec.days) == spec.models
    assert add_day(small, spec, spec.days) == 0  # already there: nothing new
    longer = generate(CorpusSpec(5, 3, 3, start=date(2026, 3, 1)), tmp_path / "longer")
    pages = {k: v for k, v in _files(longer.raw_dir).items() if k.startswith("bench-aa-")}
    assert {k: v for k, v in _files(small.raw_dir).items() if k.startswith("bench-aa-")} == pages
    assert len(SnapshotStore(small.raw_dir).list("bench-aa-model-5")) == 3
    for bad in (-1, True, 1.0):
        with pytest.raises(ValueError, match="day_index"):
            add_day(small, spec, bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value"),
    [("models", 0), ("providers", -2), ("days", -1), ("models", True), ("days", False)],
)
def test_a_bad_size_is_refused(field: str, value: object) -> None:
    sizes: dict = {"models": 5, "providers": 3, "days": 3} | {field: value}
    with pytest.raises(ValueError, match=f"^{field} must be a positive whole number"):
        CorpusSpec(**sizes)


def test_a_busy_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ValueError, match="not an empty folder"):
        generate(SPEC, tmp_path / "busy")
    assert (tmp_path / "busy" / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_the_poll_corpus_is_deterministic_in_the_real_format_and_grows_by_a_poll(tmp_path):
    """Polls in the real /endpoints shape, as the parser reads them: seeded, with percentiles,
    quantizations (null among them), null statistics and endpoints that come and go; a poll added
    later has the bytes a longer history would have had; large polls are stored compressed."""
    from benchmarks.poll_corpus import SOURCE, PollSpec, add_poll, generate
    from pipeline.extract import PARSERS, SnapshotInput
    from pipeline.raw.snapshots import COMPRESSED_SUFFIX, SnapshotStore
    from pipeline.sources.registry import load_registry

    spec = PollSpec(models=40, days=1, polls_per_day=6)
    corpus = generate(spec, tmp_path / "a", floor_dir=tmp_path / "floor")
    longer = generate(PollSpec(40, 2, 6), tmp_path / "b")
    grown = add_poll(corpus, spec, spec.polls)
    assert (corpus.polls, grown.polls) == (6, 7) and corpus.members == 6 * 40
    store, other = SnapshotStore(corpus.raw_dir), SnapshotStore(longer.raw_dir)
    assert [m.sha256 for m in store.list()] == [m.sha256 for m in other.list()[:7]]
    source = load_registry(corpus.registry)[SOURCE]
    parser = PARSERS[source.format]
    statistics, tags, quantizations, nulls = 0, [], set(), 0
    for meta in store.list():
        assert store.path_of(meta).name.endswith(COMPRESSED_SUFFIX)
        frames = parser.parse(SnapshotInput(meta, source, store.read(meta)))
        members = frames["openrouter_poll_members"]
        assert members["problem"].isna().all() and len(members) == 40
        percentiles = frames["openrouter_endpoints"][list(OPENROUTER_PERCENTILES.values())]
        statistics += int(percentiles.notna().sum().sum())
        nulls += int(members["endpoints_without_statistics"].sum())
        tags.append(
            set(frames["openrouter_endpoints"]["model"] + frames["openrouter_endpoints"]["tag"])
        )
        quantizations |= set(frames["openrouter_endpoints"]["quantization"].fillna("(null)"))
    assert statistics == grown.statistics
    assert {"(null)", "unknown", "fp8", "bf16"} <= quantizations
    assert nulls > 0
    assert any(a - b for a, b in itertools.pairwise(tags))  # endpoints leave
    assert any(b - a for a, b in itertools.pairwise(tags))  # and arrive
    floor = sorted((tmp_path / "floor").iterdir())
    assert len(floor) == 6 and all(len(f.read_bytes().splitlines()) == 40 for f in floor)
