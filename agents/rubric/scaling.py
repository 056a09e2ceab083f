"""What does not scale: a duration that runs in parallel, a temperature, the size of each thing.

Each detector compares the solution's answer with what the question already fixes: a process
that runs for everyone at once (phones each on its own charger, a wall that dries, dogs walked
together) takes the time it takes for one; water poured together keeps a temperature between the
temperatures poured; a pencil in a bigger pack is as long as one in a small pack. The answer is a
flaw only when it is the fixed quantity scaled by a factor the story offers (a count, a ratio of
two given numbers), so a solution that reaches another number by another route is left alone.
"""

from __future__ import annotations

import re
from fractions import Fraction

from agents.rubric.facts import COMPOUND_DURATION, ProblemFacts, show
from agents.verify.units import UNIT_PATTERN, unit

_DURATION_ASK = re.compile(
    r"\bhow long\b|\bhow much time\b|\bhow many (?:minutes|hours|seconds|days)\b|"
    r"\bafter how many (?:minutes|hours)\b|\buntil\b|\bat what time\b|\bwhen will\b"
)
# Everyone (or everything) at once: the time is the time for one.
_PARALLEL = re.compile(
    r"\bat the same time\b|\ball at once\b|\bside by side\b|\bin one go\b|\bsimultaneous\w*|"
    r"\beach (?:into|in|on|with|at|from) (?:its|their|his|her) own\b|\bseparate (?:chargers?|ovens?|pots?)\b|"
    # a time the story fixes whatever else changes
    r"\b(?:one|1) (?:in|on|at) each\b|\bwhatever the\b|\bhowever (?:many|much|heavy|full|big)\b|"
    r"\bno matter how (?:many|much|heavy|full|big)\b|"
    # the same trip takes as long whoever comes along (the same speed alone would scale with distance)
    r"\b(?:along|on|over|driving|drives?|takes?|taking) the same (?:route|distance|journey|course|track)\b"
)
# Processes whose length is their own, not a share of work.
_OWN_TIME = re.compile(
    r"\b(?:dry|dries|dried|drying|charge|charges|charged|charging|boil|boils|boiled|ripen|ripens|"
    r"song|film|movie|symphony|concert|melt|melts|set|sets|rise|rises|bake|bakes|baked)\b"
)
# Hands (or pumps) that share a job out, and work done one after another.
_HAND_NOUNS = (
    r"workers?|builders?|painters?|pumps?|taps?|pipes?|machines?|printers?|cleaners?|robots?|"
    r"harvesters?|diggers?"
)
# (the facts read number words as digits: "one at a time" arrives as "1 at a time")
_IN_TURN = r"(?:one|1) after (?:another|the other)|(?:one|1) at a time|in turn"
# Work shared out: more hands (or pumps) finish sooner, and that is a real proportion.
_SHARED = re.compile(
    rf"\b(?:{_HAND_NOUNS}|share|sharing|shared|same rate|{_IN_TURN}|batch(?:es)?|only (?:one|\d+))\b"
)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)[ -]?(seconds?|minutes?|hours?|days?|h|min)\b")


def shared_work(q: str) -> bool:
    """The story shares a job out (pumps, workers, taps): more of them rightly take less time."""
    return bool(_SHARED.search(q))


def parallel_duration(f: ProblemFacts) -> str:
    """Three phones on three chargers charge in the time one does: the solution must not multiply
    (or divide) that time by how many there are, nor by the ratio of two sizes."""
    q = f.q.lower()
    if not _DURATION_ASK.search(f.target) or _SHARED.search(q):
        return ""
    if not (_PARALLEL.search(q) or (_OWN_TIME.search(q) and re.search(r"\bsame\b|\btogether\b", q))):
        return ""
    found = _DURATION.search(q)
    if found is None:
        return ""
    duration, unit_word = Fraction(found.group(1)), found.group(2)
    if answered_duration(f) == duration:
        return ""  # "they bake in the same 25 minutes as one tray": the answer is the time unchanged
    compound = COMPOUND_DURATION.search(q)
    if compound and found.start() == compound.start():  # "1 hour 30 minutes" is 90 minutes, not 1 hour
        said = [
            m.groups()
            for m in COMPOUND_DURATION.finditer(f.final_sentence.lower())
            if not re.match(r" ?[×x*÷/+−-]", f.final_sentence[m.end() :])  # an operand is no answer
        ]
        if said and said[-1] == compound.groups():
            return ""
        duration, unit_word = Fraction(int(compound.group(1)) * 60 + int(compound.group(2))), "minutes"
    if _PARALLEL.search(q):
        scaled = _scaled(f, duration)
        if scaled is None and compound and found.start() == compound.start():
            scaled = _scaled(f, duration / 60)  # "2 h 15 min × 2" worked in hours
            if scaled is not None:
                duration, unit_word = duration / 60, "hours"
    else:  # "the same songs": only the answer counts, not a step adding up several songs in turn
        scaled = f.final_answer
        if scaled is None or scaled == duration or not any(scaled == duration * k for k in _factors(f)):
            scaled = None
    if scaled is None:
        return ""
    return (
        f"everything here runs at once, so it still takes {show(duration)} {unit_word}; "
        f"the solution scales the time to {show(scaled)}"
    )


