"""Parses the input as an ISO 8601 date, time, datetime or duration with isodate.

Written for assay's tests in the shape of isodate's OSS-Fuzz harness: ``Setup`` inside
``main()``, callback ``TestOneInput``.
"""

import sys

import atheris
import isodate


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    parse = fdp.PickValueInList(
        [isodate.parse_date, isodate.parse_time, isodate.parse_datetime, isodate.parse_duration]
    )
    try:
        parse(fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes()))
    except (isodate.ISO8601Error, ValueError, OverflowError):
        pass


def main():
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput, enable_python_coverage=True)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
