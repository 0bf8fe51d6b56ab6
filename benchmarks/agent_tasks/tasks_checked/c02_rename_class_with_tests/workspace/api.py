from models import UserRecord
from store import Store


def describe(user: UserRecord) -> str:
    kind = "admin" if user.is_admin() else "user"
    return f"{user.name} <{user.email}> ({kind})"


def promote(store: Store, email: str) -> UserRecord:
    user = store.find(email)
    if not isinstance(user, UserRecord):
        raise KeyError(email)
    user.roles.append("admin")
    return user
