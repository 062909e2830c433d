"""JavaScript numbers: ``parseInt`` beyond 2**53 and ``String(number)`` (ECMAScript Number::toString)."""

from __future__ import annotations

import math

_MAX_SAFE_INTEGER = 2**53

_Number = int | float


def _js_int(text: str, base: int) -> _Number:
    """`parseInt` as JavaScript computes it: exact up to 2**53, the nearest double beyond."""
    value = int(text, base)
    if value == 0 and text.startswith("-"):
        return -0.0
    if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
        return value
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _js_number_to_string(value: _Number) -> str:
    """JavaScript's ``String(number)`` (ECMAScript Number::toString), used for numeric keys."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # n: position of the decimal point relative to the first significant digit.
    point = len(whole) + (int(exp_text) if exp_text else 0)
    if whole == "0":
        stripped = fraction.lstrip("0")
        point = -(len(fraction) - len(stripped)) + (int(exp_text) if exp_text else 0)
        digits = stripped
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exponent = point - 1
    exp_sign = "+" if exponent >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{exp_sign}{abs(exponent)}"
