"""What the offline panel reads off a problem: its quantities, what it asks, what the solution does.

Everything here works on meaning the text states, never on vocabulary a writer could add: the
numbers given and their units, the question's target (a count, a time, a price, a difference),
the computations the solution states (checked by ``agents.verify``), where each number of the
solution comes from, and the solution's final answer.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from agents.verify.expressions import tokens
from agents.verify.text import plain, with_digits
from agents.verify.units import UNIT_PATTERN, Unit, unit
from agents.verify.verifier import Verification, verify

# A number, also written against its unit ("65p", "250ml"), but not inside a word or a clock time.
_NUMBER = re.compile(
    r"(?<![\w.:/])(\d+ \d+/\d+|\d+/\d+|\d+(?:\.\d+)?)"
    r"(?!(?!(?:p|m|cm|mm|km|kg|g|ml|l|h|s|min|kph|mph)\b)[\w:/]|\.\d)"
)
_QUANTITY = re.compile(rf"([$£€])?\s?(\d+(?:\.\d+)?)\s?(%|{UNIT_PATTERN})?(?![\w])")
_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[A-Z0-9$£€(])")
_TASK = re.compile(
    r"^(?:(?:also|then|and|now|next|finally),? )?"
    # "Using π ≈ 3.14, find …", "To the nearest metre, work out …"
    r"(?:(?:using|with|taking|to the nearest|rounding|correct to)\b(?:[^,.?!]|(?<=\d)\.(?=\d)){0,40},\s*)?"
    r"(how|what|which|find|calculate|compute|determine|work out|give|"
    r"write|show|express|explain|say|justify|analy[sz]e|evaluate|compare|check|describe)\b",
    re.I,
)
JUSTIFY = re.compile(
    r"^(?:(?:also|then|and|now|finally),? )?"
    r"(?:explain|justify|show (?:your|how|that|why)|give a reason|describe how|"
    r"check|say how|analy[sz]e|evaluate|compare)\b",
    re.I,
)
FORMAT = re.compile(
    r"^(?:give|write|express|round)\b.*\b(?:form|answer|nearest|places?|units?|decimal)\b", re.I
)
_SPEED_AFTER = re.compile(r" ?(?:km/h|mph|m/s|km per hour|kilomet(?:re|er)s per hour|miles per hour)\b")
# A sentence of a question that adds words but no data: no digit in it, and a request to explain or
# justify, or a variable's definition.
_WORDS_ONLY = re.compile(
    r"^(?![^\d]*\d)(?:(?:(?:also|then|and|now|finally),? )?(?:explain|justify|give a reason|describe how|"
    r"say how|analy[sz]e|evaluate|compare)\b|let [a-z] (?:be|stand for|represent)\b|"
    # a question about the method or the numbers in general asks nothing of this story
    r"why\b|(?:what|how) (?:would|will|might|could) (?:\w+ )?(?:change|happen|differ)\b[^?]*\b"
    r"(?:the|these|all the|other|different) (?:numbers|values|quantities|data)\b)",
    re.I,
)
# A label that numbers a step of the working ("Step 2:") is no quantity.
_STEP_LABEL = re.compile(r"\b(?:step|part) \d+\s*[:.)]\s*", re.I)
# Words that restate an answer without saying anything of it: "So x = 24.", "Therefore, the answer
# is £9.05.", "Written as an equation, the answer is x = 330."
_RESTATING = frozenset(
    re.findall(
        r"\w+",
        "so thus therefore hence the a an answer final result is was equals written as equation in "
        "symbols this that it gives we get our to of value unknown state models model which means "
        "and check x n y",
    )
)
# A subtraction said in words ("which leaves her with 25 euros", "take away 6").
TAKEN_IN_WORDS = re.compile(
    r"\b(?:leaves?|leaving|left|remains?|remaining|takes? away|subtract\w*|minus|fewer|less)\b"
)
# Numbers a solution may use without the question giving them: halves, doubles, percent.
CONSTANTS = {Fraction(n) for n in (0, 1, 2, 4, 100)} | {Fraction(1, 2)}
# Factors and constants a solution may use when the text is about what they belong to.
CONTEXT_CONSTANTS: tuple[tuple[re.Pattern[str], tuple[Fraction, ...]], ...] = tuple(
    (re.compile(pattern, re.I), tuple(Fraction(v) for v in values))
    for pattern, values in (
        (r"\bweeks?\b|\bdays?\b|\bdaily\b|\bweekly\b|\bfortnight", ("7",)),
        (r"\bfortnight|\b2 weeks\b", ("14",)),
        (
            r"\bmonths?\b|\b(?:january|february|march|april|may|june|july|august|september|october|"
            r"november|december)\b",
            ("28", "29", "30", "31"),
        ),
        (r"\bmonths?\b|\byears?\b|\bdozens?\b|\binch|\bfeet\b|\bfoot\b|\bannual", ("12",)),
        (r"\bhours?\b|\bdays?\b|\bdaily\b|\bovernight\b|\bnight\b", ("24",)),
        (r"\bweeks?\b|\byears?\b|\bannual", ("52",)),
        (r"\bhours?\b|\bminutes?\b|\bseconds?\b|\d:\d\d|\b(?:h|min|s)\b|/h\b|/s\b|\bmph\b", ("60", "3600")),
        (r"\byears?\b|\bannual|\bdays?\b", ("365", "366")),
        (
            r"\b(?:k?g|kilo\w*|grams?|m?l|millilit\w*|lit(?:re|er)s?|k?m|mm|metres?|meters?|kilomet\w*|"
            r"millimet\w*|tonnes?|thousand|m³|cm³)\b",
            ("1000", "100"),
        ),
        (r"\bcm\b|\bmm\b|centimet|millimet|\bcents?\b|\bpence\b|\bp\b|[$£€]", ("10", "100")),
        (r"\bangles?\b|\btriangle|°|\bdegrees?\b|\bstraight line|\bparallel", ("90", "180", "360")),
        (
            r"\bcircle|\bradius|\bdiameter|π|\bcylind|\bspheres?\b|\bcone|\bpi\b",
            ("3.14", "22/7", "3.142", "3.1416"),
        ),
        (r"%|\bper ?cent", ("10", "5", "50", "25", "1")),
        (r"\bquarters?\b|\bsquares?\b|\brectang", ("4",)),
        (r"\bcubes?\b|\bdice\b|\bdie\b|\bhexagon", ("6",)),
        (r"\b(?:edges|vertices|corners)\b", ("8", "12")),  # a cuboid's vertices and edges
        (r"\bcards\b|\bdeck\b", ("52", "13", "26", "4")),  # a pack of playing cards
        (r"\bdecades?\b", ("10",)),
        (r"\bcentur(?:y|ies)\b", ("100",)),
        (r"\bmillenni", ("1000",)),
    )
)
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})")
# Words that leave a quantity unstated: a solution that then states one has invented it.
VAGUE = re.compile(
    r"\b(?:some|a few|several|a number of|a certain|"
    r"(?:one|1) more [a-z]+|another [a-z]+)\b(?! (?:of|more|time))|"
    r"\b(?:the same (?:percentage|amount|rate|number|fraction|share)|"
    r"the whole (?:family|class|team|group|school|street|town|village|club)|everyone|everybody|"
    r"all (?:of )?(?:his|her|their|the) (?:friends|guests|classmates|cousins|neighbours))\b",
    re.I,
)


def show(value: Fraction) -> str:
    """A number as a writer would put it: 12, 0.75."""
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


# "twice", "half", "3 times" (number words are digits by now): how many times as many, or as old
TIMES = r"(twice|double|half|(\d+) times)"


def times_factor(said: str) -> Fraction:
    """The factor a TIMES match says: 'twice' 2, 'half' 1/2, '3 times' 3."""
    named = {"twice": Fraction(2), "double": Fraction(2), "half": Fraction(1, 2)}
    return named.get(said) or Fraction(said.split()[0])


def as_fraction(text: str) -> Fraction:
    """'4 1/2' → 9/2, '0.75' → 3/4."""
    if " " in text:
        whole, part = text.split(" ", 1)
        return Fraction(whole) + Fraction(part)
    return Fraction(text)


@dataclass(frozen=True)
class Given:
    """A quantity the question states: its value and unit (None for counts)."""

    value: Fraction
    unit: Unit | None
    percent: bool = False


@dataclass(frozen=True)
class ProblemFacts:
    """Facts about one version of a problem (question and stated solution)."""

    question: str
    solution: str

    @cached_property
    def q(self) -> str:
        """The question with digits for number words and hidden characters removed, without the
        sentences that carry no data: a request to explain, compare or justify, and a variable's
        definition ("Let n be the number of pens."). Vocabulary added to a problem must change no
        check: "compare it with another method" is no gain of pens."""
        text = with_digits(self.question)
        parts = _SENTENCE.split(text)
        kept = [part for part in parts if not _WORDS_ONLY.match(part.strip())]
        if not any(part.rstrip().endswith("?") or _TASK.match(part.strip()) for part in kept):
            story = " ".join(kept)
            kept = [part for part in parts if part in kept or _story_why(part, story)]
        return " ".join(kept) or text

    @cached_property
    def s(self) -> str:
        """The solution with digits for number words, and without the labels that number its
        steps ("Step 2:" gives no 2)."""
        return _STEP_LABEL.sub("", with_digits(self.solution))

    @cached_property
    def raw_text(self) -> str:
        """Question and solution as written, look-alike letters mapped (for instruction checks)."""
        return plain(self.question + "\n" + self.solution)

    @cached_property
    def sentences(self) -> list[str]:
        """The question split into sentences."""
        return [s.strip() for s in _SENTENCE.split(self.q) if s.strip()]

    @cached_property
    def asks(self) -> list[str]:
        """Sentences that ask something or set a task."""
        return [s for s in self.sentences if s.rstrip().endswith("?") or _TASK.match(s)]

    @cached_property
    def questions(self) -> list[str]:
        """The asks that are questions: a request to explain, check or justify, or to give the
        answer in some form, belongs to the question before it."""
        return [a for a in self.asks if not JUSTIFY.match(a) and not FORMAT.match(a)]

    @cached_property
    def story_sentences(self) -> list[str]:
        """The sentences that tell the story: the question's sentences without its questions."""
        return [s for s in self.sentences if s not in self.questions]

    @cached_property
    def story(self) -> str:
        """The story's sentences as one lower-case text."""
        return " ".join(self.story_sentences).lower()

    @cached_property
    def target(self) -> str:
        """The (last) question, lower-case: what the solution must answer."""
        return self.questions[-1].lower() if self.questions else ""

    @cached_property
    def givens(self) -> list[Given]:
        """Quantities stated in the question, in order."""
        out = []
        for match in _QUANTITY.finditer(self.q):
            currency, number, suffix = match.groups()
            if re.match(r"\d{1,2}:\d{2}", self.q[match.start(2) : match.start(2) + 5]):
                continue
            name = currency or (suffix if suffix != "%" else None)
            out.append(Given(Fraction(number), unit(name), suffix == "%"))
        return out

    @cached_property
    def question_numbers(self) -> list[Fraction]:
        """Every number the question states (fractions and mixed numbers included)."""
        return [as_fraction(n) for n in _NUMBER.findall(self.q)]

    @cached_property
    def solution_numbers(self) -> list[Fraction]:
        """Every number the solution writes, in order."""
        return [as_fraction(n) for n in _NUMBER.findall(self.s)]

    @cached_property
    def verification(self) -> Verification:
        """Every computation the solution states, checked."""
        return verify(self.solution)

    @cached_property
    def answer_sentence(self) -> str:
        """The solution's last sentence with a number in it (where it states its answer), as
        written: not a check of the answer before it, nor a restatement of it that says nothing
        of what the number is ("Ella spends €9.05. So x = €9.05." answers with the first)."""
        parts = [p for p in re.split(r"(?<=[.!?])\s+", self.s.strip()) if p.strip()]
        numbered = [p for p in parts if re.search(r"\d", p)]
        while len(numbered) > 1 and (_CHECKING.match(numbered[-1]) or _restates(numbered[-1], numbered[-2])):
            numbered.pop()  # "Check: 20 % of 50 = 10, and 50 + 10 = 60" verifies the answer before it
        return (numbered or parts or [""])[-1]

    @cached_property
    def final_sentence(self) -> str:
        """The answer sentence, lower-case, without an aside."""
        last = self.answer_sentence.lower()
        bare = _ASIDE.sub("", last)  # "so 14 bows (10 cm is left over)": the aside is not the answer
        return bare if re.search(r"\d", bare) else last

    @cached_property
    def final_answer(self) -> Fraction | None:
        """The last number of the solution."""
        numbers = list(_NUMBER.findall(self.final_sentence))
        return (
            as_fraction(numbers[-1])
            if numbers
            else (self.solution_numbers[-1] if self.solution_numbers else None)
        )

    @cached_property
    def operators(self) -> set[str]:
        """The operations the solution's computations use (+, -, ×, ÷)."""
        ops = {t.text for t in tokens(self.s) if t.kind == "op"}
        ops |= {"÷"} if "/" in ops else set()
        return ops & {"+", "-", "×", "÷"}

    @cached_property
    def constants(self) -> set[Fraction]:
        """Numbers a solution may use unasked: small ones, and the unit factors of what the text is
        about (7 days in a week where it speaks of days, 180° where of angles)."""
        text = self.q + " " + self.s
        constants = set(CONSTANTS)
        for pattern, values in CONTEXT_CONSTANTS:
            if pattern.search(text):
                constants |= set(values)
        return constants

    @cached_property
    def untraced(self) -> list[Fraction]:
        """Numbers the solution uses that the question neither gives nor lets it compute.

        Allowed: the question's numbers (also as percents ↔ decimals), clock parts, values the
        solution's own correct computations produce (from where they are stated on), unit factors
        and other small constants, and anything one operation away from numbers known by then
        (a remainder, "one more", 100 % − 20 %). When the question leaves a quantity vague
        ("some pencils", "one more quiz"), only stated and computed numbers count.
        """
        strict = bool(VAGUE.search(self.q))
        text = self.q + " " + self.s
        constants = self.constants
        known = set(self.question_numbers) | _clock_parts(self.q) | _compound_durations(self.q)
        known |= _compound_parts(self.s, known | {v for _, v in self.verification.results})
        kinds = self._kinds
        # What may be taken apart: a quantity the question gives or the solution computed, never a
        # constant or a scaling of one (else 40 passes as 100 − 60 whenever a 60 is written anywhere).
        wholes = set(known)
        known |= {v / 100 for v in known} | {v * 100 for v in known}
        rates = {g.value for g in self.givens if g.percent}
        known |= {1 + r / 100 for r in rates} | {1 - r / 100 for r in rates}  # × 1.15 for + 15 %
        if _SIMPLIFY.search(text):
            known |= _common_divisors(self.question_numbers)
        factors = [c for c in constants if c > 2 and c not in _STEPPING_STONES]
        results = sorted(self.verification.results, key=lambda r: r[0])
        strangers = []
        written = [as_fraction(n) for n in _NUMBER.findall(self.s)]
        for match in _NUMBER.finditer(self.s):
            value = as_fraction(match.group(1))
            computed = {v for at, v in results if at <= match.start()}
            before = self.s[match.start() - 1] if match.start() else ""
            # a price is no unit factor: "costs £2" must come from somewhere, a constant or not
            priced = bool(before) and before in "$£€" and value not in self.question_numbers
            chosen = value not in self.question_numbers and _SPEED_AFTER.match(self.s, match.end())
            if value in constants and chosen and value not in computed:
                strangers.append(value)  # "at 100 km/h": a speed the solution chose, not a unit factor
                known.add(value)
                continue
            known |= computed
            wholes |= computed
            scaled = value in known or value * 100 in known or value / 100 in known
            stepped = _one_step(value, known, kinds, factors) if not strict else _rate_factor(value, known)
            constant = value in constants and not priced
            if not (scaled or constant or stepped) and not strict:
                stepped = _split(value, wholes, written, factors)
            if scaled or constant or stepped or rounded(value, match.group(1), computed):
                known.add(value)
                continue
            strangers.append(value)
            known.add(value)
        return strangers

    @cached_property
    def _kinds(self) -> dict[Fraction, str]:
        """What each given number measures (a unit's dimension, 'clock', or 'count')."""
        kinds: dict[Fraction, str] = {}
        for part in _clock_parts(self.q):
            kinds.setdefault(part, "clock")
        for given in self.givens:
            kinds.setdefault(given.value, given.unit.dimension if given.unit else "count")
        return kinds


