"""sqlparse.parse over all of the input as text (OSS-Fuzz's sqlparse fuzz_parse.py shape)."""

import sys

import atheris
import sqlparse


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    try:
        sqlparse.parse(fdp.ConsumeUnicodeNoSurrogates(sys.maxsize))
    except RecursionError:
        pass


if __name__ == "__main__":
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
