import pytest

from shipping import Parcel, chargeable_kilograms, price

SMALL_BOX = (20, 15, 10)


def test_whole_kilograms():
    assert price(Parcel(2000, *SMALL_BOX), "domestic") == 7.30


def test_part_of_a_kilogram_rounds_up_to_the_half():
    assert chargeable_kilograms(Parcel(1300, *SMALL_BOX)) == 1.5
    assert price(Parcel(1300, *SMALL_BOX), "domestic") == 6.70


def test_light_letter_pays_for_half_a_kilogram():
    assert price(Parcel(250, 30, 21, 1), "world") == 22.25


def test_heavy_parcel_abroad():
    assert price(Parcel(2600, *SMALL_BOX), "world") == 38.50


def test_bulky_parcel_is_charged_by_volume():
    assert chargeable_kilograms(Parcel(2000, 50, 40, 30)) == 12.0
    assert price(Parcel(2000, 50, 40, 30), "eu") == 43.10


def test_unknown_zone_is_refused():
    with pytest.raises(KeyError):
        price(Parcel(1000, *SMALL_BOX), "moon")