def rounded(value: Fraction, written: str, computed: set[Fraction]) -> bool:
    """A result the solution worked out, rounded: up or down to a whole number (126 ÷ 20 = 6.3, so 7
    minibuses), or to the decimals written (1.2813 s is about 1.28 s)."""
    places = len(written.split(".")[1]) if "." in written else 0
    for v in computed:
        if v.denominator == 1:
            continue
        if places == 0 and value in {math.floor(v), math.ceil(v)}:
            return True
        if places and abs(v - value) <= Fraction(1, 2 * 10**places):
            return True
    return False


_ASIDE = re.compile(r"\s*\([^()]*\)|,? with (?:[^.?!]|\.(?=\d))*?\b(?:left over|to spare|remaining)\b")


def _story_why(sentence: str, story: str) -> bool:
    """Whether ``sentence`` asks why of something the story names ("Why is the rope longer than
    either piece?"): a problem's own question when it has no other. A "why" that names nothing of
    the story ("Why does this method work?") asks nothing of it, and gives a problem with no
    question none."""
    said = sentence.strip().lower()
    if not (said.startswith("why") and said.endswith("?")):
        return False
    named = set(_WORD.findall(story.lower())) - _SAYS_NOTHING
    return bool(set(_WORD.findall(said)) & named)


# A word that may name a thing of the story (four letters or more), and the words that any question
# about a method or an answer may use, which name none.
_WORD = re.compile(r"[a-z]{4,}")
_SAYS_NOTHING = frozenset(
    re.findall(
        r"\w+",
        "this that these those does work works worked method methods answer answers correct right true "
        "wrong numbers number values value quantities result results solution step steps reasoning "
        "sound must have would could should your their there what with from make makes sense always "
        "never every each same different other",
    )
)


