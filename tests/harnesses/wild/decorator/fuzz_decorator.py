"""Wraps functions with decorator's signature-preserving decorators and calls them with input values.

Written for assay's tests in the shape of decorator's OSS-Fuzz harness: callback ``TestInput``,
``from decorator import *`` inside ``instrument_imports()``.
"""

import sys

import atheris

with atheris.instrument_imports():
    from decorator import *  # noqa: F403 -- the star import is the shape this harness keeps


def TestInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    calls = []

    @decorator  # noqa: F405
    def logged(func, *args, **kwargs):
        calls.append(args)
        return func(*args, **kwargs)

    @logged
    def scale(x, factor=2):
        return x * factor

    value, factor = fdp.ConsumeInt(4), fdp.ConsumeIntInRange(-3, 3)
    if scale(value, factor) != value * factor or calls != [(value, factor)]:
        raise AssertionError(f"decorated scale({value}, {factor}) went wrong: {calls}")
    # Only identifiers go into the generated signature, so no input text is ever evaluated.
    names = [fdp.ConsumeUnicodeNoSurrogates(6) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    try:
        FunctionMaker.create(f"f({', '.join(n for n in names if n.isidentifier())})", "return None", {})  # noqa: F405
    except (SyntaxError, ValueError, TypeError):
        pass


def main():
    atheris.Setup(sys.argv, TestInput, enable_python_coverage=True)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
