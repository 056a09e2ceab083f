"""Text normalisation for checking: hidden characters, look-alike letters, number words, fractions.

Untrusted text hides instructions with zero-width characters and Cyrillic or Greek letters that look
Latin (``іgnore``); :func:`plain` undoes both. :func:`with_digits` turns number words into digits
(text2num's ``alpha2digit``) and fraction words into fractions, so a solution written in words
("fourteen plus nine makes twenty-two") can be checked like one written in symbols.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

from agents.verify.units import CURRENCY

ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\ufeff\u00ad\u180e]")
# Letters of other scripts that render like Latin ones (the Unicode confusables most used to evade filters).
CONFUSABLES = str.maketrans(
    {
        **dict(zip("аеорсухіјѕԁӏԛԝАВЕКМНОРСТХІЈЅ", "aeopcyxijsdlqwABEKMHOPCTXIJS", strict=True)),
        **dict(zip("οαεικνρτυχΑΒΕΗΙΚΜΝΟΡΤΥΧΖ", "oaeikvptuxABEHIKMNOPTYXZ", strict=True)),
    }
)
_LATIN = re.compile(r"[A-Za-z]")
_LOOKALIKE = "аеорсухіјѕԁӏԛԝАВЕКМНОРСТХІЈЅοαεικνρτυχΑΒΕΗΙΚΜΝΟΡΤΥΧΖ"
# Only letters that pass for Latin ones disguise a word; π in "πr²h" is mathematics.
_OTHER = re.compile(f"[{_LOOKALIKE}]")
_WORD = re.compile(r"\w+")


_KEEP = frozenset("²³")  # NFKC would turn m² into m2 and 6² into 62


def _nfkc(text: str) -> str:
    return "".join(ch if ch in _KEEP else unicodedata.normalize("NFKC", ch) for ch in text)


def plain(text: str) -> str:
    """NFKC (superscripts kept), without zero-width characters, look-alike letters mapped to Latin."""
    return ZERO_WIDTH.sub("", _nfkc(text)).translate(CONFUSABLES)


def disguised(text: str) -> bool:
    """Zero-width characters inside text, or a word mixing Latin with Greek or Cyrillic letters."""
    if ZERO_WIDTH.search(text):
        return True
    return any(_LATIN.search(w) and _OTHER.search(w) for w in _WORD.findall(_nfkc(text)))


Substitution = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]
_OPERATORS: list[Substitution] = [
    (re.compile(r"[−–—]"), "-"),
    (re.compile(r"[·∙⋅]"), "×"),
    (re.compile(r"(?<=\d)⁄(?=\d)"), "/"),  # NFKC writes ½ as 1⁄2
    (re.compile(rf"(?<=[\d)²])\s*[x*]\s*(?=[\d(√]|{CURRENCY})"), " × "),
    (re.compile(r"\bper ?cent\b", re.I), "%"),
    (re.compile(r"\b(?:km|kilomet(?:re|er)s?) (?:per|an|a) hour\b", re.I), "km/h"),
    (re.compile(r"\b(?:m|met(?:re|er)s?) (?:per|a) second\b", re.I), "m/s"),
    (re.compile(r"\bmiles (?:per|an|a) hour\b", re.I), "mph"),
    # 10 000 -> 10000, but not after a decimal's fraction part: "2.5 100-gram bags" is no 2.5100
    (re.compile(r"(?<=\d)(?<!\.\d)(?<!\.\d\d)(?<!\.\d\d\d)[ \u202f\u00a0](?=\d{3}\b)"), ""),
    (re.compile(r"(?<=\d),(?=\d{3}(?!\d)(?!,\d))|(?<=\d),(?=\d{3},\d{3})"), ""),  # 1,500 and 1,950p
]
# where a time of day is said, and what may follow it
_SAID = (
    r"(?:(?<=\bat )|(?<=\bby )|(?<=\buntil )|(?<=\btill )|(?<=\bbefore )|(?<=\bafter )|(?<=\btime is )"
    r"|(?<=\btime was )|(?<== ))"
)
_TIME_ENDS = r"(?=\s?[ap]\.?m\b|\s*[.,;!?)]|\s*$|\s(?:and|so|in|on|when|then|the|that|this)\b)"


def _before_hour(hour: str, minutes: int) -> str:
    """ "a quarter to 9" is 8:45 (and a quarter to 1 is 12:45)."""
    return f"{(int(hour) - 2) % 12 + 1}:{60 - minutes:02d}"


_CLOCK: list[Substitution] = [
    (re.compile(r"\bhalf an hour\b", re.I), "30 minutes"),
    (re.compile(r"\ba quarter of an hour\b", re.I), "15 minutes"),
    (re.compile(r"\b3 quarters of an hour\b", re.I), "45 minutes"),
    (re.compile(r"\b(in|for|within) an hour\b", re.I), r"\1 1 hour"),
    (re.compile(r"\bhalf past (\d{1,2})\b", re.I), r"\1:30"),
    (re.compile(r"\b(?:a )?quarter past (\d{1,2})\b", re.I), r"\1:15"),
    (re.compile(r"\b(?:a )?quarter to (\d{1,2})\b", re.I), lambda m: _before_hour(m.group(1), 15)),
    # "ten to nine", "25 to 11": minutes to an hour, where a time is said (after "at", "is", "="),
    # not a range ("from 5 to 10") nor a ratio ("3 to 4" counts no such minutes)
    (
        re.compile(rf"{_SAID}\b(5|10|20|25) (?:minutes )?to (\d{{1,2}})\b{_TIME_ENDS}", re.I),
        lambda m: _before_hour(m.group(2), int(m.group(1))),
    ),
    # "seven thirty", "at 8 45 pm": an hour and its minutes said one after the other
    (re.compile(rf"(?<=\bat )(\d{{1,2}}) ([0-5]\d)\b{_TIME_ENDS}", re.I), r"\1:\2"),
    (re.compile(r"\b(\d{1,2})\.([0-5]\d) ?(?=[ap]\.?m\b)", re.I), r"\1:\2 "),  # "7.30 pm"
    (re.compile(r"\b(?:noon|midday)\b", re.I), "12:00 pm"),
    (re.compile(r"\bmidnight\b", re.I), "12:00 am"),
    (
        re.compile(r"\b(\d{1,2}) past (\d{1,2})\b(?! ?(?:minutes|hours))", re.I),
        lambda m: f"{m.group(2)}:{int(m.group(1)):02d}",
    ),
    (re.compile(r"\b(\d{1,2}) o'clock\b", re.I), r"\1:00"),
]
_SMALL: dict[str, str] = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9",
}  # fmt: skip
_DENOMINATORS = {
    "half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourths": 4,
    "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7, "eighth": 8,
    "eighths": 8, "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10, "twelfths": 12, "hundredths": 100,
}  # fmt: skip


def _mixed(match: re.Match[str], numerator: str | None = None, denominator: int | None = None) -> str:
    """``2 and 3/4`` as the mixed number ``2 3/4`` when the fraction is a proper one (else as written)."""
    whole, *rest = match.groups()
    top, bottom = (numerator, rest[0]) if numerator else (rest[0], str(denominator or rest[1]))
    if not 0 < int(top) < int(bottom) or int(bottom) < 2:
        return match.group(0)
    return f"{whole} {top}/{bottom}"


_FRACTIONS: list[Substitution] = [
    # "two-thirds", "3-quarters": a hyphenated fraction word (text2num leaves "two-thirds" alone)
    (
        re.compile(
            rf"\b(one|two|three|four|five|six|seven|eight|nine|\d+)-({'|'.join(_DENOMINATORS)})\b", re.I
        ),
        lambda m: f"{_SMALL.get(m.group(1).lower(), m.group(1))}/{_DENOMINATORS[m.group(2).lower()]}",
    ),
    (re.compile(r"\b(\d+) and (?:a|one|1) half\b", re.I), r"\1 1/2"),
    (re.compile(r"\b(\d+) and (?:a|one|1) quarter\b", re.I), r"\1 1/4"),
    # "two and three quarter miles": the fraction word is singular before the noun it measures
    (re.compile(r"(?<!between )\b(\d+) and (\d+) quarters?\b", re.I), lambda m: _mixed(m, None, 4)),
    (re.compile(r"\b(\d+) (\d+)(?:st|nd|rd|th)s?\b(?= of\b)", re.I), r"\1/\2"),
    (re.compile(r"\ban? (\d+)(?:st|nd|rd|th)\b(?= of\b)", re.I), r"1/\1"),
    (re.compile(r"\b(\d+) quarters\b", re.I), r"\1/4"),
    (re.compile(r"\b(?:a|one) quarter\b", re.I), "1/4"),
    (re.compile(r"\b([23]) quarter\b(?= [a-z])", re.I), r"\1/4"),  # "a three quarter mile walk"
    (re.compile(r"\b(?:a|one) half\b", re.I), "1/2"),
    (re.compile(r"\bhalf\b(?= of\b)", re.I), "1/2"),
    (re.compile(r"\b(?:a|one) third\b", re.I), "1/3"),
    # worded mixed numbers: "two and three quarters" (text2num: "2 and 3/4"), "three and two
    # thirds" ("3 and 2 3rds"), "six and a third" ("6 and a 3rd")
    (re.compile(r"(?<!between )\b(\d+) and (\d+) (\d+)(?:rd|th)s?\b", re.I), _mixed),
    (re.compile(r"(?<!between )\b(\d+) and (?:a|1) (\d+)(?:rd|th)\b", re.I), lambda m: _mixed(m, "1")),
    (re.compile(r"(?<!between )\b(\d+) and (\d+)/(\d+)\b(?!\.\d| of\b)", re.I), _mixed),
    # "two thirds", "five eighths": a plural ordinal after a number is a fraction
    (re.compile(r"\b(\d+) (\d+)(?:rd|th)s\b", re.I), r"\1/\2"),
]


# Money said in words: "two pounds forty-five" is £2.45, "three dollars and fifty cents" $3.50.
_MONEY: list[Substitution] = [
    (
        re.compile(
            r"\b(\d+) pounds? (?:and )?(\d{1,2})(?: ?(?:pence|p))?\b"
            r"(?! ?(?:pounds?|kg|g|%|ounces?|oz|stone))",
            re.I,
        ),
        lambda m: f"£{m.group(1)}.{int(m.group(2)):02d}",
    ),
    (
        re.compile(r"\b(\d+) dollars? (?:and )?(\d{1,2}) cents?\b", re.I),
        lambda m: f"${m.group(1)}.{int(m.group(2)):02d}",
    ),
    (
        re.compile(r"\b(\d+) euros? (?:and )?(\d{1,2}) cents?\b", re.I),
        lambda m: f"€{m.group(1)}.{int(m.group(2)):02d}",
    ),
]
# "2⅓": NFKC would run the whole number into the fraction's numerator (21/3).
_VULGAR = re.compile(r"(?<=\d)(?=[½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅛⅜⅝⅞])")

_AND = re.compile(r"\s+and\s+", re.I)
_SCALE_WORD = re.compile(r"(hundred|thousand|million|billion)\W*$", re.I)
_SCALES = re.compile(r"hundred|thousand|million|billion", re.I)
_RANK = {"hundred": 1, "thousand": 2, "million": 3, "billion": 4}
_NUMBER_WORDS = re.compile(
    r"(?:(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|"
    r"ninety|hundred|thousand|million|billion)(?:[\s-]+|$))+",
    re.I,
)


def _words_to_digits(text: str) -> str:
    """alpha2digit, except that "and" joins number words only after a scale word: "two hundred and
    forty" is 240, but "forty and five" is two numbers (alpha2digit would read 45)."""
    from text_to_num import alpha2digit

    pieces, start = [], 0
    for match in _AND.finditer(text):
        before = _SCALE_WORD.search(text[start : match.start()])
        after = _NUMBER_WORDS.match(text, match.end())
        scales_after = _SCALES.findall(after.group(0)) if after else []
        # "fifteen hundred and six hundred" is two numbers: a scale as large after "and" as before
        if not before or any(_RANK[s.lower()] >= _RANK[before.group(1).lower()] for s in scales_after):
            pieces.append(text[start : match.start()])
            pieces.append(match.group(0))
            start = match.end()
    pieces.append(text[start:])
    return "".join(
        p if p.isspace() or _AND.fullmatch(p) else str(alpha2digit(p, "en", threshold=0)) for p in pieces
    )


