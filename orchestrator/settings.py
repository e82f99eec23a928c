"""Environment switches, parsed once at the edge."""
from __future__ import annotations
OFF = ("0", "false", "no", "off")
def switch(value: str | None, default: bool) -> bool:
    """A yes/no environment value: unset or blank is `default`; 0/false/no/off is False; anything else True."""
    if value is None or not value.strip():
        return default
    return value.strip().lower() not in OFF
