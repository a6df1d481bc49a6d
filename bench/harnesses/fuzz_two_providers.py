"""The benchmark shape of issue 43: a target of about 10 us, two providers per case, text of a few hundred bytes.

email-validator's syntax check over the input as text, with its options drawn from a
second provider over the same bytes.  The library is a third-party one (pure
Python), so ``assay fuzz`` with defaults watches it, as it would a real harness'
(the standard library, which an earlier version of this harness called, is never in
the default scope).
"""

import sys

import atheris
from email_validator import EmailNotValidError, validate_email


def TestOneInput(data):
    options = atheris.FuzzedDataProvider(data)
    smtputf8 = options.ConsumeBool()
    display_name = options.PickValueInList([True, False])
    address = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(sys.maxsize)
    try:
        validate_email(address, allow_smtputf8=smtputf8, allow_display_name=display_name, check_deliverability=False)
    except EmailNotValidError:
        pass


if __name__ == "__main__":
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