def _restates(sentence: str, before: str) -> bool:
    """``sentence`` only repeats the last number of ``before``, in words that add nothing."""
    figures = r"\d+(?:[.:,/]\d+)*"  # as written: a clock time or 1,800 is one figure
    numbers, earlier = re.findall(figures, sentence), re.findall(figures, before)
    if not numbers or not earlier or numbers[-1] != earlier[-1] or set(numbers) - set(earlier):
        return False
    if re.search(r"[-+×x*÷/−]\s*\d", sentence.replace(numbers[-1], "")):
        return False  # it computes something
    said = set(re.findall(r"[a-z]+", before.lower()))
    return all(w in _RESTATING or w in said for w in re.findall(r"[a-z]+", sentence.lower()))


_CHECKING = re.compile(r"\s*(?:check(?:ing)?|to check|as a check)\b", re.I)
_SMALL = {Fraction(n) for n in range(1, 13)}
_STEPPING_STONES = {Fraction(n) for n in (5, 10, 25, 50)}  # 10 % then 5 %: used, not multiplied by
_SIMPLIFY = re.compile(
    r"simplif|simplest|lowest terms|divid\w* (?:the )?(?:top|both|numerator)|common factor|cancel", re.I
)


def _common_divisors(numbers: list[Fraction]) -> set[Fraction]:
    """Common divisors (> 1) of two whole numbers the question gives (to simplify a fraction)."""
    whole = sorted({int(n) for n in numbers if n.denominator == 1 and 1 < n <= 100_000})
    out: set[Fraction] = set()
    for i, a in enumerate(whole):
        for b in whole[i + 1 :]:
            g = math.gcd(a, b)
            out |= {Fraction(d) for d in range(2, g + 1) if g % d == 0} if g <= 1000 else {Fraction(g)}
    return out


