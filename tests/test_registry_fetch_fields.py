"""The registry's fetch fields: where a source's API key comes from and how it is sent, and what a
poll source asks for. Each bad value is refused naming the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.raw.bundle import MAX_MEMBERS
from pipeline.sources.registry import RegistryError, load_registry, model_id_problem

MODEL_LIST = """
[[source]]
id = "openrouter"
kind = "platform_doc"
publisher = "OpenRouter"
url = "https://openrouter.ai/api/v1/models"
tier = "T1"
format = "openrouter_models"
cadence = "weekly"
"""
POLL = """
[[source]]
id = "endpoints"
kind = "benchmark"
publisher = "OpenRouter"
url = "https://openrouter.ai/api/v1/models"
tier = "T1"
format = "openrouter_endpoints"
cadence = "half_hourly"
poll_path = "{model}/endpoints"
models_from = "openrouter"
api_key_env = "OPENROUTER_API_KEY"
api_key_header = "Authorization"
api_key_prefix = "Bearer "
api_key_required = false
"""


def load(tmp_path: Path, text: str):
    path = tmp_path / "sources.toml"
    path.write_text(MODEL_LIST + text, encoding="utf-8")
    return load_registry(path)


def test_a_poll_entry_loads(tmp_path):
    source = load(tmp_path, POLL)["endpoints"]
    assert source.polls and source.models_from == "openrouter" and source.models == ()
    assert (source.api_key_env, source.api_key_header, source.api_key_prefix) == (
        "OPENROUTER_API_KEY",
        "Authorization",
        "Bearer ",
    )
    assert source.api_key_required is False and source.max_models is None
    assert source.member_url("deepseek/deepseek-v4-flash") == (
        "https://openrouter.ai/api/v1/models/deepseek/deepseek-v4-flash/endpoints"
    )
    assert source.member_url("acme/a b#c") == (
        "https://openrouter.ai/api/v1/models/acme/a%20b%23c/endpoints"
    )
    listed = load(
        tmp_path,
        POLL.replace('models_from = "openrouter"', 'models = ["a/b", "c/d:free"]\nmax_models = 1'),
    )["endpoints"]
    assert listed.models == ("a/b", "c/d:free") and listed.max_models == 1
    plain = load(tmp_path, "")["openrouter"]
    assert not plain.polls and not plain.api_key_env and plain.api_key_required


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'api_key_env = "OPENROUTER_API_KEY"\n',
            "",
            "api_key_header, api_key_prefix, api_key_required without api_key_env",
        ),
        (
            'api_key_env = "OPENROUTER_API_KEY"',
            'api_key_env = "openrouter key"',
            "is not an environment variable name",
        ),
        ('api_key_header = "Authorization"\n', "", "api_key_env needs api_key_header"),
        (
            'api_key_header = "Authorization"',
            'api_key_header = "Auth: x"',
            "is not an HTTP header name",
        ),
        ('api_key_prefix = "Bearer "', 'api_key_prefix = "Bearer\\n"', "printable ASCII"),
        ("api_key_required = false", 'api_key_required = "no"', "must be true or false"),
        ('poll_path = "{model}/endpoints"', 'poll_path = "endpoints"', "must hold {model} once"),
        (
            'poll_path = "{model}/endpoints"',
            'poll_path = "{model}/{model}"',
            "must hold {model} once",
        ),
        (
            'poll_path = "{model}/endpoints"',
            'poll_path = "/{model}/endpoints"',
            "is not a relative URL path",
        ),
        (
            'poll_path = "{model}/endpoints"',
            'poll_path = "{model}/endpoints?x=1"',
            "is not a relative URL path",
        ),
        ('poll_path = "{model}/endpoints"\n', "", "models_from without poll_path"),
        (
            'models_from = "openrouter"',
            'models_from = "nowhere"',
            "models_from 'nowhere' is not another source of the registry",
        ),
        (
            'models_from = "openrouter"',
            'models_from = "endpoints"',
            "models_from 'endpoints' is not another source of the registry",
        ),
        ('models_from = "openrouter"\n', "", "a poll needs exactly one of models and models_from"),
        (
            'models_from = "openrouter"',
            'models_from = "openrouter"\nmodels = ["a/b"]',
            "a poll needs exactly one of models and models_from",
        ),
        ('models_from = "openrouter"', "models = []", "models is empty"),
        ('models_from = "openrouter"', 'models = "a/b"', "must be lists"),
        ('models_from = "openrouter"', 'models = ["a/b", "a/b"]', "lists a model twice"),
        ('models_from = "openrouter"', 'models = ["a/b/c"]', "is not of the form author/slug"),
        ('models_from = "openrouter"', 'models = ["../x"]', "is not of the form author/slug"),
        ('models_from = "openrouter"', "models = [3]", "is not text"),
        (
            'models_from = "openrouter"',
            'models_from = "openrouter"\nmax_models = 0',
            f"max_models must be 1 to {MAX_MEMBERS:,}",
        ),
        (
            'models_from = "openrouter"',
            'models_from = "openrouter"\nmax_models = true',
            "must be whole numbers",
        ),
        (
            'format = "openrouter_endpoints"',
            'format = "openrouter_providers"',
            "does not read bundles of responses",
        ),
        (
            'url = "https://openrouter.ai/api/v1/models"\ntier',
            'url = "https://openrouter.ai/api/v1/models?page=1"\ntier',
            "a poll's url takes no query or fragment",
        ),
    ],
)
def test_a_bad_fetch_field_is_refused_naming_the_entry(tmp_path, old, new, message):
    assert old in POLL
    with pytest.raises(RegistryError) as error:
        load(tmp_path, POLL.replace(old, new))
    assert message in str(error.value)
    assert "source #2 ('endpoints')" in str(error.value)


def test_model_id_rule():
    assert model_id_problem("~anthropic/claude-haiku-latest") is None
    assert model_id_problem("inclusionai/ring-2.6-1t:free") is None
    assert model_id_problem("a /b") == "holds a space or a control character"
    assert model_id_problem("a/" + "b" * 300) == "is not 1 to 200 characters"
    assert model_id_problem("a/..") == "is not of the form author/slug"
