"""A panel's identity: everything that decides whether the panel accepts a version.

A validity record measures one exact panel; a warrant is only as good as the match between the
panel that gave an acceptance and the panel that was measured. So the identity holds the judge
model (its registry name, the model id asked of the endpoint, the model id the endpoint *reports*
in its replies with the identity of the model file it serves where it says one (``agents/serverinfo``:
another file behind the same alias is another panel), where the endpoint is, the sampling settings,
the reply bounds, how JSON is asked for and how often a malformed reply is asked again), the
version of every prompt the panel sends (or, for the offline panel, a hash of its checks' source),
the solver, the deterministic verifier
that gates every panel, the scoring policy with its parameters, the version of the code that turns
verdicts into a decision, and the thinkloop version. Its id is a hash of all of it: change any one
part and the panel is a new, unmeasured one.

The reported model id is known only once the endpoint has answered: a bench's identity is computed
after its calls (every call must report the same id), a run's when its round is scored (from that
round's judge and solver replies). :class:`Warrants` holds, before a run, the records of every
reported id its configured panel was measured under, so the round's reported id picks its warrant.
A model-backed panel whose endpoint never answered has no reported id and matches no record.

What the identity covers of the code. An acceptance is decided by code as much as by the model: the
code that writes what the panel is asked, reads its replies (structured output, reasoning, the
normalised wire format, the parse and its retries), compares the solver's answer with the stated
one, rejects degenerate verdicts, gates on the verifier, scores and decides. The identity hashes the
source of every such module (``code``: :data:`DECISION_MODULES` of agents; ``verifier``:
agents/verify; ``checks``: agents/rubric for the offline panel; ``decision``: the graphs modules
named in ``graphs.decision``), byte for byte, comments included, so an edited install never inherits
a record. A module a run executes that decides nothing stays out (:data:`OUTSIDE_THE_DECISION`, each
with its reason): transport, rate limits, usage counting, the reviser (the model under test, whose
versions the panel judges). Hashing those would make every transport fix a new, unmeasured panel.
tests/agents/test_identity_coverage.py runs versions through the loop, lists the project modules
whose code ran, and fails when one is in neither list.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from agents.llm.models import CallKind, ModelSpec
from prompts import load_prompt

# The prompts a model-backed panel sends: the seven judges and the solver. (The reviser's prompts
# belong to the model under test, which the panel judges, not to the panel.)
_LEVELS = ("remember", "understand", "apply", "analyze", "evaluate", "create", "holistic")
JUDGE_PROMPTS = tuple(f"judge_{name}" for name in _LEVELS)
SOLVER_PROMPT = "solver"
# max_rounds bounds the loop; it never decides whether one version is accepted (the bench judges
# each version once), so it is left out and a panel measured once serves any round limit.
_NOT_IDENTITY = frozenset({"max_rounds"})
# The kinds of call a panel makes (the reviser's belong to the model under test).
_PANEL_CALLS: tuple[CallKind, ...] = ("judge", "solver")
NO_WARRANT: dict[str, Any] = {"status": "none"}
# The modules of agents/ whose code can change an acceptance, besides the verifier (its own part):
# what the panel is asked (fencing, judges, solver), how a reply is read (llm/client: the parse and
# its retries; llm/structured, llm/reasoning, llm/wire: the JSON asked for, the reasoning split off,
# the reply normalised; schemas and llm/calls: what a verdict, a solution or a failed call may
# hold; outcome: the words a decision is), the solver comparison (answers), the degenerate-verdict
# checks (judges) and which judges form the panel (panel). Their source is the identity's ``code``
# part.
DECISION_MODULES = (
    "answers",
    "fencing",
    "judges",
    "llm/calls",
    "llm/client",
    "llm/reasoning",
    "llm/structured",
    "llm/wire",
    "outcome",
    "panel",
    "schemas",
    "solver",
)
# The modules of agents/ a run executes that decide no acceptance, and why they stay out of the
# identity (hashing them would make every transport fix an unmeasured panel).
OUTSIDE_THE_DECISION: dict[str, str] = {
    "llm/attempts": "counts the attempts of each call, for the usage report",
    "llm/connections": "connection pools and timeouts: whether a reply arrives, never what it decides",
    "identity": "names the panel; the warrant a deployment requires is not the panel's",
    "llm/lanes": "which queue a call waits in",
    "llm/models": "the registry: the values of it that decide (model, sampling, reply bounds, JSON mode, "
    "parse retries) are parts of the identity",
    "probe": "the endpoint check: the JSON mode it finds is asked for by llm and structured",
    "llm/ratelimit": "provider rate limits: when a call is sent, never what its reply decides",
    "llm/retrying": "the back-off between attempts of a failed call",
    "reviser": "the model under test: it writes the versions the panel judges",
    "revision_check": "whether the model under test revised: a reply it refuses is never judged, and "
    "no version the panel judges is decided by it",
    "llm/serverinfo": "what a server says of itself: its slots, and the model file whose identity joins the "
    "reported model id (which is a part of the identity)",
    "simulator": "the project's stand-in endpoint (tests and demos), not part of thinkloop's decision",
    "llm/slots": "how many calls a server takes at once",
    "llm/timeouts": "how long a call may take to begin and to continue, never what it decides",
    "labelled": "the labelled sets and the bench's reading of them: it measures the panel, and its "
    "figures are stored in the record",
}


@dataclasses.dataclass(frozen=True)
class PanelIdentity:
    """The parts of a panel's identity; :attr:`id` is their stable hash."""

    judge_model: str
    model: str | None  # the model id asked of the endpoint; None for the offline panel
    # The model id the endpoint reported in its replies ("" when they named none); None for the
    # offline panel, and for a model-backed panel whose endpoint has not answered (it matches nothing).
    reported_model: str | None
    endpoint: str | None  # the endpoint's base URL (without credentials); None: api.openai.com or offline
    sampling: dict[str, Any]  # temperature and seed of the judge model
    max_tokens: dict[str, int]  # the reply bound of each kind of call the panel makes (judge, solver)
    structured_output: str | None  # how JSON is asked for first (json_schema, tool_calling, prompt)
    parse_retries: int | None  # how often a reply that does not fit the schema is asked for again
    prompts: dict[str, str]  # prompt name → version (name@sha256[:12]); empty for the offline panel
    checks: str | None  # the offline panel's checks: rubric@sha256[:12] of its source
    solver: str | None  # the solver's prompt version; None when the panel has no solver
    verifier: str  # the deterministic gate: verify@sha256[:12] of its source
    code: str  # the agents modules that ask, read and decide: agents@sha256[:12] of DECISION_MODULES
    policy: dict[str, Any]  # the scoring policy's name and every parameter that decides acceptance
    decision: str  # the graphs code that turns verdicts into a decision: decide@sha256[:12] (graphs.decision)
    thinkloop: str  # the thinkloop version

    def parts(self) -> dict[str, Any]:
        """Every part as plain JSON-able data (what the id hashes, and what is shown)."""
        return dataclasses.asdict(self)

    @property
    def id(self) -> str:
        """A stable hash of every part: 16 hex digits of the SHA-256 of their canonical JSON."""
        text = json.dumps(self.parts(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    @property
    def offline(self) -> bool:
        """The offline panel: no endpoint, so no reported model id to wait for."""
        return self.model is None

    @property
    def answered(self) -> bool:
        """Whether the identity is complete: offline, or its endpoint reported a model id. An
        identity whose endpoint never answered can be measured by no record and cite none."""
        return self.offline or self.reported_model is not None

    def reporting(self, reported_model: str | None) -> PanelIdentity:
        """The same panel, its endpoint having reported ``reported_model`` (the offline panel: itself)."""
        return self if self.offline else dataclasses.replace(self, reported_model=reported_model)


def panel_identity(
    judge_model: str,
    spec: ModelSpec | None,
    policy: Any,
    thinkloop: str,
    *,
    decision: str,
    reported_model: str | None = None,
) -> PanelIdentity:
    """The identity of the panel of ``judge_model`` (``spec`` None: the offline panel) under
    ``policy`` (a ``graphs.scoring.ScoringPolicy``; any dataclass whose fields are its parameters),
    with the decision code ``decision`` (``graphs.decision.decision_version()``), its endpoint having
    reported ``reported_model`` (None: not yet known)."""
    return PanelIdentity(
        judge_model=judge_model,
        model=spec.model if spec else None,
        reported_model=reported_model if spec else None,
        endpoint=_endpoint(spec.base_url) if spec else None,
        sampling={"temperature": spec.temperature, "seed": spec.seed} if spec else {},
        max_tokens={kind: spec.max_tokens.of(kind) for kind in _PANEL_CALLS} if spec else {},
        structured_output=spec.structured_output if spec else None,
        parse_retries=spec.parse_retries if spec else None,
        prompts={name: load_prompt(name).version for name in JUDGE_PROMPTS} if spec else {},
        checks=None if spec else source_version("rubric"),
        solver=load_prompt(SOLVER_PROMPT).version if spec else None,
        verifier=source_version("verify"),
        code=source_hash("agents", DECISION_MODULES, "agents"),
        policy=policy_parameters(policy),
        decision=decision,
        thinkloop=thinkloop,
    )


def reported_by(ids: Iterable[str | None]) -> str | None:
    """The one model id the answered calls reported (None: no call answered, or they reported
    several, so no single identity describes the panel that judged)."""
    answered = {model for model in ids if model is not None}
    return answered.pop() if len(answered) == 1 else None


# The smallest lower bound (Wilson 95 %) of the share of sound versions passed that a required
# warrant needs when the requirement names none (THINKLOOP_SPECIFICITY_FLOOR overrides it): a panel
# that refuses everything has no false accepts, so a false-accept bound alone certifies nothing.
DEFAULT_SPECIFICITY_FLOOR = 0.5


# The source kinds of labelled sets (agents.labelled.labels.SourceKind), and the requirement that
# accepts any of them but the set thinkloop ships (a warrant must rest on problems written elsewhere).
SOURCE_KINDS = ("shipped", "benchmark", "own", "reviews")
NOT_SHIPPED = "not-shipped"
REQUIRED_SOURCES = (*SOURCE_KINDS, NOT_SHIPPED)


def accepted_kinds(source: str) -> frozenset[str]:
    """The source kinds a required ``source`` (a kind, or ``not-shipped``) accepts; ValueError for
    any other word."""
    if source == NOT_SHIPPED:
        return frozenset(SOURCE_KINDS) - {"shipped"}
    if source not in SOURCE_KINDS:
        raise ValueError(
            f"a required warrant source is one of {', '.join(REQUIRED_SOURCES)} (got {source!r})"
        )
    return frozenset({source})


@dataclass(frozen=True)
class Requirement:
    """What a warrant must show for an acceptance to stand: false accepts bounded at or below
    ``false_accept`` (its Wilson 95 % upper bound) and sound versions passed at or above
    ``specificity`` (its Wilson 95 % lower bound). With ``source`` or ``min_flawed``, the
    false-accept bound must be met on one of the record's sources of an accepted kind that holds at
    least ``min_flawed`` flawed versions (the record's overall figure is not enough)."""

    false_accept: float
    specificity: float = DEFAULT_SPECIFICITY_FLOOR
    # The kind of labelled set the record must be measured on ("reviews": the project's own
    # teachers' decisions; "not-shipped": any but the set thinkloop ships); None: any.
    source: str | None = None
    min_flawed: int | None = None  # the fewest flawed versions that source must hold; None: any

    def __str__(self) -> str:
        bounds = f"false accepts ≤ {self.false_accept:.1%}, sound passed ≥ {self.specificity:.1%}"
        if self.source is not None:
            bounds += f", measured on {self.source}"
        if self.min_flawed is not None:
            bounds += f", on at least {self.min_flawed} flawed"
        return bounds

    @property
    def per_source(self) -> bool:
        """Whether the false-accept bound must be met on one source of the record's."""
        return self.source is not None or self.min_flawed is not None

    def qualifies(self, source: Mapping[str, Any]) -> bool:
        """Whether a record's ``source`` (its kind and n_flawed) is one this requirement accepts."""
        kind_ok = self.source is None or source.get("kind") in accepted_kinds(self.source)
        return kind_ok and int(source.get("n_flawed") or 0) >= (self.min_flawed or 0)

    def met_by(self, source: Mapping[str, Any]) -> bool:
        """Whether ``source`` qualifies and bounds false accepts within ``false_accept``."""
        upper = source.get("false_accept_upper")
        return self.qualifies(source) and upper is not None and upper <= self.false_accept


def parse_requirement(value: object, floor: float = DEFAULT_SPECIFICITY_FLOOR) -> Requirement | None:
    """A requirement from ``0.10`` (a false-accept bound, with ``floor``), ``"0.10,0.70"`` (both) or a
    Requirement; None for None or ``""``. ValueError unless each bound lies in (0, 1]."""
    if value is None or isinstance(value, Requirement):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError("a required warrant is a bound, or two: 'FALSE_ACCEPT[,SOUND_PASSED]'")
    parts = [part.strip() for part in str(value).split(",")] if isinstance(value, str) else [str(value)]
    if parts == [""]:
        return None
    if len(parts) > 2:
        raise ValueError("a required warrant is 'FALSE_ACCEPT[,SOUND_PASSED]', e.g. 0.10 or 0.10,0.70")
    try:
        bounds = [float(part) for part in parts]
    except ValueError as exc:
        raise ValueError(f"a required warrant's bounds are numbers, e.g. 0.10,0.70 (got {value!r})") from exc
    if not all(0 < bound <= 1 for bound in bounds):
        raise ValueError(f"each bound of a required warrant lies in (0, 1] (got {value!r})")
    return Requirement(bounds[0], bounds[1] if len(bounds) == 2 else floor)


def uncertified(warrant: Mapping[str, Any], bound: Requirement | float | None) -> str | None:
    """Why an acceptance by a panel with ``warrant`` may not stand under a required ``bound`` (a bare
    number: a false-accept bound with the default floor); None when it may (nothing required, or a
    record within both bounds). The cause names each bound the record misses."""
    required = Requirement(bound) if isinstance(bound, (int, float)) else bound
    if required is None:
        return None
    if warrant.get("status") != "valid":
        return f"panel not certified: this panel has never been validated (required: {required})"
    checks = (_source(warrant, required), _false_accepts(warrant, required), _sound_passed(warrant, required))
    missed = [why for why in checks if why]
    if not missed:
        return None
    record = warrant["record_id"]
    return f"panel not certified: its cited validity record ({record}) " + "; and ".join(missed)


def warrant_sources(warrant: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sources a warrant's record was measured on, each with its kind, name, n_flawed and
    false-accept upper bound; one (the record's own set) for a warrant stored before sources were
    kept per record."""
    if warrant.get("sources"):
        return [dict(source) for source in warrant["sources"]]
    source = warrant.get("source") or {}
    counts = warrant.get("counts") or {}
    flawed = warrant.get("false_accept") or {}
    return [
        {
            "name": source.get("name") or warrant.get("set"),
            "kind": source.get("kind"),
            "n_flawed": counts.get("flawed") if counts.get("flawed") is not None else flawed.get("n"),
            "false_accept_upper": warrant.get("false_accept_upper"),
        }
    ]


def _source(warrant: Mapping[str, Any], required: Requirement) -> str | None:
    """Why no source of the warrant's record is of the required kind with enough flawed versions
    (None: one is, or nothing per source is required)."""
    if not required.per_source:
        return None
    sources = warrant_sources(warrant)
    if any(required.qualifies(source) for source in sources):
        return None
    wanted = [f"the required source: {required.source}"] if required.source is not None else []
    if required.min_flawed is not None:
        wanted.append(f"at least {required.min_flawed} flawed")
    return f"was measured on {_measured(sources)}, not on {' with '.join(wanted)}"


def _measured(sources: list[dict[str, Any]]) -> str:
    """``umwp (benchmark, 150 flawed) and shipped (shipped, 90 flawed)``."""
    return " and ".join(
        f"{s.get('name') or 'an unnamed set'} ({s.get('kind') or 'a set of unknown kind'}, "
        f"{int(s.get('n_flawed') or 0)} flawed)"
        for s in sources
    )


def _false_accepts(warrant: Mapping[str, Any], required: Requirement) -> str | None:
    """Why the warrant's false-accept bound misses ``required`` (None: it is met): the record's
    overall bound, or (a source required) the bound of each source that qualifies."""
    if required.per_source:
        qualified = [s for s in warrant_sources(warrant) if required.qualifies(s)]
        if not qualified or any(required.met_by(s) for s in qualified):
            return None  # none qualified: _source says why
        shown = ", ".join(f"{_percent(s.get('false_accept_upper'))} on {s.get('name')}" for s in qualified)
        return f"bounds false accepts at {shown} (95 %), above the required {required.false_accept:.1%}"
    upper = warrant.get("false_accept_upper")
    if upper is not None and upper <= required.false_accept:
        return None
    return f"bounds false accepts at {_percent(upper)} (95 %), above the required {required.false_accept:.1%}"


def _percent(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1%}"


def _sound_passed(warrant: Mapping[str, Any], required: Requirement) -> str | None:
    """Why the warrant's sound-passed lower bound misses ``required`` (None: it is met). A record
    saved before thinkloop kept that bound meets no requirement: it was never checked."""
    lower = warrant.get("sound_passed_lower")
    if lower is None:
        return (
            "holds no lower bound of sound versions passed (saved before records kept it): validate the "
            f"panel again (required: sound passed ≥ {required.specificity:.1%})"
        )
    if lower >= required.specificity:
        return None
    return f"bounds sound passed at ≥ {lower:.1%} (95 %), below the required {required.specificity:.1%}"


@dataclass(frozen=True)
class Warrants:
    """What a run's panel may cite, whichever model id its endpoint turns out to report.

    ``panel``: the configured panel's identity (no reported id yet); ``cited``: reported model id →
    the warrant of the record its project cites of ``panel.reporting(that id)`` (for the offline
    panel, the key None); ``bound``: what a warrant must show for an acceptance to stand (None: nothing).
    """

    panel: PanelIdentity
    cited: Mapping[str | None, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    bound: Requirement | None = None

    def identity(self, reported_model: str | None) -> PanelIdentity:
        """The panel's identity once its endpoint reported ``reported_model``."""
        return self.panel.reporting(reported_model)

    def warrant(self, reported_model: str | None) -> dict[str, Any]:
        """The warrant of the panel whose endpoint reported ``reported_model``; ``{"status": "none"}``
        when that panel was never measured, or when the endpoint never answered."""
        if not self.identity(reported_model).answered:
            return dict(NO_WARRANT)
        return dict(self.cited.get(None if self.panel.offline else reported_model, NO_WARRANT))

    def uncertified(self, reported_model: str | None) -> str | None:
        """Why an acceptance by this panel may not stand (None: it may)."""
        return uncertified(self.warrant(reported_model), self.bound)


def policy_parameters(policy: Any) -> dict[str, Any]:
    """A policy's name and every parameter that decides whether a version is accepted."""
    fields = dataclasses.asdict(policy)
    return {key: value for key, value in sorted(fields.items()) if key not in _NOT_IDENTITY}


def _endpoint(base_url: str | None) -> str | None:
    """The base URL without user, password, query or fragment (a key in a URL is never shown)."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


@cache
def source_version(package: str) -> str:
    """``<package>@<sha256[:12]>`` of every Python file of ``agents.<package>``, in name order:
    the version of code that decides acceptance without a prompt (the offline checks, the verifier)."""
    digest = hashlib.sha256()
    root = resources.files("agents").joinpath(package)
    for name in source_files(package):
        digest.update(name.encode("utf-8") + b"\0" + root.joinpath(*name.split("/")).read_bytes() + b"\0")
    return f"{package}@{digest.hexdigest()[:12]}"


def source_files(package: str) -> list[str]:
    """The Python files of ``agents.<package>`` and of its subpackages (the screen's rules live in
    ``rubric/rules``), as paths relative to it, in name order."""
    root = resources.files("agents").joinpath(package)
    names = [p.name for p in root.iterdir() if p.name.endswith(".py")]
    for folder in (p for p in root.iterdir() if p.is_dir() and p.joinpath("__init__.py").is_file()):
        names += [f"{folder.name}/{p.name}" for p in folder.iterdir() if p.name.endswith(".py")]
    return sorted(names)


@cache
def source_hash(package: str, names: tuple[str, ...], label: str) -> str:
    """``<label>@<sha256[:12]>`` of the source of the modules ``names`` of ``package`` (each a module,
    ``answers`` for answers.py, or a subpackage, every Python file of it), read as installed. A name
    with no such file raises FileNotFoundError: a module renamed away is never silently unhashed."""
    digest = hashlib.sha256()
    root = resources.files(package)
    for name in sorted(names):
        folder = root.joinpath(name)
        if folder.is_dir():
            files = [(f"{name}/{p.name}", p) for p in sorted(folder.iterdir(), key=lambda p: p.name)]
        else:
            files = [(f"{name}.py", root.joinpath(f"{name}.py"))]
        for path, source in files:
            if path.endswith(".py"):
                digest.update(path.encode("utf-8") + b"\0" + source.read_bytes() + b"\0")
    return f"{label}@{digest.hexdigest()[:12]}"
