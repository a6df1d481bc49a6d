"""The ``assay`` command line: one module per command, thin adapters over the library.

Every argparse definition and every exit-code decision lives here and nowhere else
(:func:`assay.cli.main.main` turns exceptions into exit codes). The top layer: it may
import any package; no package imports it.
"""
