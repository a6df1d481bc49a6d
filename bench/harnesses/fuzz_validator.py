"""email-validator's syntax check on raw bytes (OSS-Fuzz's fuzz_validator.py shape: no provider)."""

import sys

import atheris
from email_validator import EmailSyntaxError, EmailUndeliverableError, validate_email


def TestOneInput(data):
    try:
        validate_email(data, check_deliverability=False)
    except (EmailSyntaxError, EmailUndeliverableError):
        pass


if __name__ == "__main__":
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