# "1 hour 15 minutes", "2 h 30 min": hours and minutes said as one duration
COMPOUND_DURATION = re.compile(r"(?<![\d.])(\d+) ?(?:hours?|h) (?:and )?(\d+) ?(?:minutes?|min)\b")


def _compound_durations(text: str) -> set[Fraction]:
    """1 hour 15 minutes is 1.25 hours and 75 minutes."""
    out: set[Fraction] = set()
    for hours, minutes in COMPOUND_DURATION.findall(text):
        out |= {int(hours) + Fraction(int(minutes), 60), Fraction(int(hours) * 60 + int(minutes))}
    return out


def _compound_parts(text: str, known: set[Fraction]) -> set[Fraction]:
    """2.5 hours written as 2 hours 30 minutes, 17.5 minutes as 17 minutes 30 seconds: both parts
    come from the known value."""
    out: set[Fraction] = set()
    for big, small in (("hours?|h", "minutes?|min"), ("minutes?|min", "seconds?|s")):
        for whole, part in re.findall(rf"(\d+) ?(?:{big}) (?:and )?(\d+) ?(?:{small})\b", text):
            w, p = int(whole), int(part)
            if w + Fraction(p, 60) in known or w * 60 + p in known:
                out |= {Fraction(w), Fraction(p)}
    return out


