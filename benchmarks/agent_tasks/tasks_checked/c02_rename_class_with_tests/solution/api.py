from models import Account
from store import Store


def describe(user: Account) -> str:
    kind = "admin" if user.is_admin() else "user"
    return f"{user.name} <{user.email}> ({kind})"


def promote(store: Store, email: str) -> Account:
    user = store.find(email)
    if not isinstance(user, Account):
        raise KeyError(email)
    user.roles.append("admin")
    return user
