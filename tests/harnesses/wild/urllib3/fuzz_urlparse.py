"""Parses the input as a URL with urllib3.util.parse_url and reads its parts.

Written for assay's tests in the shape of urllib3's OSS-Fuzz harness: ``instrument_all()``
under the ``__main__`` guard, then ``main()``.
"""

import sys

import atheris
from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    text = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
    try:
        url = parse_url(text)
    except LocationParseError:
        return
    _ = (url.url, url.netloc, url.request_uri, url.authority)


def main():
    atheris.Setup(sys.argv, TestOneInput, enable_python_coverage=True)
    atheris.Fuzz()


if __name__ == "__main__":
    atheris.instrument_all()
    main()