# Hands that share one job: the more of them, the sooner it is done.
_HANDS = re.compile(rf"(?<![\d.])(\d+) (more |fewer |extra )?({_HAND_NOUNS}|gardeners?|people|men|women)\b")
# Work done one by one, or a time given for each one, where more of them rightly take longer.
_ONE_BY_ONE = re.compile(rf"\b(?:{_IN_TURN}|(?:one|1) by (?:one|1)|each)\b")


def shared_inverted(f: ProblemFacts) -> str:
    """Twice the hands on the same job take half the time, not twice: the solution must not scale
    the given time by the new count over the old ("3 painters take 6 hours; 6 painters take 12").
    Read only where the story gives just the two counts and the time, so a job that also changes
    size ("… paint 8 fences") is left alone."""
    q = f.q.lower()
    if not _DURATION_ASK.search(f.target) or _ONE_BY_ONE.search(q):
        return ""
    hands = _HANDS.findall(q)
    durations = _DURATION.findall(q)
    if len(hands) != 2 or len(durations) != 1 or len(f.question_numbers) != 3:
        return ""
    (before, more, noun), (after, change, other) = hands
    if more or noun.rstrip("s") != other.rstrip("s"):
        return ""
    old, new = Fraction(before), Fraction(after)
    new = old + new if change.strip() in ("more", "extra") else old - new if change else new
    given = Fraction(durations[0][0])
    if old == new or new <= 0 or f.final_answer is None:
        return ""
    if f.final_answer == given * new / old != given * old / new:
        way, sooner = ("up", "do not take longer") if new > old else ("down", "do not finish sooner")
        return (
            f"{show(new)} {other} instead of {show(old)} on one job {sooner}: the solution scales the "
            f"{show(given)} {durations[0][1]} {way} with their number, to {show(f.final_answer)}"
        )
    return ""


_TIMED = re.compile(r"(\d+(?:\.\d+)?) ?(?:seconds?|minutes?|mins?|hours?|h|days?)\b")


def answered_duration(f: ProblemFacts) -> Fraction | None:
    """The last duration the solution's final sentence states ("… in the same 25 minutes as one
    tray": 25, though "one tray" ends the sentence)."""
    times = _TIMED.findall(f.final_sentence)
    return Fraction(times[-1]) if times else None


def _factors(f: ProblemFacts) -> set[Fraction]:
    """What a writer scales by: a count the story gives (or one more: "his dog and two others"), or
    the ratio of two of its numbers."""
    numbers = {n for n in f.question_numbers if n > 0}
    out = {n for n in numbers if n.denominator == 1 and n <= 50} | {n + 1 for n in numbers if n <= 20}
    out |= {a / b for a in numbers for b in numbers if a != b}
    return out - {Fraction(1)}


def _scaled(f: ProblemFacts, fixed: Fraction) -> Fraction | None:
    """A value the solution reaches that is ``fixed`` times one of the story's factors."""
    reached = {v for _, v in f.verification.results}
    if f.final_answer is not None:
        reached.add(f.final_answer)
    for value in sorted(reached):
        if value != fixed and fixed and any(value == fixed * k for k in _factors(f)):
            return value
    return None


def scaled_time(f: ProblemFacts, value: Fraction) -> bool:
    """``value`` is a duration the question gives, or one the solution worked out before, scaled
    by a factor the story offers (42 = 28 × 45/30): a time scaled, not a time added up."""
    durations = {Fraction(n) for n, _ in _DURATION.findall(f.q.lower())}
    durations |= {v for _, v in f.verification.results if v != value}
    factors = _factors(f)
    return any(d and value != d and value / d in factors for d in durations)


