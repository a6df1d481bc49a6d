"""Checks the input as an email address with email-validator, without any DNS lookup.

Written for assay's tests in the shape of email-validator's OSS-Fuzz harness: ``Setup``
runs before ``instrument_all()`` inside ``main()``.
"""

import sys

import atheris
from email_validator import EmailNotValidError, validate_email


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    smtputf8 = fdp.ConsumeBool()
    address = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
    try:
        validate_email(address, check_deliverability=False, allow_smtputf8=smtputf8)
    except EmailNotValidError:
        pass


def main():
    atheris.Setup(sys.argv, TestOneInput)
    atheris.instrument_all()
    atheris.Fuzz()


if __name__ == "__main__":
    main()
