"""Encodes the input as an internationalised domain name with idna and decodes it back.

Written for assay's tests in the shape of idna's OSS-Fuzz harness: ``Setup`` inside
``main()``, callback ``TestOneInput``.
"""

import sys

import atheris
import idna


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    uts46 = fdp.ConsumeBool()
    name = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
    try:
        encoded = idna.encode(name, uts46=uts46)
        idna.decode(encoded)
    except (idna.IDNAError, UnicodeError):
        pass


def main():
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput, enable_python_coverage=True)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