def _clock_parts(text: str) -> set[Fraction]:
    parts: set[Fraction] = set()
    for hours, minutes in _CLOCK.findall(text):
        parts |= {Fraction(int(hours)), Fraction(int(minutes)), Fraction(60 - int(minutes))}
    return parts


def _one_step(
    value: Fraction, known: set[Fraction], kinds: dict[Fraction, str], factors: list[Fraction]
) -> bool:
    """Whether ``value`` is one operation away from the numbers known so far: any operation on two
    of them (a remainder, a difference), ± 1, a unit factor the text's context allows (× 60, ÷ 100),
    or 100 − a percent. Sums and differences join numbers of one kind only (80 km/h + 40 minutes
    is no step)."""
    for a in known:
        if value in (a + 1, a - 1, 100 - a) or any(value in (a * k, a / k) for k in factors):
            return True
        if a and (value == 1 / a or (0 < a < 1 and value == 1 - a)):
            return True  # a rate from a time (1/12 of the job a minute), the rest of a fraction
        if a and value < 1 and any(value == c / a for c in _SMALL):
            return True  # 2/6 of the outcomes: a small count over a known total, a share below 1
        for b in known:
            if value in (a * b,) or (b and value in (a / b, a // b, -(-a // b))):
                return True
            if value in (a + b, a - b) and _same_kind(kinds.get(a), kinds.get(b)):
                return True
            if value in (a + 2 * b, a - 2 * b) and _same_kind(kinds.get(a), kinds.get(b)):
                return True  # a path 1 m wide all round: 20 + 2 × 1
    return False


def _split(value: Fraction, wholes: set[Fraction], written: list[Fraction], factors: list[Fraction]) -> bool:
    """A given quantity taken apart: 35 % as 30 % + 5 % (the other part written in the solution),
    75 minutes as 1 hour and 15 minutes (what is left over a unit factor)."""
    for a in wholes:
        if a > value > 0 and a - value != value and (a - value) in written:
            return True
        if any(a > k and value in (a % k, a // k) for k in factors):
            return True
    return False


def _rate_factor(value: Fraction, known: set[Fraction]) -> bool:
    """1.15 for a rise of 0.15 (15 %), 0.8 for a fall of 0.2: the multiplier of a known rate."""
    return any(0 < a < 1 and value in (1 + a, 1 - a) for a in known)


def _same_kind(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b
