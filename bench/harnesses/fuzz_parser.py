"""tomlkit's parser over all of the input as text (OSS-Fuzz's tomlkit fuzz_parser.py shape)."""

import sys

import atheris
import tomlkit


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    parser = tomlkit.parser.Parser(fdp.ConsumeUnicodeNoSurrogates(sys.maxsize))
    try:
        parser.parse()
    except (tomlkit.exceptions.TOMLKitError, RecursionError):
        pass  # rejections, and nesting past the recursion limit, are not bugs here


if __name__ == "__main__":
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
