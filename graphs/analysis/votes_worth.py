"""What a panel's votes are worth: each judge's errors, how they go together, and the fewest judges
that decide as the whole panel does (pure functions over judged versions).

- A judge's *error* on a version is its vote against the version's label: passing a flawed version
  or a twin, failing a sound one (control, corrected version, paraphrase). Its error rate is a share
  of the decided versions it voted on, with its Wilson 95 % interval.
- Two judges' errors go together by the phi coefficient of their error indicators over the versions
  both voted on: (n11·n00 − n10·n01) / √(n1·· n0·· n·1 n·0), undefined (None) when either judge
  never or always erred there.
- The panel's effective number of independent votes is Kish's design-effect form
  n_eff = m / (1 + (m − 1)·ρ̄), with m the judges that voted and ρ̄ the mean of the defined pairwise
  phis. A negative ρ̄ is read as 0 (independent votes): the panel is never said to be worth more
  than its m judges. Seven judges of one model that err together are worth about one vote.
- The smallest subset: every subset of the judges re-decides each version alone (its votes scored by
  the same policy, the quorum scaled to its size, the verifier's gate and a hold kept as they were),
  and the first, by size, whose false-accept and specificity intervals both overlap the full
  panel's re-decided ones is named: what the other calls add is within the measurement's error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations
from statistics import fmean
from typing import Any

from graphs.analysis.judged import Judged
from graphs.analysis.validity_metrics import share
from graphs.scoring import ScoringPolicy, is_pass, score_round

_OWN = "it may prefer its own work"
_SOUND = ("control", "corrected", "paraphrase")
_FLAWED = ("flawed", "twin")


def errors_of(judged: Sequence[Judged], judge: str) -> dict[int, bool]:
    """Index of each decided version ``judge`` voted on → whether its vote went against the label."""
    out: dict[int, bool] = {}
    for index, j in enumerate(judged):
        vote = next((v for v in j.votes if v.judge == judge), None)
        if j.decided and vote is not None and vote.passed is not None:
            out[index] = vote.passed != j.should_pass
    return out


def phi(a: dict[int, bool], b: dict[int, bool]) -> float | None:
    """The phi coefficient of two error indicators over the versions both have (None: undefined)."""
    both = sorted(a.keys() & b.keys())
    n11 = sum(a[i] and b[i] for i in both)
    n10 = sum(a[i] and not b[i] for i in both)
    n01 = sum(b[i] and not a[i] for i in both)
    n00 = len(both) - n11 - n10 - n01
    margins = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    return None if margins == 0 else (n11 * n00 - n10 * n01) / math.sqrt(margins)


def effective_votes(m: int, mean_phi: float | None) -> float | None:
    """Kish's n_eff = m / (1 + (m − 1)·ρ̄), a negative ρ̄ read as 0 (None: ρ̄ unknown)."""
    if m == 0 or mean_phi is None:
        return None
    return m / (1 + (m - 1) * max(mean_phi, 0.0))


def passes_with(j: Judged, judges: frozenset[str], policy: ScoringPolicy) -> bool:
    """Whether ``judges`` alone would let the version through: their votes scored by ``policy`` (its
    quorum scaled to the subset's size), the verifier's gate and a hold standing as they were."""
    if j.gate or j.held:
        return False
    votes = [v for v in j.votes if v.judge in judges]
    quorum = math.ceil(policy.quorum * len(votes) / max(len(j.votes), 1))
    return is_pass(score_round(votes, replace(policy, quorum=quorum)).quality, policy)


def _rates(decided: Sequence[Judged], judges: frozenset[str], policy: ScoringPolicy) -> dict[str, Any]:
    return {
        "false_accept": share([passes_with(j, judges, policy) for j in decided if j.version in _FLAWED]),
        "specificity": share([passes_with(j, judges, policy) for j in decided if j.version in _SOUND]),
    }


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if not a["n"] or not b["n"]:
        return bool(a["n"] == b["n"])
    return bool(a["low"] <= b["high"] and b["low"] <= a["high"])


def smallest_subset(
    decided: Sequence[Judged], judges: Sequence[str], policy: ScoringPolicy
) -> dict[str, Any]:
    """The fewest judges whose re-decided false-accept and specificity intervals overlap the full
    panel's (ties: the lowest false-accept rate, then the judges' order)."""
    full = _rates(decided, frozenset(judges), policy)
    for size in range(1, len(judges) + 1):
        found = []
        for subset in combinations(judges, size):
            rates = _rates(decided, frozenset(subset), policy)
            if all(_overlap(rates[key], full[key]) for key in full):
                found.append((rates["false_accept"]["rate"] or 0.0, list(subset), rates))
        if found:
            _, chosen, rates = min(found, key=lambda row: row[0])
            return {"judges": chosen, "size": size, **rates, "full": full}
    return {"judges": list(judges), "size": len(judges), **full, "full": full}


def votes_worth(judged: Sequence[Judged], policy: ScoringPolicy, split: str = "all") -> dict[str, Any]:
    """Per judge error rates, pairwise error correlations, n_eff and the smallest sufficient subset."""
    subset = [j for j in judged if split == "all" or j.split == split]
    decided = [j for j in subset if j.decided]
    judges = list(dict.fromkeys(v.judge for j in decided for v in j.votes))
    errors = {judge: errors_of(decided, judge) for judge in judges}
    voting = [judge for judge in judges if errors[judge]]
    pairs = [
        {"judges": [a, b], "n": len(errors[a].keys() & errors[b].keys()), "phi": phi(errors[a], errors[b])}
        for a, b in combinations(voting, 2)
    ]
    defined = [float(p["phi"]) for p in pairs if isinstance(p["phi"], float)]
    mean_phi = fmean(defined) if defined else None
    return {
        "split": split,
        "judges": {judge: share(list(errors[judge].values())) for judge in judges},
        "pairs": pairs,
        "mean_phi": mean_phi,
        "m": len(voting),
        "n_eff": effective_votes(len(voting), mean_phi),
        "smallest_subset": smallest_subset(decided, judges, policy) if voting else None,
    }


def family(model_id: str) -> str:
    """A model id's family: its name's leading letters after any owner prefix ('gpt-4o' → 'gpt',
    'meta-llama/Llama-3.1-8B' → 'llama', 'qwen2.5:7b' → 'qwen')."""
    name = model_id.rsplit("/", 1)[-1].casefold()
    letters = ""
    for char in name:
        if not char.isalpha():
            break
        letters += char
    return letters or name


def self_preference(judge_ids: Sequence[str], under_test_ids: Sequence[str]) -> list[str]:
    """One warning per model under test's id that a judge model id is, or shares the family of."""
    warnings = []
    for tested in dict.fromkeys(under_test_ids):
        same = [judge for judge in judge_ids if judge.casefold() == tested.casefold()]
        kin = [judge for judge in judge_ids if family(judge) == family(tested)]
        if same:
            warnings.append(
                f"the judge model {same[0]!r} is the model under test: it may prefer its own work"
            )
        elif kin:
            warnings.append(
                f"the judge model {kin[0]!r} is of the same family ({family(tested)}) as the model under "
                f"test {tested!r}: it may prefer that family's work"
            )
    return warnings
