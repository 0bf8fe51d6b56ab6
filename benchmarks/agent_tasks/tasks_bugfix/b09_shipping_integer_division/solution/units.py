"""Unit conversions for parcels: the warehouse scale reports grams, the tape measure
centimetres; carriers charge by the kilogram."""

from __future__ import annotations

import re

GRAMS_PER_KG = 1000
VOLUMETRIC_DIVISOR = 5000
"""Carriers' rule: a parcel weighs at least length x width x height (cm) / 5000 kg."""


def kilograms(grams: int) -> float:
    """``grams`` in kilograms, fractions kept (1500 -> 1.5)."""
    if grams < 0:
        raise ValueError(f"a weight cannot be negative, got {grams} g")
    return grams / GRAMS_PER_KG


def volumetric_kilograms(length_cm: float, width_cm: float, height_cm: float) -> float:
    """The weight carriers charge a bulky parcel for, whatever it really weighs."""
    return length_cm * width_cm * height_cm / VOLUMETRIC_DIVISOR


_WEIGHT = re.compile(r"\s*(\d+(?:[.,]\d+)?)\s*(kg|g)\s*", re.IGNORECASE)


def parse_weight(label: str) -> int:
    """Grams of a weight as suppliers write it on a label: ``"1.2 kg"``, ``"850g"``, ``"0,5 KG"``.

    Raises:
        ValueError: ``label`` is not a number followed by ``g`` or ``kg``.
    """
    match = _WEIGHT.fullmatch(label)
    if match is None:
        raise ValueError(f"not a weight: {label!r}")
    number = float(match[1].replace(",", "."))
    return round(number * GRAMS_PER_KG) if match[2].lower() == "kg" else round(number)
