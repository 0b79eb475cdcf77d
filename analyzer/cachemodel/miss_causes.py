"""Why the server reported another cached count than the model predicted: the likely cause, named.

Order matters: what the log itself explains (an entry the model dropped, an expired TTL, a restart, the
previous answer's tokens, a floor) comes first; "requests the log does not show" only when nothing in the
log explains the difference.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.cachemodel.model import Match


@dataclass(frozen=True)
class Cause:
    kind: str        # eviction | other-slot | restart | ttl | routing | minimum | granularity | answer-tokens
    #                  | unseen | estimate | state-gap
    text: str


def within(predicted: int, reported: int, *, tokens: int = 8, share: float = 0.02) -> bool:
    """The issue's tolerance: predicted within max(8 tokens, 2%) of reported."""
    return abs(reported - predicted) <= max(tokens, share * max(reported, predicted))


def explain(match: Match, reported: int | None, *, previous_output: int | None = None, exact: bool = True,
            engine: bool = True, step: int = 1, minimum: int = 0) -> Cause | None:
    """The likely cause of `reported` ≠ `match.cached`, or None when they agree (within tolerance). `step` and
    `minimum`: the rule's granularity and minimum prefix, for a server that counts in other steps or caches
    from a higher floor than its documentation says."""
    if reported is None or within(match.cached, reported):
        return None
    diff = reported - match.cached
    if not exact:
        note = "; the tokens here are estimates, so the prediction is too"
    else:
        note = ""
    if diff > 0:
        for x in match.lost:
            if x.shared >= reported - max(8, reported // 50):
                return Cause(x.why, f"row {x.key} shares {x.shared:,} tokens and the model had dropped it "
                                     f"({x.detail}); the server still held it{note}")
        if match.best_key is not None and match.best_shared >= reported - max(8, reported // 50):
            where = "another slot or the host prompt cache" if engine else "the provider's cache"
            return Cause("other-slot" if engine else "eviction",
                         f"row {match.best_key} shares {match.best_shared:,} tokens: {where} still held it while "
                         f"the model had it matched elsewhere{note}")
        if previous_output and match.entry is not None and diff <= previous_output + 1:
            return Cause("answer-tokens", f"the slot also held row {match.entry}'s {previous_output:,} generated "
                                          f"tokens and this prompt repeats {diff:,} of them")
        return Cause("unseen", f"no request in the log shares {reported:,} tokens with this one: requests the log "
                               f"does not show (an earlier run, another client){note}")
    # the server gave less than predicted: what the log shows first (overflowing a prefix's machines), then
    # the rule's own numbers, then what the log cannot show
    overflow = next((x for x in match.lost if x.why == "routing" and x.key == match.entry), None)
    if overflow is not None:
        return Cause("routing", f"{overflow.detail}{note}")
    if step > 1 and -diff < step:
        return Cause("granularity", f"{-diff:,} tokens fewer, less than one {step}-token step: the server rounds in "
                                    f"other steps than the rule's{note}")
    if not engine and reported == 0 and minimum and match.cached < 4 * minimum:
        return Cause("minimum", f"nothing cached although {match.cached:,} tokens are over the documented "
                                f"{minimum:,}-token minimum: the server's floor may be higher for this model{note}")
    if engine:
        return Cause("state-gap", f"the server did not hold row {match.entry}'s state the model expected "
                                  f"(a restart, a slot the log cannot see, or eviction under memory pressure){note}")
    return Cause("eviction", f"the provider had dropped the entry the model expected (eviction or expiry before "
                             f"the documented TTL; best-effort caches){note}")
