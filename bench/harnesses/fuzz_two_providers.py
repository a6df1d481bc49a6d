"""The benchmark shape of issue 43: a target of about 10 us, two providers per case, text of a few hundred bytes.

The query-string parser of the standard library (pure Python) over the input as
text, with its options drawn from a second provider over the same bytes.
"""

import sys
import urllib.parse

import atheris


def TestOneInput(data):
    options = atheris.FuzzedDataProvider(data)
    keep_blank = options.ConsumeBool()
    separator = options.PickValueInList(["&", ";"])
    query = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(sys.maxsize)
    urllib.parse.parse_qsl(query, keep_blank_values=keep_blank, separator=separator)


if __name__ == "__main__":
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
