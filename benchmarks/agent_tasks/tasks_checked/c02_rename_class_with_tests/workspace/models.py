from dataclasses import dataclass, field


@dataclass
class UserRecord:
    """A user of the service."""

    name: str
    email: str
    roles: list[str] = field(default_factory=list)

    def is_admin(self) -> bool:
        return "admin" in self.roles
