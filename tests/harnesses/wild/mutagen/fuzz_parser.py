"""Opens the input as an audio file with mutagen.File on an in-memory buffer.

Written for assay's tests in the shape of mutagen's OSS-Fuzz harness: ``instrument_all()``,
``Setup`` and ``Fuzz()`` run at module level, with no ``main()``.
"""

import io
import sys

import atheris
import mutagen


def TestOneInput(data):
    try:
        audio = mutagen.File(io.BytesIO(data))
    except mutagen.MutagenError:
        return
    if audio is not None:
        audio.pprint()


atheris.instrument_all()
atheris.Setup(sys.argv, TestOneInput)
atheris.Fuzz()
