"""Reference targets for tomlcfg: what a round-two ``assay init`` should write (issue 42).

One target per public input function, typed as annotated, with the project's documented
error (``SettingsError``) as the whole contract, and the dump/load round trip.
"""

import tomlcfg
from tomlcfg import SettingsError

import assay

SEEDS = [
    b'title = "x"\nports = [1, 2]\n[server]\nhost = "a"\n[[jobs]]\nname = "b"\nopts = {retries = 3, tags = ["x"]}\n'
]


def text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


@assay.target(expected=(SettingsError,), seeds=SEEDS)
def load_settings(data: bytes) -> None:
    tomlcfg.load_settings(text(data))


@assay.target(expected=(SettingsError,), seeds=SEEDS)
def load_settings_bytes(data: bytes) -> None:
    tomlcfg.load_settings_bytes(data)


@assay.target(expected=(SettingsError,), seeds=[b"server.host\x00" + SEEDS[0]])
def get_setting(data: bytes) -> None:
    key, _, body = text(data).partition("\x00")
    tomlcfg.get_setting(body, key)


@assay.target(expected=(SettingsError,), seeds=SEEDS)
def round_trip_dump_settings_load_settings(data: bytes) -> None:
    settings = tomlcfg.load_settings(text(data))
    again = tomlcfg.load_settings(tomlcfg.dump_settings(settings))
    assert again == settings, (settings, again)
