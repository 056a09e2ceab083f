"""Rich rendering of a refinement run's events for the terminal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from agents.outcome import SCORED_OUTCOMES, Outcome
from agents.schemas import Problem
from graphs.events import (
    JudgeVerdict,
    ReviserThinking,
    RevisionProposed,
    RoundScored,
    RoundStarted,
    RunEvent,
    RunFinished,
)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def problem_panel(problem: Problem, title: str) -> Panel:
    """A problem version in a box."""
    body = Text.assemble(
        ("Question\n", "bold"), problem.question, ("\n\nSolution\n", "bold"), problem.solution or "(none)"
    )
    return Panel(body, title=title, expand=True)


class TraceRenderer:
    """Prints each round's verdict table, streams the think-aloud, and summarises the run."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._verdicts: list[JudgeVerdict] = []
        self._thinking_round: int | None = None

    def __call__(self, event: RunEvent) -> None:
        """Render one event as it arrives."""
        if isinstance(event, RoundStarted):
            self._verdicts = []
            if event.round == 1:
                self.console.print(problem_panel(event.problem, "Round 1: the problem as submitted"))
            else:
                self.console.print(Rule(f"Round {event.round}: judging the revision"))
        elif isinstance(event, JudgeVerdict):
            self._verdicts.append(event)
        elif isinstance(event, RoundScored):
            self.console.print(self._round_table(event))
            self._evidence(event)
        elif isinstance(event, ReviserThinking):
            self._think(event)
        elif isinstance(event, RevisionProposed):
            self._revision(event)
        elif isinstance(event, RunFinished):
            self._finished(event)

    def _round_table(self, event: RoundScored) -> Table:
        table = Table(title=f"Round {event.round} verdicts", expand=True)
        for column in ("judge", "score", "conf.", "rationale"):
            table.add_column(column, overflow="fold")
        for verdict in self._verdicts:
            missing = "failed" if verdict.failure else "abstained"
            score = missing if verdict.abstained else str(verdict.score)
            why = verdict.rationale if not verdict.abstained else f"no verdict: {verdict.abstain_reason}"
            table.add_row(verdict.judge, score, str(verdict.confidence or "—"), Text(why or ""))
        failed = f" · {event.n_failed} failed" if event.n_failed else ""
        table.caption = (
            f"pass rate {_fmt(event.pass_rate)} · agreement {_fmt(event.agreement)} · confidence "
            f"{_fmt(event.confidence)} · Q = {_fmt(event.quality)} · {event.n_passing}/{len(self._verdicts)} "
            f"passing{failed} → [bold]{event.decision}[/bold]"
        )
        return table

    def _evidence(self, event: RoundScored) -> None:
        """The solver's answer (or why there is none), then what refuses acceptance, if anything."""
        solver = event.solver
        if solver is not None and solver.solution is not None:
            self.console.print(
                Text.assemble(("Solver, from the question alone: ", "bold"), solver.solution.answer)
            )
        elif solver is not None and solver.failure is not None:
            self.console.print(
                Text.assemble(
                    ("Solver unavailable ", "yellow"), f"(nothing compared): {solver.failure.summary()}"
                )
            )
        for line in event.verification:
            self.console.print(Text.assemble(("Not acceptable: ", "red"), line))
        for line in event.unverified:
            self.console.print(Text.assemble(("Unverified (read, not checked): ", "yellow"), line))

    def _think(self, event: ReviserThinking) -> None:
        if self._thinking_round != event.round:
            self._thinking_round = event.round
            self.console.print(f"[bold]Model under test, thinking aloud (after round {event.round}):[/bold]")
        self.console.print(event.delta, end="", markup=False, highlight=False, soft_wrap=True)

    def _revision(self, event: RevisionProposed) -> None:
        self.console.print()
        if event.problem is None:
            self.console.print(Text.assemble(("No usable revision: ", "red"), event.error or ""))
        else:
            self.console.print(problem_panel(event.problem, f"Revision proposed after round {event.round}"))
            if event.unchanged:
                self.console.print(Text.assemble(("No revision: ", "red"), event.note or ""))
            for line in event.givens_changed:
                self.console.print(Text.assemble(("Changed a given: ", "yellow"), line))

    def _finished(self, event: RunFinished) -> None:
        if event.outcome not in SCORED_OUTCOMES:
            cause = f"\n{event.failure.summary()}" if event.failure else ""
            self.console.print(
                Panel(
                    f"outcome [bold]{event.outcome}[/bold] after {event.rounds} round(s): "
                    f"{event.stop_reason}{cause}\nNot scored: an {event.outcome} run is neither a pass nor "
                    "a failure of the model under test.",
                    title="Run finished",
                    border_style="red" if event.outcome == Outcome.ERROR else "yellow",
                )
            )
            return
        rtp = "did not pass" if event.rounds_to_pass is None else str(event.rounds_to_pass)
        # The offline panel is a screen: its rounds-to-pass is to pass the screen, never to be accepted.
        label = "RoundsToPass (screen)" if event.outcome == Outcome.SCREENED else "RoundsToPass"
        self.console.print(
            Panel(
                f"outcome [bold]{event.outcome}[/bold] ({event.stop_reason}) after {event.rounds} round(s)\n"
                f"{label} {rtp} · AvgQualityScore final {_fmt(event.avg_quality_final, 3)} · "
                f"all steps {_fmt(event.avg_quality_all_steps, 3)}",
                title="Run finished",
                border_style="cyan" if event.outcome == Outcome.SCREENED else "none",
            )
        )

    def show_warrant(self, warrant: Mapping[str, Any]) -> None:
        """An acceptance's warrant, under the run's summary (known once the panel's endpoint has
        reported its model id, so after the run)."""
        valid = warrant.get("status") == "valid"
        # one line however wide (a warrant's record id and hash are copied from it, never split)
        self.console.print(Text(warrant_line(warrant), style="green" if valid else "yellow"), soft_wrap=True)


def warrant_line(warrant: Mapping[str, Any]) -> str:
    """What an acceptance is worth, in one line: both bounds of its panel's validity record, what
    they were measured on and the set's hash, or that the panel was never validated."""
    if warrant.get("status") != "valid":
        return "accepted — no warrant: this panel has never been validated"
    from app.reporting.warrant_text import provenance, sources_text, warrant_figure

    per_source = sources_text(warrant)  # a record of several sets: where its bound was measured
    by = f"; by source: {per_source}" if per_source else ""
    return f"accepted — warrant: {warrant_figure(warrant)}{by} ({provenance(warrant)})"
