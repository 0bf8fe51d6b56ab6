"""Settings of the app: defaults, a TOML file and ``APP_*`` environment variables."""

from appconfig.loader import DEFAULTS, load

__all__ = ["DEFAULTS", "load"]