_AMOUNT_IN = re.compile(
    rf"(\d+(?:\.\d+)?) ?({UNIT_PATTERN}|[a-z]+)\b[^.?!]{{0,25}}?"
    r"\bin (\d+(?:\.\d+)?) ?(seconds?|minutes?|hours?|days?)\b"
)


def same_amount(f: ProblemFacts) -> str:
    """'A kettle boils 1 litre in 3 minutes; how long to boil 1 litre for 4 people?': the same
    amount takes the same time, whatever else the story counts."""
    if not _DURATION_ASK.search(f.target) or f.final_answer is None or _SHARED.search(f.q.lower()):
        return ""
    for amount, what, time, _ in _AMOUNT_IN.findall(f.q.lower()):
        asked = re.search(rf"(?<![\d.]){re.escape(amount)} ?{re.escape(what)}\b", f.target)
        duration = Fraction(time)
        if asked and f.final_answer != duration and _scaled(f, duration) == f.final_answer:
            return (
                f"the question asks about the same {amount} {what} that takes {time}; "
                f"the solution scales the time to {show(f.final_answer)}"
            )
    return ""


_TEMPERATURE = re.compile(r"(-?\d+(?:\.\d+)?) ?°\s?[cf]")
_WARMING = re.compile(
    r"\b(?:heat\w*|warm\w*|cool\w*|rise|rises|rose|risen|rising|increase\w*|drop\w*|falls?|fell|chang\w*|"
    r"differen\w*|boil\w*|freez\w*|oven|kettle|stove|fridge|freezer|by how many|colder|hotter)\b"
)


_POURED = re.compile(
    r"\b(?:pour\w*|mix\w*|fill\w*|combin\w*|jugs?|bowls?|bath|buckets?|tanks?|glass\w*|cups?|together)\b"
)


def mixed_temperature(f: ProblemFacts) -> str:
    """Water poured together has a temperature between those poured (the same one, if they are all
    the same): a temperature multiplied by the number of glasses, or added up, is no temperature."""
    q = f.q.lower()
    if not re.search(r"\btemperature\b|\bhow (?:hot|warm|cold)\b", f.target) or _WARMING.search(q):
        return ""
    if not _POURED.search(q):
        return ""
    temperatures = [Fraction(t) for t in _TEMPERATURE.findall(q)]
    stated = _TEMPERATURE.findall(f.s.lower())
    if not temperatures or not stated:
        return ""
    answer = Fraction(stated[-1])  # the last temperature the solution states is its answer
    if min(temperatures) <= answer <= max(temperatures):
        return ""
    shown = " and ".join(f"{show(t)} °C" for t in sorted(set(temperatures)))
    return (
        f"water poured together stays between the temperatures poured ({shown}); "
        f"the solution's {show(answer)} °C adds or scales a temperature"
    )


_EACH_SIZE = re.compile(
    r"\b(?:each|every) ([a-z]+)\b[^.?!]*?\b(?:is|are|weighs|measures|holds) "
    rf"(\d+(?:\.\d+)?) ?({UNIT_PATTERN})\b"
)


def size_of_each(f: ProblemFacts) -> str:
    """The question says how long (heavy, big) each thing is and asks it again for more of the same
    things: the answer is the size given, not that size scaled by how many there are."""
    asked = re.search(r"\b(?:each|every|one) ([a-z]+)\b", f.target)
    if (
        asked is None
        or f.final_answer is None
        or not re.search(r"\bhow (?:long|heavy|tall|wide|big)\b", f.target)
    ):
        return ""
    for noun, number, name in _EACH_SIZE.findall(f.q.lower()):
        measured = unit(name)
        if not noun.startswith(asked.group(1)[:4]) or measured is None:
            continue
        size = Fraction(number)
        if f.final_answer != size and _scaled(f, size) is not None:
            return f"each {noun} is {number} {name} whatever the number of them; the solution scales it"
    return ""


_AGES = re.compile(
    r"\b(\d+)(?:[ -]years?[ -]old\b| years?\b)|\b(?:aged|is|was|turns|will be) (\d+)\b(?! times)"
)


