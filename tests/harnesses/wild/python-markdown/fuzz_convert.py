"""Converts the input from Markdown to HTML with markdown.markdown.

Written for assay's tests in the shape of Python-Markdown's OSS-Fuzz harness: ``Setup``
inside ``main()``, callback ``TestOneInput``.
"""

import sys

import atheris
import markdown


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    extensions = ["extra", "toc"] if fdp.ConsumeBool() else []
    markdown.markdown(fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes()), extensions=extensions)


def main():
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput, enable_python_coverage=True)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
