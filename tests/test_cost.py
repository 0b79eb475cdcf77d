"""`analyze cost`: hand-built logs with known usage, priced by hand from the published prices in the test.

Every expected figure is written as the arithmetic from the price page (USD per 1,000,000 tokens), so a wrong
bucket, a wrong rate or a wrong period fails. The rates are the shipped price files' (analyzer/rules/prices/),
each checked against its source on 2026-12-07.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from analyzer.api.cost import CostOptions, cost
from analyzer.cli import main
from analyzer.cost.bill import add_breaks, bill
from analyzer.cost.prices import load_book
from analyzer.cost.text import money
from analyzer.errors import AnalyzerError
from analyzer.prefix import analyse
from analyzer.prefix.tokens import Rendered

M = 1_000_000


def row(started_at: str, usage: dict[str, Any], *, model: str, url: str = "https://api.deepseek.com/v1",
        messages: list[dict[str, Any]] | None = None, series: str = "proxy", index: int = 0) -> dict[str, Any]:
    body = {"model": model, "messages": messages or [{"role": "user", "content": "hi"}]}
    return {"schema": "analyzer.observe/1", "series": series, "index": index, "started_at": started_at,
            "usage": usage, "config": {"model": model, "url": url}, "upstream_url": url,
            "request_body": json.dumps(body)}


def deepseek_usage(hit: int, miss: int, out: int) -> dict[str, Any]:
    return {"prompt_tokens": hit + miss, "prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": miss,
            "completion_tokens": out}


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


# ---- prices ----

@pytest.mark.parametrize(("when", "period", "why"), [
    ("2026-12-07T02:00:00Z", "peak", "Monday 10:00 Beijing time, inside 09:00-12:00"),
    ("2026-12-07T04:30:00Z", "off_peak", "Monday 12:30 Beijing time, the lunch gap"),
    ("2026-12-07T09:59:00Z", "peak", "Monday 17:59 Beijing time, inside 14:00-18:00"),
    ("2026-12-07T10:00:00Z", "off_peak", "18:00 Beijing time: windows end exclusive"),
    ("2026-12-05T02:00:00Z", "off_peak", "a Saturday (weekends off-peak since 2026-08-23)"),
    ("2026-10-01T02:00:00Z", "off_peak", "Thursday 1 October: a Chinese public holiday"),
    ("2026-08-22T02:00:00Z", "peak", "a Saturday before the weekend rule: every day had peak hours"),
])
def test_deepseek_periods_follow_the_published_rule_at_each_request_time(when: str, period: str, why: str) -> None:
    q = load_book().quote("deepseek", "deepseek-v4-pro", at(when))
    assert q.period == period, why


def test_deepseek_price_history_prices_a_request_by_the_entry_in_force_then() -> None:
    book = load_book()
    before = book.quote("deepseek", "deepseek-v4-flash", at("2026-08-16T15:59:00Z"))
    after = book.quote("deepseek", "deepseek-v4-flash", at("2026-08-17T02:00:00Z"))     # Monday, peak
    later = book.quote("deepseek", "deepseek-v4-flash", at("2026-12-07T02:00:00Z"))     # served by deepseek-flash
    assert (before.period, before.rates.uncached_input, before.rates.cache_read) == (None, 0.14, 0.0028)
    assert (after.rates.uncached_input, after.rates.cache_read, after.rates.output) == (0.44, 0.014, 1.32)
    assert (later.rates.uncached_input, later.rates.cache_read, later.rates.output) == (0.30, 0.006, 1.20)
    assert "api-docs.deepseek.com" in later.source and later.checked == "2026-12-07"


def test_every_shipped_price_names_its_source_and_the_date_checked() -> None:
    book = load_book()
    assert {"deepseek", "openai", "anthropic", "gemini"} <= set(book.names())
    for prov in book.providers:
        for fam in prov.models:
            for entry in fam.entries:
                assert entry.source.startswith("https://"), (prov.provider, fam.family)
                assert entry.checked == "2026-12-07", (prov.provider, fam.family)
                assert entry.official_page_read or entry.via, (prov.provider, fam.family)


def test_a_year_without_a_holiday_list_is_said() -> None:
    q = load_book().quote("deepseek", "deepseek-v4-pro", at("2027-01-01T02:00:00Z"))
    assert any("no holiday list for 2027" in c for c in q.caveats)


def test_user_price_file_is_validated_with_one_error_line(tmp_path: Path) -> None:
    bad = tmp_path / "mine.toml"
    bad.write_text('provider = "acme"\ncurrency = "USD"\nper_tokens = 1000000\n[[model]]\nfamily = "a"\n'
                   'match = ["a*"]\n[[model.price]]\nsource = "https://x"\nchecked = 2026-12-07\n'
                   'uncached_input = 1.0\ncache_read = "cheap"\noutput = 2.0\n', encoding="utf-8")
    with pytest.raises(AnalyzerError, match=r"model\[0\] \(a\)\.price\[0\]: 'cache_read' must be a number"):
        load_book(bad)
    with pytest.raises(AnalyzerError, match="not valid TOML"):
        (tmp_path / "x.toml").write_text("provider = ", encoding="utf-8")
        load_book(tmp_path / "x.toml")


def test_user_price_file_replaces_the_shipped_provider(tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text('provider = "deepseek"\ncurrency = "USD"\nper_tokens = 1000000\n[[model]]\nfamily = "pro"\n'
                    'match = ["deepseek-v4-pro*"]\n[[model.price]]\nsource = "https://example.org/contract"\n'
                    'checked = 2026-12-01\nuncached_input = 1.0\ncache_read = 0.1\noutput = 2.0\n',
                    encoding="utf-8")
    rows = [row("2026-12-07T02:00:00Z", deepseek_usage(hit=1000, miss=3000, out=500), model="deepseek-v4-pro")]
    rep = bill(rows, load_book(mine))
    # 3,000 × $1.00 + 1,000 × $0.10 + 500 × $2.00, per million
    assert rep.total() == pytest.approx((3000 * 1.0 + 1000 * 0.1 + 500 * 2.0) / M)
    assert rep.sources() == ["https://example.org/contract (checked 2026-12-01)"]


# ---- one request of each usage shape, priced by hand ----

def test_deepseek_request_priced_by_its_own_period() -> None:
    rows = [row("2026-12-07T02:00:00Z", deepseek_usage(hit=1000, miss=3000, out=500), model="deepseek-v4-pro"),
            row("2026-12-07T05:00:00Z", deepseek_usage(hit=1000, miss=3000, out=500), model="deepseek-v4-pro")]
    rep = bill(rows, load_book())
    assert rep.provider == "deepseek" and "api.deepseek.com" in rep.provider_why
    peak, off = rep.requests
    # peak: miss 3,000 × $1.32 + hit 1,000 × $0.044 + output 500 × $3.96
    assert peak.money.total == pytest.approx((3000 * 1.32 + 1000 * 0.044 + 500 * 3.96) / M)
    assert peak.money.cache_read == pytest.approx(1000 * 0.044 / M)
    # off-peak: the page's off-peak column, $0.66 / $0.022 / $1.98
    assert off.money.total == pytest.approx((3000 * 0.66 + 1000 * 0.022 + 500 * 1.98) / M)
    # no cache: all 4,000 prompt tokens at the miss rate
    assert peak.no_cache == pytest.approx((4000 * 1.32 + 500 * 3.96) / M)
    assert rep.tokens() == {"uncached_input": 6000, "cache_read": 2000, "cache_write": 0, "output": 1000}


def test_anthropic_cache_writes_are_priced_by_their_ttl() -> None:
    usage = {"input_tokens": 200, "cache_read_input_tokens": 5000, "cache_creation_input_tokens": 1000,
             "cache_creation": {"ephemeral_5m_input_tokens": 600, "ephemeral_1h_input_tokens": 400},
             "output_tokens": 300}
    rep = bill([row("2026-12-07T02:00:00Z", usage, model="claude-sonnet-4-5-20250929",
                    url="https://api.anthropic.com/v1/messages")], load_book())
    r = rep.requests[0]
    assert rep.provider == "anthropic"
    # base input 200 × $3 + hits 5,000 × $0.30 + 5m writes 600 × $3.75 + 1h writes 400 × $6 + output 300 × $15
    assert r.money.total == pytest.approx((200 * 3 + 5000 * 0.30 + 600 * 3.75 + 400 * 6 + 300 * 15) / M)
    assert r.money.cache_write == pytest.approx((600 * 3.75 + 400 * 6) / M)
    # with no cache the 6,200 prompt tokens are all base input
    assert r.no_cache == pytest.approx((6200 * 3 + 300 * 15) / M)


def test_openai_cached_tokens_are_inside_prompt_tokens() -> None:
    usage = {"prompt_tokens": 3000, "prompt_tokens_details": {"cached_tokens": 2048}, "completion_tokens": 100}
    rep = bill([row("2026-12-07T02:00:00Z", usage, model="gpt-5.4", url="https://api.openai.com/v1")], load_book())
    r = rep.requests[0]
    # uncached 3,000 − 2,048 = 952 × $2.50 + cached 2,048 × $0.25 + output 100 × $15.00
    assert r.money.total == pytest.approx((952 * 2.50 + 2048 * 0.25 + 100 * 15.00) / M)
    assert not r.quote.official_page_read and "secondary source" in r.quote.cite()


def test_gemini_thinking_tokens_are_billed_as_output() -> None:
    usage = {"promptTokenCount": 4000, "cachedContentTokenCount": 3000, "candidatesTokenCount": 200,
             "thoughtsTokenCount": 50}
    rep = bill([row("2026-12-07T02:00:00Z", usage, model="gemini-3-flash-preview",
                    url="https://generativelanguage.googleapis.com/v1beta")], load_book())
    # uncached 1,000 × $0.50 + cached 3,000 × $0.05 + (200 + 50) output × $3.00
    assert rep.requests[0].money.total == pytest.approx((1000 * 0.50 + 3000 * 0.05 + 250 * 3.00) / M)


def test_a_local_engine_log_is_priced_as_an_assumed_provider_and_said() -> None:
    usage = {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 64}, "completion_tokens": 4}
    rep = bill([row("2026-12-07T05:00:00Z", usage, model="qwen.gguf", url="http://127.0.0.1:8080/v1")],
               load_book())
    assert rep.provider == "deepseek" and rep.provider_why.startswith("assumed")
    assert "assumed" in rep.model_why
    # priced as deepseek-flash off-peak: 36 × $0.15 + 64 × $0.003 + 4 × $0.60
    assert rep.total() == pytest.approx((36 * 0.15 + 64 * 0.003 + 4 * 0.60) / M)


# ---- breaks: the tokens a break made the provider recompute × (miss rate − hit rate) ----

class CharRenderer:
    """One token per character of the messages' contents: break positions are known by hand."""

    exact = False
    describe = "one token per character (test)"

    def render(self, body: dict[str, Any]) -> Rendered:
        prompt = "".join(m["content"] for m in body["messages"])
        return Rendered(prompt, [ord(c) for c in prompt], list(prompt))


