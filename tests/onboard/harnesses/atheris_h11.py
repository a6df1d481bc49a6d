"""An atheris harness in the style atheris' README teaches (written for assay's tests).

Module-level ``with atheris.instrument_imports()``, ``atheris.Setup`` and
``atheris.Fuzz()``: assay must run it unchanged, without atheris, and the line
after ``Fuzz()`` must never run (atheris' ``Fuzz`` does not return).
"""

import sys

import atheris

with atheris.instrument_imports():
    import h11


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    conn = h11.Connection(h11.SERVER if fdp.ConsumeBool() else h11.CLIENT)
    conn.receive_data(fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 512)))
    try:
        while True:
            event = conn.next_event()
            if event in (h11.NEED_DATA, h11.PAUSED) or isinstance(event, h11.ConnectionClosed):
                break
    except h11.RemoteProtocolError:
        pass


atheris.Setup(sys.argv, TestOneInput)
atheris.Fuzz()
AFTER_FUZZ = True
