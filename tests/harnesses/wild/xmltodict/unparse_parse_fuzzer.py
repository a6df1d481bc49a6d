"""Round-trips a document built from the input through xmltodict.unparse and xmltodict.parse.

Written for assay's tests in the shape of xmltodict's OSS-Fuzz harness: ``Setup`` inside
``main()``, a lowercase ``test_one_input`` callback, ``sys.exit(main())`` under the guard.
"""

import sys
from xml.parsers.expat import ExpatError

import atheris
import xmltodict


def test_one_input(data):
    fdp = atheris.FuzzedDataProvider(data)
    root = fdp.ConsumeUnicodeNoSurrogates(12) or "root"
    body = {f"@{fdp.ConsumeUnicodeNoSurrogates(6) or 'a'}": fdp.ConsumeUnicodeNoSurrogates(16)}
    for _ in range(fdp.ConsumeIntInRange(0, 4)):
        body[fdp.ConsumeUnicodeNoSurrogates(8) or "child"] = fdp.ConsumeUnicodeNoSurrogates(24)
    body["#text"] = fdp.ConsumeUnicodeNoSurrogates(32)
    try:
        xml = xmltodict.unparse({root: body}, pretty=fdp.ConsumeBool())
        xmltodict.parse(xml, process_namespaces=fdp.ConsumeBool())
    except (ValueError, ExpatError):
        pass


def main():
    atheris.instrument_all()
    atheris.Setup(sys.argv, test_one_input, enable_python_coverage=True)
    atheris.Fuzz()


if __name__ == "__main__":
    sys.exit(main())