# text2num reads every "second" as the ordinal ("3 metres per 2nd"): where it is a unit of time,
# it is set aside while number words are converted.
_SECOND_UNIT = re.compile(r"\b(per|a|an|one|each|every|\d+(?:\.\d+)?) second\b", re.I)
_SECOND_KEPT = "SECONDUNITKEPT"


# "10⁴": NFKC would run a superscript exponent into its base (104); it is written ^4 first. A lone ² or
# ³ stays, as a square or a cube ("6²", "m²").
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_EXPONENT = re.compile(r"(?<=\d)[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]{2,}|(?<=\d)[⁰¹⁴⁵⁶⁷⁸⁹⁻⁺]")
# Scientific notation, written the ways people write it: 3.2 × 10^4, 3.2×10**4, 3.2 × 10² (with x, *
# and · already made ×), 3.2e4, 1.5E-3. A mantissa of one digit before any point, so that a product
# such as "12 × 10^2" stays a computation; not after ÷, / or ^, where reading "a × 10^n" as one number
# would change what the expression computes (8 ÷ 2 × 10^3 is 4000 read left to right, not 0.004).
_SCIENTIFIC = re.compile(
    r"(?<![\w.^/÷])(?<![\^/÷] )(?P<mantissa>\d(?:\.\d+)?)"
    r"(?:\s?×\s?10\s?(?:(?:\^|\*\*)\s?(?:\((?P<bracketed>[-+]?\d{1,2})\)|(?P<power>[-+]?\d{1,2}))"
    r"|(?P<square>[²³]))"
    r"|(?<=\d)[eE](?P<e>[-+]?\d{1,2}))"
    r"(?![\w^²³]|\.\d)"
)


