"""Repairs the input as mis-decoded text with ftfy.fix_text.

Written for assay's tests in the shape of ftfy's OSS-Fuzz harness: callback ``TestInput``,
the library imported inside ``instrument_imports()``; it works on strings only and writes no file.
"""

import sys

import atheris

with atheris.instrument_imports():
    import ftfy


def TestInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    normalization = fdp.PickValueInList(["NFC", "NFKC", None])
    text = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
    ftfy.fix_text(text, normalization=normalization)
    ftfy.fix_and_explain(text)


def main():
    atheris.Setup(sys.argv, TestInput, enable_python_coverage=True)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
