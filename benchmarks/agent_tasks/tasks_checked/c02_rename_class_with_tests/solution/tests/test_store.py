from api import describe, promote
from models import Account
from store import Store


def test_create_and_find():
    store = Store()
    made = store.create("Ada", "ada@example.org")
    assert isinstance(made, Account)
    assert store.find("ada@example.org") is made


def test_promote_makes_an_admin():
    store = Store()
    store.create("Ada", "ada@example.org")
    assert describe(promote(store, "ada@example.org")) == "Ada <ada@example.org> (admin)"
