"""Lexes and parses the input as a Jinja template string with a jinja2 Environment.

Written for assay's tests in the shape of Jinja2's OSS-Fuzz lexer harness: the library is
imported inside ``with atheris.instrument_imports():``.
"""

import sys

import atheris

with atheris.instrument_imports():
    import jinja2


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    env = jinja2.Environment(trim_blocks=fdp.ConsumeBool(), lstrip_blocks=fdp.ConsumeBool())
    source = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
    try:
        list(env.lex(source))
        env.parse(source)
    except jinja2.TemplateSyntaxError:
        pass


def main():
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