def _exponents(text: str) -> str:
    return _EXPONENT.sub(lambda m: "^" + m.group(0).translate(_SUPERSCRIPTS), text)


def decimal_text(value: Fraction) -> str:
    """A value with a finite decimal expansion written out in full, exactly: 32000, 0.0015."""
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
    digits = str(abs(value * 10**places).numerator).rjust(places + 1, "0")
    whole, part = (digits[: len(digits) - places], digits[len(digits) - places :]) if places else (digits, "")
    return ("-" if value < 0 else "") + whole + (f".{part}" if part else "")


def _scientific(match: re.Match[str]) -> str:
    """The number scientific notation stands for, as an exact decimal every reader takes as one
    literal (3.2 × 10^4 → 32000): the panel then sees the quantity, not a 3.2, a 10 and a 4."""
    said = (
        match.group("power")
        or match.group("bracketed")
        or match.group("e")
        or {"²": "2", "³": "3"}[match.group("square")]
    )
    return decimal_text(Fraction(match.group("mantissa")) * Fraction(10) ** int(said))


@lru_cache(maxsize=4096)
def with_digits(text: str) -> str:
    """``plain`` text with numbers written as digits, fractions as a/b, clock phrases as h:mm, and
    scientific notation as the exact number it stands for."""
    kept = _SECOND_UNIT.sub(rf"\1 {_SECOND_KEPT}", plain(_exponents(_VULGAR.sub(" ", text))))
    out: str = _words_to_digits(kept).replace(_SECOND_KEPT, "second")
    for pattern, replacement in [*_OPERATORS, (_SCIENTIFIC, _scientific), *_CLOCK, *_FRACTIONS, *_MONEY]:
        out = pattern.sub(replacement, out)
    return out
