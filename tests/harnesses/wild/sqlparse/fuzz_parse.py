"""Parses and formats the input as SQL with sqlparse.

Written for assay's tests in the shape of sqlparse's OSS-Fuzz harness: ``Setup`` inside
``main()``, callback ``TestOneInput``.
"""

import sys

import atheris
import sqlparse
from sqlparse.exceptions import SQLParseError


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    reindent = fdp.ConsumeBool()
    sql = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
    try:
        for statement in sqlparse.parse(sql):
            statement.get_type()
        sqlparse.format(sql, reindent=reindent, keyword_case="upper")
    except SQLParseError:
        pass


def main():
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput, enable_python_coverage=True)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
