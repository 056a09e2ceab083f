"""The graphs part of a panel's identity: the version of the code that turns verdicts into a decision.

It is a hash of the source of :data:`DECISION_MODULES` as installed (``decide@<sha256[:12]>``), so
any edit of that code is a new, unmeasured panel without anyone remembering to bump a number. The
modules are read as files, not imported: the hash names code, whichever of it a process has loaded.
The agents part (the modules that ask the panel, read its replies and compare answers) is hashed in
``agents.identity``; the boundary of both is documented there and in docs/warrants.md.
"""

from __future__ import annotations

from agents.identity import source_hash

# The modules of graphs/ whose code can change an acceptance: Q, the decision, the gate and certify
# rules (scoring); the loop's score step with the degenerate-panel and unchanged-version rules, the
# verifier's gate and the solver comparison as the loop applies them (refinement); what a round
# holds (state); a screen's pass never being an acceptance (context); an acceptance below the
# calibrated threshold sent up the cascade (escalation).
DECISION_MODULES = ("context", "escalation", "refinement", "scoring", "state")
# The modules of graphs/ a run executes that decide no acceptance, and why they stay out.
OUTSIDE_THE_DECISION: dict[str, str] = {
    "checkpoint": "where a run's state is saved between steps",
    "events": "the transcript a run streams: it reports the decision, never makes one",
    "replay": "rebuilds a resumed run's missing events from its stored rows: it reports, never decides",
    "metrics": "figures computed from the rounds after they are decided",
    "result": "the report of a finished run: it carries the decision, never makes one",
    "revising": "asks the model under test again while its reply is no revision: it ends a run before "
    "a version is judged, never decides a version the panel judged",
}


def decision_version() -> str:
    """``decide@<sha256[:12]>`` of the source of the decision code of graphs/ (cached per process)."""
    return source_hash("graphs", DECISION_MODULES, "decide")