def test_each_break_is_priced_and_grouped_by_cause() -> None:
    def msgs(stamp: str, turn: str) -> list[dict[str, Any]]:
        # the clock sits after 60 stable characters: the same agent (most of its head is shared), one changed line
        return [{"role": "system", "content": "A" * 60 + stamp + "B" * 36}, {"role": "user", "content": turn}]

    rows = [row("2026-12-07T02:00:00Z", deepseek_usage(0, 102, 10), model="deepseek-v4-pro",
                messages=msgs("0001", "hi")),
            row("2026-12-07T02:01:00Z", deepseek_usage(0, 102, 10), model="deepseek-v4-pro",
                messages=msgs("0002", "hi")),
            row("2026-12-07T02:02:00Z", deepseek_usage(0, 102, 10), model="deepseek-v4-pro",
                messages=msgs("0003", "hi"))]
    rep = bill(rows, load_book())
    add_breaks(rep, analyse(rows, renderer=CharRenderer()))
    assert [len(r.breaks) for r in rep.requests] == [0, 1, 1]
    brk = rep.requests[1].breaks[0]
    # the system prompt differs at character 63 ("0001" vs "0002" after 60 A's): 102 − 63 = 39 tokens of the
    # previous prompt recomputed, each billed at the peak miss rate $1.32 instead of the hit rate $0.044
    assert brk.recomputed == 39
    assert brk.lost == pytest.approx(39 * (1.32 - 0.044) / M)
    [cause] = rep.causes
    assert cause.breaks == 2 and cause.rows == (2, 3) and cause.cause.startswith("system changed")
    assert rep.lost_total() == pytest.approx(2 * 39 * (1.32 - 0.044) / M)


