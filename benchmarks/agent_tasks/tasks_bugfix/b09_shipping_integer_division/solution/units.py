"""Unit conversions for parcels: the warehouse scale reports grams, the tape measure
centimetres; carriers charge by the kilogram."""

from __future__ import annotations

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
