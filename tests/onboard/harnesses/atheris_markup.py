#!/usr/bin/python3
"""An OSS-Fuzz-style atheris harness (``main()`` under ``__main__``), written for assay's tests.

It uses FuzzedDataProvider's integer, text and choice methods on markupsafe, whose
Python part (``Markup``'s methods) is what coverage sees; ``escape`` is C.
"""

import sys

import atheris
import markupsafe


@atheris.instrument_func
def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    markupsafe.escape(fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 256)))
    markup = markupsafe.Markup(fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 256)))
    how = fdp.PickValueInList(["striptags", "unescape", "format", "join"])
    if how == "format":
        markup.format(fdp.ConsumeUnicode(16))
    elif how == "join":
        markup.join([fdp.ConsumeString(8), fdp.ConsumeBytes(4).decode("latin-1")])
    else:
        getattr(markup, how)()


def main():
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput, enable_python_coverage=True)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
