"""The preview page of a release: one self-contained `index.html` built from its three exports.

The page holds no script and loads nothing: the CSS is inline, and a Content-Security-Policy
forbids every fetch, so even a name that slipped past escaping could neither run nor call out.
Every string from an export is escaped with `html.escape`, links go out only when `safe_url`
accepts them (absolute http/https), and the same documents always give the same bytes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from html import escape
from typing import Any

from pipeline.release.changelog import POINT_QUALIFIERS, endpoint_id
from pipeline.release.contracts import EXPORT_FILES
from pipeline.release.formatting import SERVICE_TIER_LABELS
from pipeline.release.formatting import speed as speed_number
from pipeline.support.text import safe_url

Doc = Mapping[str, Any]

LICENSE_URLS = {"CC-BY-4.0": "https://creativecommons.org/licenses/by/4.0/"}
TIER_TITLES = {
    "T1": "T1: independent measurement, or a platform documenting itself",
    "T2": "T2: a vendor's claim about its own product, or a compilation citing T1 sources",
    "T3": "T3: press repeating a claim",
}
PROVIDER_TYPES = {
    "inference_api": "inference API",
    "cloud": "cloud",
    "hardware_vendor": "hardware vendor",
}
SCOPES = {
    "peak_per_user": ("per user", "peak, one stream, best case"),
    "aggregate": ("aggregate", "all users of a server together"),
    "live_median": ("live median", "sustained, measured on a public endpoint"),
}
UNITS = {"tokens/s": "t/s"}
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_RELATIVE_HREF = re.compile(r"^[A-Za-z0-9._~/#%-]+$")

STYLE = """
:root{--ink:#1b2330;--muted:#536071;--line:#d9dee5;--soft:#f3f5f8;--bar:#2f62d0;
--stale:#8a96a8;--link:#1d4fb8}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:var(--ink);background:#fff}
header,main,footer{max-width:76rem;margin:0 auto;padding:0 1.5rem}
header{padding-top:1.5rem}
header::after{content:"";display:block;margin-top:.6rem;border-bottom:1px solid var(--line)}
h1{font-size:1.6rem;margin:0}
h1 .version{font-weight:400;color:var(--muted)}
h2{font-size:1.25rem;margin:2.2rem 0 .3rem}
h3{font-size:1rem;margin:1.2rem 0 .3rem}
p{margin:.3rem 0}
a{color:var(--link)}
.lede,.note,.legend{color:var(--muted)}
.legend{font-size:.85rem}
.legend .nw{margin-left:.6rem}
td.id{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.78rem;word-break:break-all}
.note{font-size:.875rem;max-width:62rem}
dl.meta{display:flex;flex-wrap:wrap;gap:.2rem 1.8rem;margin:.8rem 0}
dl.meta div{display:flex;gap:.4rem}
dl.meta dt{color:var(--muted)}
dl.meta dd{margin:0;font-weight:600}
nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:1rem;padding:0;margin:.5rem 0}
.warning{background:#fff4d6;border:1px solid #e0b84a;padding:.4rem .7rem}
ol.bars{list-style:none;padding:0;margin:1rem 0}
.bar-row{display:grid;grid-template-columns:12rem minmax(0,1fr);column-gap:1rem;
padding:.35rem 0;border-top:1px solid var(--soft)}
.who{grid-row:span 2}
.who .name{display:block;font-weight:600}
.who .ptype{font-size:.8rem;color:var(--muted)}
.track{height:.9rem;margin-top:.3rem;background:var(--soft);border-radius:2px}
.bar{height:100%;min-width:2px;background:var(--bar);border-radius:2px}
.stale .bar{background:repeating-linear-gradient(135deg,var(--stale) 0 6px,#c3cad5 6px 12px)}
.label{font-size:.9rem;display:flex;flex-wrap:wrap;gap:.15rem .6rem;align-items:baseline}
.label .value{font-weight:600}
.label .tags{color:var(--muted);font-size:.82rem}
.chip{display:inline-block;font-size:.75rem;font-weight:700;line-height:1.1;padding:.12rem .35rem;
border-radius:3px;border:1px solid transparent;white-space:nowrap}
.tier-T1{background:#e3f4e8;color:#14532d;border-color:#9fd3ae}
.tier-T2{background:#fdf1d6;color:#713f0b;border-color:#e6c37a}
.tier-T3{background:#fbe4e4;color:#7f1d1d;border-color:#e5a3a3}
.tier-other{background:var(--soft);color:var(--ink)}
.stale-chip{background:#eceff3;color:#3b4452;border-color:#b9c1cc}
.scope-aggregate{background:#efe7fb;color:#4c1d95;border-color:#c4b0ea}
.scope-peak_per_user{background:#e4eefc;color:#1e3a8a;border-color:#a9c1ea}
table{border-collapse:collapse;width:100%;font-size:.85rem;margin:.6rem 0}
caption{text-align:left;color:var(--muted);padding:.2rem 0}
th,td{text-align:left;vertical-align:top;padding:.4rem .5rem;border-bottom:1px solid var(--line)}
thead th{background:var(--soft);border-bottom:2px solid var(--line);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.num{white-space:nowrap}
td.fig{min-width:10rem}
.nw{white-space:nowrap}
td small,.sub{display:block;color:var(--muted);font-size:.8rem;font-weight:400;
white-space:normal}
.none{color:var(--muted)}
.src{white-space:nowrap}
td.claim{min-width:14rem}
.srcs{margin-top:.2rem}
.srcs .src{margin-right:.5rem}
ul.models{columns:14rem;column-gap:1.5rem;padding:0;margin:.2rem 0;list-style:none}
ul.models li{font-size:.875rem;padding:.05rem 0;break-inside:avoid}
.fc{font-weight:700;color:#0f5132;text-decoration:none;margin-left:.25rem}
.count{color:var(--muted);font-weight:400}
details{margin:.6rem 0}
summary{cursor:pointer;color:var(--link)}
footer{margin-top:2.5rem;padding-top:.8rem;padding-bottom:2rem;border-top:1px solid var(--line);
color:var(--muted);font-size:.85rem}
"""


def render_preview(documents: Mapping[str, Doc], *, changelog_href: str = "CHANGELOG.md") -> str:
    """The preview page of a release from its exports, keyed by file name
    (`inference.json`, `model_platforms.json`, `inference_catalog.json`)."""
    missing = [name for name in EXPORT_FILES if not isinstance(documents.get(name), Mapping)]
    if missing:
        raise ValueError(f"render_preview needs every export; missing: {', '.join(missing)}")
    inference = documents["inference.json"]
    platforms = documents["model_platforms.json"]
    catalog = documents["inference_catalog.json"]
    version = _text(inference.get("version")) or "unversioned"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>Speedbook {_e(version)}: LLM inference speed and model access</title>",
        f"<style>{STYLE.strip()}</style>",
        "</head>",
        "<body>",
        _header(documents, version, changelog_href),
        "<main>",
        _throughput(inference),
        _records(inference),
        _platforms(platforms),
        _catalogue(catalog),
        _provenance(documents),
        "</main>",
        _footer(version),
        "</body>",
        "</html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


# --- small helpers ------------------------------------------------------------------------


def _text(value: Any) -> str:
    """Plain text of a scalar from an export ('' for None or a container)."""
    if value is None or isinstance(value, (dict, list, tuple, set)):
        return ""
    return str(value)


def _e(value: Any) -> str:
    return escape(_text(value), quote=True)


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _date(value: Any) -> str:
    text = _text(value)
    return text[:10] if _DATE.match(text) else text


def _link(url: Any, label_html: str, title: str = "") -> str:
    """`label_html` (already escaped) as a link when the URL is absolute http(s), else as text."""
    href = safe_url(url) if isinstance(url, str) else None
    if href is None:
        return label_html
    extra = f' title="{_e(title)}"' if title else ""
    return f'<a href="{_e(href)}" rel="noopener noreferrer"{extra}>{label_html}</a>'


def _local_href(href: str) -> str | None:
    """A relative link (no scheme, so never `javascript:`) or an absolute http(s) URL."""
    if _RELATIVE_HREF.match(href) and not href.startswith("//"):
        return href
    return safe_url(href)


def _tier(tier: Any) -> str:
    text = _text(tier)
    css = text if text in TIER_TITLES else "other"
    title = TIER_TITLES.get(text, "source tier")
    return f'<span class="chip tier-{css}" title="{_e(title)}">{_e(text) or "?"}</span>'


def _model_name(model: Any) -> str:
    model = _dict(model)
    return _text(model.get("name")) or _text(model.get("id"))


def _variant(variant: Any) -> str:
    """'high, Turbo, FP8' (empty for a standard endpoint), in the exports' order."""
    variant = _dict(variant)
    parts = []
    if variant.get("reasoning_effort"):
        parts.append(_text(variant["reasoning_effort"]))
    tier = _text(variant.get("service_tier"))
    if tier in SERVICE_TIER_LABELS:
        parts.append(SERVICE_TIER_LABELS[tier])
    precision = _text(variant.get("precision"))
    if precision and precision != "unknown":
        parts.append(precision.upper())
    return ", ".join(parts)


def _model_with_variant(figure: Mapping[str, Any]) -> str:
    name, variant = _model_name(figure.get("model")), _variant(figure.get("variant"))
    return f"{name} ({variant})" if variant else name


def _source(ref: Any, with_date: bool = True) -> str:
    """'[T1] Artificial Analysis, 2026-11-29' with the publisher linked to the source URL."""
    ref = _dict(ref)
    publisher = _e(ref.get("publisher") or ref.get("id") or "source")
    label = _link(ref.get("url"), publisher, _text(ref.get("id")))
    when = _date(ref.get("retrieved_at"))
    text = f"{_tier(ref.get('tier'))} {label}" + (f", {_e(when)}" if with_date and when else "")
    return f'<span class="src">{text}</span>'


def _none(text: str = "—") -> str:
    return f'<span class="none">{_e(text)}</span>'


# --- sections ------------------------------------------------------------------------------


def _header(documents: Mapping[str, Doc], version: str, changelog_href: str) -> str:
    inference = documents["inference.json"]
    license_id = _text(inference.get("license"))
    license_html = _link(LICENSE_URLS.get(license_id), _e(license_id)) if license_id else _none()
    changelog = _local_href(changelog_href) if isinstance(changelog_href, str) else None
    changelog_html = (
        f'<a href="{_e(changelog)}">changelog</a>' if changelog else _none("no changelog")
    )
    files = " · ".join(f'<a href="{name}">{name}</a>' for name in EXPORT_FILES)
    items = [
        ("Release", _e(version)),
        ("Data date", _e(_date(inference.get("data_date")))),
        ("License", license_html),
        ("Changes", changelog_html),
    ]
    if inference.get("as_of"):
        items.insert(2, ("Built as of", _e(_date(inference.get("as_of")))))
    meta = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in items)
    versions = sorted({_text(documents[name].get("version")) for name in EXPORT_FILES})
    warning = (
        f'<p class="warning">The exports disagree on the release version: {_e(", ".join(versions))}'
        "</p>"
        if len(versions) > 1
        else ""
    )
    legend = " ".join(
        f'<span class="nw">{_tier(tier)} {escape(title.split(": ", 1)[1])}</span>'
        for tier, title in TIER_TITLES.items()
    )
    return (
        "<header>"
        f'<h1>Speedbook <span class="version">release {_e(version)}</span></h1>'
        '<p class="lede">A versioned, source-graded dataset of LLM inference speed and model '
        "access: who serves which model, how fast, and how sure we are of each figure.</p>"
        f'<dl class="meta">{meta}</dl>{warning}'
        '<nav aria-label="Sections"><ul>'
        '<li><a href="#throughput">Headline throughput</a></li>'
        '<li><a href="#records">Live vs record</a></li>'
        '<li><a href="#platforms">Platforms</a></li>'
        '<li><a href="#catalogue">Edge catalogue</a></li>'
        '<li><a href="#provenance">Snapshots</a></li>'
        f"<li>Data: {files}</li>"
        "</ul></nav>"
        f'<p class="legend">Source tiers: {legend}</p>'
        "</header>"
    )


def _headline_value(headline: Mapping[str, Any]) -> float | None:
    for key in ("value", "high", "low"):
        number = _number(headline.get(key))
        if number is not None:
            return max(number, 0.0)
    return None


def _throughput(inference: Doc) -> str:
    providers = [_dict(p) for p in _list(inference.get("providers"))]
    without = [p for p in providers if not isinstance(p.get("headline"), Mapping)]
    bars = [
        (_headline_value(p["headline"]), p)
        for p in providers
        if isinstance(p.get("headline"), Mapping)
    ]
    top = max((value for value, _ in bars if value), default=0.0)
    # Fastest first; the tie-breakers keep the order stable.
    bars.sort(
        key=lambda bar: (-(bar[0] or 0.0), _text(bar[1].get("name")), _text(bar[1].get("id")))
    )
    rows = []
    for value, provider in bars:
        headline = provider["headline"]
        width = 100.0 * value / top if value and top else 0.0
        stale = headline.get("stale") is True
        display = _text(headline.get("display")) or _text(provider.get("display"))
        if not display and value is not None:
            display = f"{speed_number(value)} t/s · {_model_with_variant(headline)}"
        model = _model_with_variant(headline)
        kind = _text(provider.get("type"))
        stale_chip = (
            f' <span class="chip stale-chip" title="{_e(headline.get("rule"))}">stale</span>'
            if stale
            else ""
        )
        rows.append(
            f'<li class="bar-row{" stale" if stale else ""}" data-bar="headline"'
            f' data-provider="{_e(provider.get("id"))}" data-tier="{_e(headline.get("tier"))}"'
            f' data-model="{_e(_dict(headline.get("model")).get("id"))}"'
            f' data-stale="{"true" if stale else "false"}">'
            f'<div class="who"><span class="name">{_e(provider.get("name"))}</span>'
            f'<span class="ptype">{_e(PROVIDER_TYPES.get(kind, kind))}</span></div>'
            f'<div class="track" aria-hidden="true"><div class="bar" style="width:{width:.2f}%">'
            "</div></div>"
            f'<div class="label"><span class="value">{_e(display)}</span>'
            f'<span class="tags">measured on {_e(model)} · '
            f"{_source(headline.get('source'))}{stale_chip}</span></div>"
            "</li>"
        )
    missing = ""
    if without:
        names = ", ".join(_e(p.get("name") or p.get("id")) for p in without)
        missing = f'<p class="note">No headline (no T1 live median of any age): {names}.</p>'
    return (
        '<section id="throughput" aria-labelledby="throughput-h">'
        '<h2 id="throughput-h">Headline throughput</h2>'
        '<p class="note">Output tokens per second, live median on a public endpoint, one '
        "headline per provider, tagged with the model measured and the tier of its source. "
        "Speed swings 5–20× with model size, so compare bars on the same model. Bar length is "
        "proportional to the figure; hatched bars are <strong>stale</strong> (older than their "
        "source's cadence, kept only when nothing fresher exists).</p>"
        f'<ol class="bars" aria-label="Headline output speed per provider">{"".join(rows)}</ol>'
        f"{missing}"
        "</section>"
    )


# The fastest live median beside a claim follows mart.peak_vs_live's rule exactly (the export
# holds every current live figure, so the page needs nothing else): output speed, live median,
# a point figure (exact or approximate: a bound such as "up to 740" is not a median), on the
# claim's model at a compatible precision (equal, or unstated on one side), any provider; fresh
# figures before stale ones, then the fastest, then the best tier, then the endpoint id.
# tests/test_peak_vs_live_export.py checks the page against the view for every claim.
LiveSpeed = tuple[str, str, Mapping[str, Any]]  # provider name, endpoint id, figure


def _live_speeds(inference: Doc) -> list[LiveSpeed]:
    """Every current live median output speed in the release that is a point figure."""
    speeds = []
    for provider in map(_dict, _list(inference.get("providers"))):
        name = _text(provider.get("name")) or _text(provider.get("id"))
        for figure in map(_dict, _list(provider.get("live_figures"))):
            if (
                _number(figure.get("value")) is None
                or figure.get("metric") != "output_tokens_per_s"
                or figure.get("scope") != "live_median"
                or figure.get("qualifier") not in POINT_QUALIFIERS
            ):
                continue
            variant = _dict(figure.get("variant"))
            # the warehouse's endpoint id: the view's last tie-breaker
            endpoint = endpoint_id(
                _text(provider.get("id")),
                _text(_dict(figure.get("model")).get("id")),
                {
                    key: _text(variant.get(key))
                    for key in ("precision", "service_tier", "reasoning_effort")
                },
            )
            speeds.append((name, endpoint, figure))
    return speeds


def _same_precision(a: str, b: str) -> bool:
    """Equal, or not stated by one side (as in the mart)."""
    return a == b or "unknown" in (a, b)


def _fastest_live(claim: Mapping[str, Any], speeds: list[LiveSpeed]) -> LiveSpeed | None:
    """The fastest live median on the claim's model, any provider (mart.peak_vs_live)."""
    model_id = _text(_dict(claim.get("model")).get("id"))
    precision = _text(claim.get("precision")) or "unknown"
    candidates = [
        speed
        for speed in speeds
        if _text(_dict(speed[2].get("model")).get("id")) == model_id
        and _same_precision(
            _text(_dict(speed[2].get("variant")).get("precision")) or "unknown", precision
        )
    ]
    return min(
        candidates,
        key=lambda speed: (
            speed[2].get("stale") is True,
            -(_number(speed[2].get("value")) or 0.0),
            _text(speed[2].get("tier")),
            speed[1],
        ),
        default=None,
    )


def _figure_cell(figure: Mapping[str, Any], who: str = "") -> str:
    """'1,753 t/s' over 'Cerebras · high · [T1] · 2026-06-28 · stale'."""
    value = _number(figure.get("value"))
    if value is None:
        return _none()
    details = [_e(who), _e(_variant(figure.get("variant"))), _tier(figure.get("tier"))]
    details.append(_e(_date(figure.get("observed_at"))))
    if figure.get("stale") is True:
        details.append('<span class="chip stale-chip">stale</span>')
    parts = " · ".join(f'<span class="nw">{d}</span>' for d in details if d)
    return f"{speed_number(value)} t/s<small>{parts}</small>"


def _records(inference: Doc) -> str:
    speeds = _live_speeds(inference)
    rows = []
    for provider in map(_dict, _list(inference.get("providers"))):
        for claim in map(_dict, _list(provider.get("claims"))):
            scope = _text(claim.get("scope"))
            scope_label, scope_title = SCOPES.get(scope, (scope, ""))
            precision = _text(claim.get("precision"))
            precision_html = (
                _e(precision.upper()) if precision not in ("", "unknown") else _none("not stated")
            )
            unit = _text(claim.get("unit"))
            figure = f"{_text(claim.get('figure'))} {UNITS.get(unit, unit)}".strip()
            sub = ", ".join(_text(claim.get(k)) for k in ("hardware", "claimed") if claim.get(k))
            notes = f"<small>{_e(claim.get('notes'))}</small>" if claim.get("notes") else ""
            live = claim.get("live_median")
            live_html = _figure_cell(live) if isinstance(live, Mapping) else _none("none")
            best = _fastest_live(claim, speeds)
            best_html = _figure_cell(best[2], best[0]) if best else _none("none")
            ratio = _number(claim.get("peak_to_live_ratio"))
            ratio_html = f"{ratio:.2f}×" if ratio is not None else _none()
            sources = " ".join(_source(ref, with_date=False) for ref in _list(claim.get("sources")))
            sources_html = f'<small class="srcs">{sources}</small>' if sources else ""
            rows.append(
                f'<tr data-claim="{_e(claim.get("id"))}">'
                f'<th scope="row">{_e(provider.get("name"))}'
                f'<span class="sub">{_e(_model_name(claim.get("model")))}</span></th>'
                f'<td class="claim"><strong>{_e(figure)}</strong>'
                f"<small>{_e(sub)}</small>{notes}{sources_html}</td>"
                f'<td><span class="chip scope-{_e(scope)}" title="{_e(scope_title)}">'
                f"{_e(scope_label)}</span></td>"
                f"<td>{precision_html}</td>"
                f"<td>{_e(claim.get('technique')) or _none()}</td>"
                f"<td>{_e(claim.get('verified_by')) or _none('not stated')}</td>"
                f'<td class="num fig">{live_html}</td>'
                f'<td class="num">{ratio_html}</td>'
                f'<td class="num fig">{best_html}</td>'
                "</tr>"
            )
    body = "".join(rows) or '<tr><td colspan="9" class="none">No record claims.</td></tr>'
    return (
        '<section id="records" aria-labelledby="records-h">'
        '<h2 id="records-h">Live medians versus record claims</h2>'
        '<p class="note">A record claim is a best case: one stream (<em>per user</em>) or every '
        "user of a server together (<em>aggregate</em>), often at reduced precision or with "
        "speculative decoding. Beside it, the same provider's live median on the same model, the "
        "ratio of the two, and the fastest live median any provider shows on that model.</p>"
        "<table><caption>Record claims with their qualifiers</caption><thead><tr>"
        '<th scope="col">Provider, model</th><th scope="col">Claim</th>'
        '<th scope="col">Scope</th><th scope="col">Precision</th>'
        '<th scope="col">Technique</th><th scope="col">Verified by</th>'
        '<th scope="col" class="num">Live median, same provider</th>'
        '<th scope="col" class="num">Peak ÷ live</th>'
        '<th scope="col" class="num">Fastest live on model</th>'
        f"</tr></thead><tbody>{body}</tbody></table>"
        "</section>"
    )


def _listed(listed: Any) -> str:
    if not isinstance(listed, Mapping) or _number(listed.get("count")) is None:
        return _none("no catalogue")
    count = f"{int(_number(listed['count']) or 0):,}"
    refs = _list(listed.get("sources"))
    first = _dict(refs[0]) if refs else {}
    label = _link(first.get("url"), _e(count), _text(first.get("id")))
    return f"{label}<small>{_e(listed.get('scope'))}</small>"


def _platforms(platforms: Doc) -> str:
    rows = []
    for platform in map(_dict, _list(platforms.get("platforms"))):
        stated = _dict(platform.get("stated_count"))
        stated_html = f"{_e(stated.get('text'))} {_tier(stated.get('tier'))}" if stated else _none()
        notable = " · ".join(_e(n) for n in _list(platform.get("notable"))) or _none()
        refs = []
        for ref in map(_dict, _list(platform.get("sources"))):
            role = f" ({_e(ref.get('role'))})" if ref.get("role") else ""
            refs.append(f'<span class="nw">{_source(ref, with_date=False)}{role}</span>')
        rows.append(
            f'<tr data-platform="{_e(platform.get("id"))}">'
            f'<th scope="row">{_e(platform.get("name"))}'
            f'<span class="sub">{_e(platform.get("owner"))}</span></th>'
            f"<td>{_e(platform.get('kind_label') or platform.get('kind'))}</td>"
            f"<td>{stated_html}</td>"
            f"<td>{_listed(platform.get('listed_models'))}</td>"
            f"<td>{notable}</td>"
            f'<td class="links">{"<br>".join(refs) or _none()}</td>'
            "</tr>"
        )
    body = "".join(rows) or '<tr><td colspan="6" class="none">No platforms.</td></tr>'
    return (
        '<section id="platforms" aria-labelledby="platforms-h">'
        f'<h2 id="platforms-h">Model-access platforms <span class="count">· {len(rows)}</span></h2>'
        '<p class="note">Where agents get their models: managed cloud catalogues, edge hosts, '
        "gateways. The stated count is the platform's own words; where its catalogue was read, "
        "the models it lists are counted.</p>"
        "<table><caption>Platforms, their stated model counts and notable families</caption>"
        '<thead><tr><th scope="col">Platform</th><th scope="col">Kind</th>'
        '<th scope="col">Stated count</th><th scope="col">Models listed</th>'
        '<th scope="col">Notable</th><th scope="col">Sources</th></tr></thead>'
        f"<tbody>{body}</tbody></table>"
        "</section>"
    )


def _catalogue(catalog: Doc) -> str:
    platform = _dict(catalog.get("platform"))
    where = _e(platform.get("name")) or "the edge catalogue"
    total = _number(catalog.get("total"))
    calling = _number(catalog.get("function_calling"))
    sources = ", ".join(_source(ref) for ref in _list(catalog.get("sources")))
    tasks = []
    for task in map(_dict, _list(catalog.get("tasks"))):
        models = []
        for model in map(_dict, _list(task.get("models"))):
            mark = (
                ' <abbr class="fc" title="function calling">ƒ</abbr>'
                if model.get("function_calling") is True
                else ""
            )
            models.append(
                f'<li data-model="{_e(model.get("id"))}">{_e(model.get("name"))}{mark}</li>'
            )
        count = _number(task.get("count"))
        count_html = f' <span class="count">· {int(count)}</span>' if count is not None else ""
        tasks.append(
            f'<h3 data-task="{_e(task.get("name"))}">{_e(task.get("name"))}{count_html}</h3>'
            f'<ul class="models">{"".join(models)}</ul>'
        )
    heading = f"{int(total)} models on {where}" if total is not None else f"models on {where}"
    summary = (
        '<abbr class="fc" title="function calling">ƒ</abbr> marks function calling'
        + (f" ({int(calling)} of {int(total)})" if calling is not None and total else "")
        + (f". Source: {sources}" if sources else "")
        + "."
    )
    return (
        '<section id="catalogue" aria-labelledby="catalogue-h">'
        f'<h2 id="catalogue-h">Edge inference catalogue <span class="count">· {heading}</span>'
        "</h2>"
        f'<p class="note">{summary}</p>'
        f"{''.join(tasks) or _none('No catalogue in this release.')}"
        "</section>"
    )


def _provenance(documents: Mapping[str, Doc]) -> str:
    snapshots: dict[str, Mapping[str, Any]] = {}
    for name in EXPORT_FILES:
        for snapshot in map(_dict, _list(documents[name].get("snapshots"))):
            snapshots.setdefault(_text(snapshot.get("id")), snapshot)
    rows = []
    for key in sorted(snapshots):
        snapshot = snapshots[key]
        url = _text(snapshot.get("url"))
        rows.append(
            f'<tr><td class="id">{_e(key)}</td>'
            f'<td class="nw">{_e(_date(snapshot.get("retrieved_at")))}</td>'
            f"<td>{_e(snapshot.get('obtained_by'))}</td>"
            f"<td>{_link(url, _e(url)) if safe_url(url) else _none('withheld')}</td></tr>"
        )
    return (
        '<section id="provenance" aria-labelledby="provenance-h">'
        '<h2 id="provenance-h">Snapshots</h2>'
        '<p class="note">Every figure above comes from a stored snapshot of its source; the '
        "JSON exports carry each figure's snapshot, URL, tier and date.</p>"
        f"<details><summary>The {len(rows)} snapshots this release cites</summary>"
        '<table><thead><tr><th scope="col">Snapshot</th><th scope="col">Retrieved</th>'
        '<th scope="col">Obtained</th><th scope="col">URL</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></details>"
        "</section>"
    )


def _footer(version: str) -> str:
    return (
        f"<footer><p>Speedbook release {_e(version)}, built from "
        + ", ".join(f'<a href="{name}">{name}</a>' for name in EXPORT_FILES)
        + ". This page runs no script and loads nothing from elsewhere.</p></footer>"
    )
