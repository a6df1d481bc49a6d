"""The vocabulary every layer uses: targets, verdicts, errors, configuration, notices.

What a target is (:mod:`~assay.core.target`), how one run is judged and named
(:mod:`~assay.core.verdict`), what a target reports from inside a run
(:mod:`~assay.core.observe`), the exception hierarchy (:mod:`~assay.core.errors`) and
``[tool.assay]`` (:mod:`~assay.core.config`). Layer: the bottom one, imports nothing of assay outside itself.
"""
