"""Units a word problem uses: each one's dimension and its size in base units (exact fractions)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Unit:
    """A unit: its dimension (length, mass, time, volume, money, speed, area, ...) and its scale."""

    name: str
    dimension: str
    scale: Fraction  # in the dimension's base unit (m, g, s, l, dollar, m/s, m²)
    time_scale: Fraction | None = None  # for rates: the size of the "per time" unit, in seconds


F = Fraction
_TABLE: dict[str, Unit] = {}


def _add(dimension: str, scale: Fraction, *names: str, time_scale: Fraction | None = None) -> None:
    for name in names:
        _TABLE[name] = Unit(names[0], dimension, scale, time_scale)


_add("length", F(1, 1000), "mm", "millimetre", "millimetres", "millimeter", "millimeters")
_add("length", F(1, 100), "cm", "centimetre", "centimetres", "centimeter", "centimeters")
_add("length", F(1), "m", "metre", "metres", "meter", "meters")
_add("length", F(1000), "km", "kilometre", "kilometres", "kilometer", "kilometers")
_add("mass", F(1, 1000), "mg", "milligram", "milligrams")
_add("mass", F(1), "g", "gram", "grams")
_add("mass", F(1000), "kg", "kilogram", "kilograms", "kilo", "kilos")
_add("mass", F(1000000), "t", "tonne", "tonnes")
_add("volume", F(1, 1000), "ml", "millilitre", "millilitres", "milliliter", "milliliters", "mL")
_add("volume", F(1), "l", "litre", "litres", "liter", "liters", "L")
_add("time", F(1), "s", "sec", "secs", "second", "seconds")
_add("time", F(60), "min", "mins", "minute", "minutes")
_add("time", F(3600), "h", "hr", "hrs", "hour", "hours")
_add("time", F(86400), "day", "days")
_add("time", F(604800), "week", "weeks")
_add("money", F(1, 100), "cents", "cent", "¢", "pence", "p")
_add("money", F(1), "$", "dollars", "dollar", "£", "pounds", "€", "euros")
# ISO 4217 codes of the currencies problems use, and the signs NFKC keeps: one unit of account each
# (a problem never converts between them), so "4 × CHF 161.07 = CHF 644.28" is a product to check.
CODES = (
    "USD", "EUR", "GBP", "CHF", "JPY", "CNY", "INR", "AUD", "CAD", "NZD", "SEK", "NOK", "DKK", "ZAR",
    "SGD", "HKD", "MXN", "BRL", "PLN", "KES", "NGN", "PHP", "Rs",
)  # fmt: skip
_add("money", F(1), *CODES)
SIGNS = "$£€¥₹₩₦₱"
# A currency written before its amount: a sign, or a code right before a number ("CHF 161.07")
CURRENCY = rf"[{SIGNS}]|\b(?:{'|'.join(CODES)})\b(?=\s?\d)"
_add("speed", F(1000, 3600), "km/h", "kph", "kmh", time_scale=F(3600))
_add("speed", F(1), "m/s", time_scale=F(1))
_add("speed", F(1609344, 3600000), "mph", time_scale=F(3600))
_add("area", F(1, 10000), "cm²", "cm2")
_add("area", F(1), "m²", "m2")
_add("area", F(1000000), "km²", "km2")
_add("area", F(10000), "ha", "hectare", "hectares")
# A cubic centimetre is a millilitre: litres and cubic units are one dimension, so "2 l = 200 cm³"
# is a conversion the verifier checks (it is wrong) rather than two unrelated units.
_add("volume", F(1, 1000000), "mm³", "mm3")
_add("volume", F(1, 1000), "cm³", "cm3")
_add("volume", F(1000), "m³", "m3")
_add("temperature", F(1), "°C", "°F", "degrees")
_add("angle", F(1), "°")

UNIT_PATTERN = "|".join(
    sorted((re.escape(n) for n in _TABLE if n not in ("$", "£", "€", "¢", "Rs")), key=len, reverse=True)
)


_LOWER = {name.lower(): u for name, u in _TABLE.items()}


def unit(name: str | None) -> Unit | None:
    """The unit called ``name`` (case kept for L vs l, else any case), if we know it."""
    if name is None:
        return None
    return _TABLE.get(name) or _LOWER.get(name.lower())


def convertible(a: Unit | None, b: Unit | None) -> bool:
    """Two units of one dimension (where a conversion between them is a checkable claim)."""
    return a is not None and b is not None and a.dimension == b.dimension and a.dimension != "temperature"
