"""Application settings kept in TOML: read them from text or bytes, look one up, write them back."""

from __future__ import annotations

from typing import Any

import toml


class SettingsError(Exception):
    """The settings text is not valid TOML, or does not hold what was asked for."""


def load_settings(text: str) -> dict[str, Any]:
    """Parse settings from TOML text.

    Raises:
        SettingsError: the text is not valid TOML.
    """
    try:
        return toml.loads(text)
    except toml.TomlDecodeError as e:
        raise SettingsError(f"bad settings: {e}") from e


def load_settings_bytes(blob: bytes) -> dict[str, Any]:
    """Parse settings from a UTF-8 encoded TOML file's bytes.

    Raises:
        SettingsError: the bytes are not UTF-8, or not valid TOML.
    """
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SettingsError(f"settings are not UTF-8: {e}") from e
    return load_settings(text)


def get_setting(text: str, key: str) -> Any:
    """The value at a dotted key (``server.port``) of the TOML settings text.

    Raises:
        SettingsError: the text is not valid TOML, or the key is not set.
    """
    value: Any = load_settings(text)
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise SettingsError(f"{key!r} is not set")
        value = value[part]
    return value


def dump_settings(settings: dict[str, Any]) -> str:
    """Write settings as TOML text that :func:`load_settings` reads back to the same mapping.

    Raises:
        SettingsError: the mapping holds a value TOML cannot represent.
    """
    try:
        return toml.dumps(settings)
    except (TypeError, ValueError) as e:
        raise SettingsError(f"cannot write settings: {e}") from e
