"""Shipping prices: a base fee per zone plus a rate per chargeable kilogram.

The chargeable weight is the larger of the real and the volumetric weight, rounded up to
the next half kilogram (0.3 kg is charged as 0.5 kg, 1.3 kg as 1.5 kg).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from units import kilograms, volumetric_kilograms

ZONES: dict[str, tuple[float, float]] = {
    "domestic": (4.90, 1.20),
    "eu": (9.50, 2.80),
    "world": (19.00, 6.50),
}
"""Zone -> (base fee, price per kilogram), in euros."""


@dataclass(frozen=True)
class Parcel:
    """A parcel as the warehouse measured it."""

    grams: int
    length_cm: float
    width_cm: float
    height_cm: float


def chargeable_kilograms(parcel: Parcel) -> float:
    """The weight the carrier charges for, in half kilograms."""
    real = kilograms(parcel.grams)
    bulk = volumetric_kilograms(parcel.length_cm, parcel.width_cm, parcel.height_cm)
    return math.ceil(max(real, bulk) * 2) / 2


def price(parcel: Parcel, zone: str) -> float:
    """The price of sending ``parcel`` to ``zone``, in euros to the cent.

    Raises:
        KeyError: An unknown zone.
    """
    if zone not in ZONES:
        raise KeyError(f"no shipping zone {zone!r}; known: {', '.join(ZONES)}")
    base, per_kg = ZONES[zone]
    return round(base + per_kg * chargeable_kilograms(parcel), 2)
