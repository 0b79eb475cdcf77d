"""Numbers in the usage text output are written as a person reads them; the JSON keeps the raw value."""

from analyzer.usage.wording import value_text


def test_a_cost_sum_loses_its_binary_noise_in_text() -> None:
    raw = 1040 * 0.28 / 1e6  # what the replayed upstream computes for a cache-miss cost
    assert repr(raw) == "0.00029120000000000003"
    assert value_text(raw) == "0.0002912"


def test_other_values_keep_javascript_spelling() -> None:
    assert value_text(3.0) == "3"
    assert value_text(1e20) == "100000000000000000000"
    assert value_text(1.5e-7) == "1.5e-7"
    assert value_text(0.00075208) == "0.00075208"
    assert value_text(None) == "null"
    assert value_text(float("nan")) == "NaN"
