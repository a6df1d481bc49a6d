"""How targets come in: discovery, atheris harnesses, libFuzzer flags, ``@given`` tests.

:mod:`~assay.harness.discovery` imports what ``[tool.assay] targets`` names;
:mod:`~assay.harness.paths` takes targets named on the command line;
:mod:`~assay.harness.atheris_shim` and :mod:`~assay.harness.fdp` let atheris harnesses
run unchanged. Layer: may import feedback, gen, oracles, store and core; never the engine,
which runs what it finds.
"""
