"""Parses the input as TOML with tomlkit and dumps the document back.

Written for assay's tests in the shape of tomlkit's OSS-Fuzz harness: ``Setup`` inside
``main()``, callback ``TestOneInput``.
"""

import sys

import atheris
import tomlkit
from tomlkit.exceptions import TOMLKitError


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    text = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
    try:
        document = tomlkit.parse(text)
        tomlkit.dumps(document)
    except TOMLKitError:
        pass


def main():
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput, enable_python_coverage=True)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
