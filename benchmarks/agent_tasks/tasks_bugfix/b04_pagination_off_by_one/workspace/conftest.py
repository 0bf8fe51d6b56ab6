import pytest


@pytest.fixture
def products():
    """45 product names, as the listing gets them from the database."""
    return [f"product-{n:02d}" for n in range(45)]
