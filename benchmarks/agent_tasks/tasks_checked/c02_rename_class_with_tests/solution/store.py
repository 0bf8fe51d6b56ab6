from models import Account


class Store:
    """Users by email."""

    def __init__(self) -> None:
        self._by_email: dict[str, Account] = {}

    def create(self, name: str, email: str) -> Account:
        record = Account(name=name, email=email)
        self._by_email[email] = record
        return record

    def find(self, email: str) -> Account | None:
        return self._by_email.get(email)
