"""What ``assay init`` writes: a ``fuzz/`` folder, ``[tool.assay]``, and CI workflows.

:mod:`~assay.scaffold.project` finds the project's package and writes the example
target; :mod:`~assay.scaffold.github` writes the GitHub Actions workflows
(``--ci github``). Layer: may import anything below the CLI (it needs only
:mod:`assay.core`); the CLI's ``assay init`` is its one caller.
"""