def test_cost_json_and_text_through_the_library_and_the_cli(tmp_path: Path, capsys) -> None:
    rows = [row("2026-12-07T02:00:00Z", deepseek_usage(1000, 3000, 500), model="deepseek-v4-pro"),
            row("2026-12-07T05:00:00Z", deepseek_usage(3800, 200, 500), model="deepseek-v4-pro")]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    rep = cost(rows, CostOptions(log=str(log)))
    data = rep.as_json()
    assert data["schema"] == "analyzer.cost/1"
    assert data["total"]["money"] == pytest.approx(((3000 * 1.32 + 1000 * 0.044 + 500 * 3.96)
                                                    + (200 * 0.66 + 3800 * 0.022 + 500 * 1.98)) / M)
    assert main(["cost", str(log)]) == 0
    out = capsys.readouterr().out
    assert money(rep.total()) in out and "8,000 tokens" not in out and "4,800 read from the cache" in out
    assert "api-docs.deepseek.com" in out and "checked 2026-12-07" in out
    assert main(["--json", "cost", str(log)]) == 0
    assert json.loads(capsys.readouterr().out)["total"]["tokens"]["cache_read"] == 4800


def test_cost_cli_bad_input_is_one_error_line(tmp_path: Path, capsys) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"series": "x", "started_at": "2026-12-07T02:00:00Z"}) + "\n", encoding="utf-8")
    assert main(["cost", str(log)]) == 3
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "no row of the log reports usage" in err and "Traceback" not in err
    log.write_text(json.dumps(row("2026-12-07T02:00:00Z", deepseek_usage(1, 2, 3), model="x")) + "\n",
                   encoding="utf-8")
    assert main(["cost", str(log), "--provider", "nobody"]) == 3
    assert "--provider nobody: no prices; known: anthropic, deepseek, gemini, openai" in capsys.readouterr().err
    assert main(["cost", str(log), "--prices", str(tmp_path / "missing.toml")]) == 3
    assert "cannot read it" in capsys.readouterr().err
    assert main(["cost", str(log), "--plot", str(tmp_path / "t.pdf")]) == 2


