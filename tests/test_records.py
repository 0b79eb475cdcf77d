"""Shared research records: the 8-field template in both languages, sentence files, and attention's port."""

from __future__ import annotations

import collections
import re

import pytest

from analyzer.cli import main
from analyzer.records import FIELD_KEYS, LANGS, MissingSentence, Record, features, render_markdown, sentences
from analyzer.records.i18n import DATA_DIR

ZH_HEADINGS = ("问题", "来源与版本", "输入与配置", "本次只改变", "直接观察", "我的解释", "尚未排除", "下一次只验证")


@pytest.mark.parametrize("feature", features())
def test_every_key_and_placeholder_exists_in_both_languages(feature: str) -> None:
    tables = {lang: sentences(feature, lang) for lang in LANGS}
    keys = {lang: set(t) for lang, t in tables.items()}
    assert keys["en"] == keys["zh"], f"{feature}: keys only in one language: {keys['en'] ^ keys['zh']}"
    for key in keys["en"]:
        assert tables["en"].placeholders(key) == tables["zh"].placeholders(key), f"{feature}.{key}"


def test_sentence_files_ship_for_every_feature_in_every_language() -> None:
    names = {p.name for p in DATA_DIR.glob("*.toml")}
    for feature in features():
        assert {f"{feature}.{lang}.toml" for lang in LANGS} <= names
    assert {"record", "attention"} <= set(features())


def test_missing_key_and_missing_value_fail_with_the_file_named() -> None:
    s = sentences("attention", "zh")
    with pytest.raises(MissingSentence, match=r"'no.such.key'.*attention\.zh\.toml"):
        s["no.such.key"]
    with pytest.raises(MissingSentence, match=r"needs a value for 'n'"):
        s.format("append.inputs", model="m")
    with pytest.raises(Exception, match="unknown record language 'fr'"):
        sentences("attention", "fr")


def test_render_markdown_uses_the_headings_of_the_language() -> None:
    rec = Record("T", "q", "s", "i", "c", ["o1", "o2"], "e", "n", "x")
    zh = render_markdown([rec], "zh", "标题")
    assert zh.startswith("# 标题\n\n## T\n")
    for head in ZH_HEADINGS:
        assert f"**{head}:**" in zh
    assert "Question" not in zh and "- o1\n- o2" in zh
    en = render_markdown([rec], "en", "Title")
    assert "**Question (问题):** q" in en and "**Next check (下一次只验证):** x" in en
    assert [k for k in FIELD_KEYS] == ["question", "sources", "inputs", "changed", "observations", "interpretation",
                                       "not_ruled_out", "next_check"]


def _numbers(text: str) -> collections.Counter[str]:
    return collections.Counter(re.findall(r"\d[\d,.]*\d|\d", text))


def test_attention_record_in_chinese_keeps_every_number() -> None:
    from analyzer.api.attention import AttentionOptions, attention
    from analyzer.attention.config import ModelConfig

    en_text, zh_text = (attention(ModelConfig(), AttentionOptions(length=12, verify_max=200, lang=lang)).markdown()
                        for lang in ("en", "zh"))
    assert zh_text.startswith("# 第 1 轮研究记录") and zh_text.count("**问题:**") == 7
    for head in ZH_HEADINGS:
        assert f"**{head}:**" in zh_text
    assert "Question (问题)" not in zh_text and "cached tokens" not in zh_text
    assert _numbers(en_text) == _numbers(zh_text)
    assert "第 1 层：6；第 2 层：6–11" in zh_text and "layer 1: 6; layer 2: 6–11" in en_text


def test_unknown_language_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["attention", "append", "--record", "--lang", "fr"])
    assert exc.value.code == 2
    assert "invalid choice: 'fr'" in capsys.readouterr().err
