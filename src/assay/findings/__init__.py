"""Findings as a person meets them: which bug each one is, grouped, and explained.

:mod:`~assay.findings.identity` names a bug (exception type and innermost project frame)
however many signatures reached it; :mod:`~assay.findings.bug_entries` reads artifacts
back into bug entries; :mod:`~assay.findings.explain` says a finding in a few lines;
:mod:`~assay.findings.status` decides the one word (new, known, promoted, fixed) every
output gives a bug.
Layer: may import feedback, gen, oracles, store and core (it imports core and store); never
the engine, which groups its findings with it.
"""