@pytest.mark.parametrize(("x", "text"), [(0.0123, "$0.0123"), (1.5, "$1.50"), (1234.5, "$1,234.50"),
                                         (0.000045, "$0.000045"), (0.5, "$0.50"), (0, "$0")])
def test_money_is_written_as_people_write_it(x: float, text: str) -> None:
    assert money(x) == text


def test_plot_draws_the_timeline_with_each_break_marked(tmp_path: Path) -> None:
    def msgs(stamp: str) -> list[dict[str, Any]]:
        return [{"role": "system", "content": "A" * 60 + stamp + "B" * 36}, {"role": "user", "content": "hi"}]

    rows = [row(f"2026-12-07T02:0{i}:00Z", deepseek_usage(0 if i != 1 else 96, 102 if i != 1 else 6, 10),
                model="deepseek-v4-pro", messages=msgs("0001" if i < 2 else "0002")) for i in range(3)]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    svg, png = tmp_path / "t.svg", tmp_path / "t.png"
    assert main(["cost", str(log), "--plot", str(svg)]) == 0
    text = svg.read_text(encoding="utf-8")
    # the one break (row 3, the system prompt) is marked B1 and explained under the chart
    assert "B1" in text and "system changed" in text and "break(s)" in text
    assert main(["cost", str(log), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_retention_whatif_counts_the_keep_warm_pings_against_recomputing_the_prefix() -> None:
    system = {"role": "system", "content": "S" * 1100}
    turns = [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"},
             {"role": "user", "content": "q2"}, {"role": "assistant", "content": "a2"},
             {"role": "user", "content": "q3"}]

    def usage(uncached: int, read: int, write: int) -> dict[str, Any]:
        return {"input_tokens": uncached, "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
                "output_tokens": 5}

    url = "https://api.anthropic.com/v1/messages"
    model = "claude-sonnet-4-5"
    rows = [row("2026-12-07T02:00:00Z", usage(2, 0, 1100), model=model, url=url, messages=[system, *turns[:1]]),
            row("2026-12-07T02:02:00Z", usage(6, 1100, 0), model=model, url=url, messages=[system, *turns[:3]]),
            row("2026-12-07T02:22:00Z", usage(10, 0, 1100), model=model, url=url, messages=[system, *turns])]
    from analyzer.cost.retention import cacheable, retention_whatif

    rep = bill(rows, load_book())
    prefix = analyse(rows, renderer=CharRenderer())
    five, hour = retention_whatif(rep, prefix).options
    assert (five.ttl, hour.ttl) == ("5m", "1h")
    # the 20-minute gap outlives the 5-minute cache: the 1,106 shared tokens are written again at $3.75 …
    assert five.gaps_over_ttl == 1 and five.cold == pytest.approx(1106 * 3.75 / M)
    # … or kept warm by pings every 4.5 minutes (0.9 × TTL): ceil(20 / 4.5) − 1 = 4 pings, each reading the
    # prefix at $0.30 plus one new token written at $3.75 and one output token at $15, then the request reads it
    assert five.pings == 4
    assert five.warm == pytest.approx((4 * (1106 * 0.30 + 3.75 + 15) + 1106 * 0.30) / M)
    assert five.pays
    # a 1-hour cache outlives every recorded gap
    assert hour.gaps_over_ttl == 0 and hour.pings == 0
    # the cache model's rule for Sonnet caches nothing below 1,024 tokens: a shorter prefix is not worth keeping
    assert cacheable("anthropic", model, 1000) == 0 and cacheable("anthropic", model, 1106) == 1106


def test_retention_without_a_priced_ttl_says_so() -> None:
    rows = [row("2026-12-07T02:00:00Z", deepseek_usage(0, 100, 1), model="deepseek-v4-pro"),
            row("2026-12-07T03:00:00Z", deepseek_usage(64, 40, 1), model="deepseek-v4-pro")]
    rep = cost(rows, CostOptions(whatif_retention=True))
    assert rep.whatif is not None
    data = rep.whatif["retention"]
    assert data["options"] == [] and "pass --ttl" in data["note"]


# ---- the fix what-if: the recorded requests rewritten, both versions through the cache model ----

def test_fixes_rewrite_a_copy_of_the_body() -> None:
    from analyzer.cost.fixes import apply_fixes, parse_fix

    body = {"messages": [{"role": "system", "content": "Be brief.\nNow: 10:42\nUse tools."},
                         {"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "write"}},
                      {"type": "function", "function": {"name": "read"}}]}
    fixed, said = apply_fixes(body, [parse_fix("sort-tools"), parse_fix("move-last:^Now:")])
    assert [t["function"]["name"] for t in fixed["tools"]] == ["read", "write"]
    assert fixed["messages"][0]["content"] == "Be brief.\nUse tools."
    assert fixed["messages"][-1]["content"] == "hi\n\nNow: 10:42"
    assert len(said) == 2 and body["messages"][0]["content"].startswith("Be brief.\nNow:")   # the original kept
    fixed, _ = apply_fixes(body, [parse_fix("replace:[0-9]{2}:[0-9]{2}=HH:MM")])
    assert fixed["messages"][0]["content"] == "Be brief.\nNow: HH:MM\nUse tools."
    anthropic = {"system": "Stable.\nsession 7f3a\nMore.", "messages": [{"role": "user", "content": "q"}]}
    fixed, _ = apply_fixes(anthropic, [parse_fix("move-end:^session")])
    assert fixed["system"] == "Stable.\nMore.\nsession 7f3a"


def test_fix_whatif_gain_comes_from_the_cache_model_and_the_prices() -> None:
    from analyzer.cost.fixes import parse_fix
    from analyzer.cost.fixsim import fix_whatif

    def msgs(stamp: str) -> list[dict[str, Any]]:
        return [{"role": "system", "content": stamp + "A" * 1496}, {"role": "user", "content": "hi"}]

    usage = {"prompt_tokens": 1502, "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens": 10}
    rows = [row(f"2026-12-07T02:0{i}:00Z", usage, model="gpt-5.4", url="https://api.openai.com/v1",
                messages=msgs(f"{i:04d}")) for i in range(3)]
    rep = bill(rows, load_book())
    result = fix_whatif(rows, rep, [parse_fix("replace:^[0-9]{4}=XXXX")], renderer=CharRenderer(), rule="openai")
    # as recorded the prompts differ at their 4th token: nothing cached. Fixed, requests 2 and 3 repeat request
    # 1's 1,502 tokens; OpenAI's rule (the cache model's openai.toml) counts 1,024 plus whole 128-token steps:
    # 1,024 + (1,502 − 1,024) // 128 × 128 = 1,408 cached tokens each
    assert [r.recorded.cached for r in result.rows] == [0, 0, 0]
    assert [r.fixed.cached for r in result.rows] == [0, 1408, 1408]
    assert result.cached_gain() == 2 * 1408
    # each cached token is billed at $0.25 instead of $2.50 (gpt-5.4)
    assert result.money_gain() == pytest.approx(2 * 1408 * (2.50 - 0.25) / M)


def test_a_bad_fix_is_one_error_line(tmp_path: Path, capsys) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(row("2026-12-07T02:00:00Z", deepseek_usage(1, 2, 3), model="deepseek-v4-pro")) + "\n",
                   encoding="utf-8")
    assert main(["cost", str(log), "--fix", "shuffle"]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "expected sort-tools, replace:REGEX=TEXT" in err
    assert main(["cost", str(log), "--fix", "replace:([=x"]) == 2
    assert "is not a regular expression" in capsys.readouterr().err


@pytest.mark.parametrize(("lang", "heading", "saved"), [("en", "**Direct observation", "the cache saved"),
                                                         ("zh", "**直接观察", "缓存节省了")])
def test_cost_record_states_the_figures_with_their_price_sources(tmp_path: Path, lang: str, heading: str,
                                                                  saved: str) -> None:
    rows = [row("2026-12-07T02:00:00Z", deepseek_usage(1000, 3000, 500), model="deepseek-v4-pro"),
            row("2026-12-07T05:00:00Z", deepseek_usage(3800, 200, 500), model="deepseek-v4-pro")]
    from analyzer.cost.record import record_markdown

    rep = cost(rows, CostOptions())
    text = record_markdown(rep, lang)
    saved_money = money(rep.no_cache_total() - rep.total())
    assert heading in text and saved in text and saved_money in text
    assert "https://api-docs.deepseek.com/quick_start/pricing" in text and "checked 2026-12-07" in text
    log, out = tmp_path / "log.jsonl", tmp_path / f"record.{lang}.md"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["cost", str(log), "--record", str(out), "--lang", lang]) == 0  # the command writes that record
    assert out.read_text(encoding="utf-8") == record_markdown(cost(rows, CostOptions(log=str(log))), lang)


def test_an_experiment_log_is_priced_per_series(capsys, tmp_path: Path) -> None:
    rows = [row("2026-12-07T05:00:00Z", deepseek_usage(0, 4000, 10), model="deepseek-v4-pro", series="control"),
            row("2026-12-07T05:01:00Z", deepseek_usage(3840, 160, 10), model="deepseek-v4-pro", series="control"),
            row("2026-12-07T05:02:00Z", deepseek_usage(0, 4000, 10), model="deepseek-v4-pro", series="treatment"),
            row("2026-12-07T05:03:00Z", deepseek_usage(0, 4000, 10), model="deepseek-v4-pro", series="treatment")]
    rep = bill(rows, load_book())
    series = rep.by_series()
    # off-peak: the treatment's second request misses the 3,840 tokens the control read at $0.022 instead of $0.66
    assert series["treatment"]["money"] - series["control"]["money"] == pytest.approx(3840 * (0.66 - 0.022) / M)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["cost", str(log)]) == 0
    out = capsys.readouterr().out
    assert f"the treatment cost {money(3840 * (0.66 - 0.022) / M)} more than the control (3,840 fewer" in out


def test_a_clock_at_the_top_of_the_system_prompt_is_a_break_and_a_side_call_is_not() -> None:
    def msgs(system: str) -> list[dict[str, Any]]:
        return [{"role": "system", "content": system}, {"role": "user", "content": "hi"}]

    rows = [row("2026-12-07T02:00:00Z", deepseek_usage(0, 102, 10), model="deepseek-v4-pro",
                messages=msgs("0001" + "A" * 96)),
            row("2026-12-07T02:01:00Z", deepseek_usage(0, 102, 10), model="deepseek-v4-pro",
                messages=msgs("0002" + "A" * 96)),
            # a side call: another prompt altogether (a title generator), not the same agent
            row("2026-12-07T02:02:00Z", deepseek_usage(0, 102, 10), model="deepseek-v4-pro",
                messages=msgs("Write a title for this conversation, five words at most. " + "x" * 42))]
    rep = bill(rows, load_book())
    prefix = analyse(rows, renderer=CharRenderer())
    add_breaks(rep, prefix)
    assert [len(r.breaks) for r in rep.requests] == [0, 1, 0]
    brk = rep.requests[1].breaks[0]
    # "0001…" vs "0002…": 3 characters (tokens) shared, 102 − 3 = 99 recomputed at $1.32 instead of $0.044 (peak)
    assert brk.recomputed == 99 and brk.lost == pytest.approx(99 * (1.32 - 0.044) / M)
    assert brk.cause.startswith("system changed") and "conversation 1" in brk.rate_why


def test_the_record_of_an_experiment_log_names_its_factor_and_prices_each_series() -> None:
    from analyzer.cost.record import record_markdown

    rows = [row("2026-12-07T05:00:00Z", deepseek_usage(0, 4000, 10), model="deepseek-v4-pro", series="control"),
            row("2026-12-07T05:02:00Z", deepseek_usage(0, 4000, 10), model="deepseek-v4-pro", series="treatment")]
    rows[0].update(factor="env", value="A", experiment="demo")
    rows[1].update(factor="env", value="B", experiment="demo")
    text = record_markdown(bill(rows, load_book()), "en")
    assert "the experiment demo varies env — control: A; treatment: B" in text
    # each series: 4,000 uncached tokens at the off-peak $0.66 and 10 output tokens at $1.98
    assert f"series treatment: {money((4000 * 0.66 + 10 * 1.98) / M)} for 1 requests" in text


@pytest.mark.parametrize(("lang", "said"), [("en", "the treatment cost {m} more than the control (3,000 fewer tokens "
                                                    "read from the cache)"),
                                            ("zh", "处理组比对照组多花 {m}（读自缓存的 token 少 3,000 个）")])
def test_the_record_says_what_the_treatment_cost_beyond_the_control(lang: str, said: str) -> None:
    from analyzer.cost.record import record_markdown

    rows = [row("2026-12-07T05:00:00Z", deepseek_usage(3000, 1000, 10), model="deepseek-v4-pro", series="control"),
            row("2026-12-07T05:06:00Z", deepseek_usage(0, 4000, 10), model="deepseek-v4-pro", series="treatment")]
    for r in rows:
        r.update(factor="interval", value="0", experiment="demo")
    # off-peak: the treatment computes 3,000 more tokens at $0.66 instead of reading them at $0.022
    m = money(3000 * (0.66 - 0.022) / M)
    assert said.format(m=m) in record_markdown(bill(rows, load_book()), lang)
