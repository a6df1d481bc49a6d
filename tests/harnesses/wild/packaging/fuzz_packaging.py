"""Parses the input as versions, specifier sets and requirements with packaging.

Written for assay's tests in the shape of packaging's OSS-Fuzz harness: ``TestOneInput``
calls two helpers, one per part of the API.
"""

import sys

import atheris
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version


def fuzz_version(fdp):
    try:
        version = Version(fdp.ConsumeUnicodeNoSurrogates(24))
        specifiers = SpecifierSet(fdp.ConsumeUnicodeNoSurrogates(32))
    except (InvalidVersion, InvalidSpecifier):
        return
    specifiers.contains(version, prereleases=True)


def fuzz_requirement(fdp):
    try:
        requirement = Requirement(fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes()))
    except InvalidRequirement:
        return
    str(requirement)


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    fuzz_version(fdp)
    fuzz_requirement(fdp)


def main():
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput, enable_python_coverage=True)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
