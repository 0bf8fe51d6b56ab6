from models import UserRecord


class Store:
    """Users by email."""

    def __init__(self) -> None:
        self._by_email: dict[str, UserRecord] = {}

    def create(self, name: str, email: str) -> UserRecord:
        record = UserRecord(name=name, email=email)
        self._by_email[email] = record
        return record

    def find(self, email: str) -> UserRecord | None:
        return self._by_email.get(email)
