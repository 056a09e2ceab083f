"""Project names people can tell apart: NFKC-normalised, with no invisible characters and no
mixture of scripts that look alike.

A project's name is how an operator and a tenant's admin recognise it in lists, audit entries and
``keys create --project NAME``. ``school-north`` written with a Cyrillic ``о``, with a zero-width
space, or with a right-to-left override reads the same as the real one but is another project.

- **NFKC** first: full-width ``ｓｃｈｏｏｌ``, mathematical bold letters and ligatures become the
  letters they stand for, so two spellings of one name are one name (and the second is a 409).
- **Invisible** characters are refused, by general category — format characters (``Cf``: zero-width
  space, joiners, the bidirectional embeddings, overrides and isolates, the byte-order mark, soft
  hyphen, tag characters), controls (``Cc``), line and paragraph separators, private-use,
  unassigned and surrogate code points — and by a short list of characters that are letters or
  marks but draw nothing (the Hangul fillers, the Braille blank, the combining grapheme joiner,
  variation selectors).
- **Mixed scripts**: the letters of a name are of one script, or of one of the combinations that
  Unicode's "highly restrictive" level (UTS #39, section 5.2) allows: Latin with Han and Japanese
  kana, Latin with Han and Bopomofo, Latin with Han and Hangul. Digits, punctuation and combining
  marks belong to every script.

Python's ``unicodedata`` has no Script property, so a letter's script is read from its Unicode name,
whose first word names the script for the letters of every living script (``LATIN SMALL LETTER A``,
``CYRILLIC SMALL LETTER A``, ``GREEK SMALL LETTER OMICRON``, ``CJK UNIFIED IDEOGRAPH-4E00``). We
chose this over a package: the maintained ones bring confusable tables far larger than a check of a
200-character name needs, or follow Unicode releases late; this check needs only the standard
library and follows the Unicode version of the running Python. Its approximation — a few historic
scripts share a first word (``OLD ITALIC``, ``OLD PERSIAN``) — can only let such a mixture through,
never refuse a name of one script.
"""

from __future__ import annotations

import unicodedata

# Letters and marks that draw nothing (Unicode's Default_Ignorable_Code_Point, beyond category Cf).
_BLANK = frozenset({0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0}) | frozenset(
    [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]
)
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp"})
# Scripts that may be mixed in one name (UTS #39 "highly restrictive"); any single script may stand alone.
_MIXABLE = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
# First words of letters' names that are no script: they go with any.
_NO_SCRIPT = frozenset({"MODIFIER", "SUPERSCRIPT", "SUBSCRIPT", "KATAKANA-HIRAGANA"})


def script_of(char: str) -> str | None:
    """The script of a letter, from the first word of its Unicode name (CJK ideographs: HAN); None
    for what is not a letter, which every script shares."""
    if not unicodedata.category(char).startswith("L"):
        return None
    first = unicodedata.name(char, "").split(" ", 1)[0]
    if first in ("CJK", "IDEOGRAPHIC"):
        return "HAN"
    return None if first in _NO_SCRIPT else first


def project_name(name: str) -> str:
    """``name`` NFKC-normalised and stripped; ValueError naming the first invisible character, or
    the scripts mixed, when people could mistake it for another name."""
    text = unicodedata.normalize("NFKC", name).strip()
    if not text:
        raise ValueError("a project needs a name")
    for char in text:
        code = ord(char)
        if unicodedata.category(char) in _INVISIBLE_CATEGORIES or code in _BLANK:
            label = unicodedata.name(char, "an unassigned or control character")
            raise ValueError(f"a project name may not hold invisible characters: U+{code:04X} ({label})")
    scripts = {s for s in map(script_of, text) if s is not None}
    if len(scripts) > 1 and not any(scripts <= allowed for allowed in _MIXABLE):
        raise ValueError(
            f"a project name's letters are of one script, not mixed ({', '.join(sorted(scripts)).lower()}): "
            "mixed scripts make look-alikes of other names"
        )
    return text
