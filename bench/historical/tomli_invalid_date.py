"""tomli 1.0.2: an impossible calendar date escapes as a bare ``ValueError``.

``tomli.loads`` documents ``TOMLDecodeError`` for malformed TOML.  Up to 1.0.2 a
well-formed but impossible date (``2021-02-31``, month 13 is caught by the
regex, day 31 of February is not) reaches ``datetime.date(...)`` unguarded and
its ``ValueError`` escapes.  1.0.3 wraps it: "Invalid date or datetime".
"""

from __future__ import annotations

import tomli

import assay

HISTORY = {
    "venv": "tomli-1.0.2",
    "requirement": "tomli==1.0.2",
    "fixed": "tomli==1.0.3",
    "module": "tomli",
    "kind": "crash",
    "bug": ["ValueError"],  # exact type name: TOMLDecodeError (a ValueError subclass) is the correct rejection
    "reference": "tomli CHANGELOG 1.0.3: raise TOMLDecodeError instead of ValueError for dates that pass the regex but are invalid",
    "poc": b"a = 2021-02-31",
}


@assay.target(
    name="tomli_1_0_2_invalid_date",
    expected=(tomli.TOMLDecodeError,),
    sources=["tomli"],
    seeds=[
        b'title = "TOML"\n[owner]\nname = "Tom"\ndob = 1979-05-27T07:32:00-08:00\n',
        b"[db]\nports = [ 8000, 8001 ]\nenabled = true\nday = 1979-05-27\n",
        b"t = 07:32:00\npi = 3.14\n",
    ],
    max_len=512,
)
def tomli_loads(data: bytes) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # tomli.load() would reject it before parsing
    tomli.loads(text)