def ages_scaled(f: ProblemFacts) -> str:
    """'When Leo was 5, Ava was 15; how old is Ava when Leo is 10?': every age grows by the same
    number of years, so Ava is 20; doubling her age because his doubled is no rule."""
    if f.final_answer is None or not re.search(r"\bhow old\b|\bage\b", f.target):
        return ""
    ages = {Fraction(a or b) for a, b in _AGES.findall(f.q.lower())}
    known = {v for _, v in f.verification.results} - ages - {f.final_answer}  # an age worked out
    for a in ages:
        for b in ages:
            if not a or a == b:
                continue
            for v in known:
                factor = re.escape(show(b / a))
                written = re.search(rf"(?<![\d.]){factor} ?×|× ?{factor}(?![\d.])", f.s)
                if v and written and f.final_answer == v * b / a and f.final_answer != v + b - a:
                    return (
                        f"ages all grow by the same number of years ({show(b - a)}), not in proportion: "
                        f"the solution scales {show(v)} by {show(b / a)}"
                    )
    return ""


# ---- settings and spans the story says are fixed -------------------------------------------------

_SCALED = (
    r"(?<![\d.])({v})(?:\.0+)? ?(?:°\s?[cf]|degrees|years?|minutes?|min|hours?|h)? ?[×*÷/]|"
    r"[×*÷/] ?({v})(?![\d.])"
)
_OVEN = re.compile(
    r"\b(?:bake[sd]?|baking|roast(?:s|ed|ing)?|oven|preheat\w*)\b[^.?!]{0,40}?"
    r"\b(?:at|to) (\d+) ?(?:°\s?[cf]|degrees)"
)
_LIFESPAN = re.compile(
    r"\b(?:lives?|live for|lifespan|life span|life expectancy)\b[^.?!]{0,25}?"
    r"\b(\d+(?:\.\d+)?|\d+ \d/\d) years?\b"
)
_FIXED = re.compile(r"\b(?:whatever the|regardless of|no matter how|however (?:many|much|big|heavy|full))\b")
_SPAN_GIVEN = re.compile(
    rf"{COMPOUND_DURATION.pattern}|(?<![\d.])(\d+(?:\.\d+)?) ?(?:minutes?|min|hours?|seconds?)\b"
)


def _scales(solution: str, value: Fraction) -> bool:
    shown = re.escape(show(value))
    return re.search(_SCALED.format(v=shown), solution.lower()) is not None


def fixed_setting_scaled(f: ProblemFacts) -> str:
    """An oven's temperature for two cakes is the temperature for one; a hamster lives as long
    whether Mia buys one or three; a cycle that 'lasts 80 minutes whatever the load' lasts 80
    minutes for a double load. Each is a setting or a span of one thing, never multiplied or
    divided by a count."""
    q, target = f.q.lower(), f.target
    if re.search(r"\btemperature\b|\bhow hot\b|\bwhat (?:setting|gas mark)\b", target):
        for value in {Fraction(v) for v in _OVEN.findall(q)}:
            if _scales(f.s, value):
                return (
                    f"an oven set to {show(value)}° bakes two cakes at that temperature too; the solution "
                    "scales the temperature"
                )
    compared = re.search(r"\btimes as\b|\bas long as\b|\blonger than\b|\btwice\b|\bhalf\b", q)
    if re.search(r"\bhow long\b[^?]*\blive\b|\blifespan\b|\blive for\b", target) and not compared:
        for raw in _LIFESPAN.findall(q):
            value = Fraction(raw.replace(" 1/2", ".5").replace(" ", "")) if " " in raw else Fraction(raw)
            if _scales(f.s, value):
                return (
                    f"each one lives about {show(value)} years however many there are; the solution scales it"
                )
    asks_one = not re.search(r"\d", target)  # "how long does his cycle take", not "… for 4 tanks"
    if (
        _FIXED.search(q)
        and asks_one
        and not re.search(rf"\b(?:{_IN_TURN})\b", q)
        and re.search(r"\bhow long\b|\bhow many (?:minutes|hours)\b", target)
    ):
        for hours, minutes, plain in _SPAN_GIVEN.findall(q):
            value = Fraction(int(hours) * 60 + int(minutes)) if hours else Fraction(plain)
            if value > 1 and _scales(f.s, value) and f.final_answer != value:
                return (
                    f"the story says the {show(value)} does not change with the amount; "
                    "the solution scales it"
                )
    return ""


def does_not_scale(f: ProblemFacts) -> str:
    """Any of the above."""
    return (
        parallel_duration(f)
        or mixed_temperature(f)
        or size_of_each(f)
        or ages_scaled(f)
        or fixed_setting_scaled(f)
    )
