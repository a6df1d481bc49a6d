"""The ``assay`` command line: one module per command, thin adapters over the library.

Every argparse definition and every exit-code decision lives here and nowhere else
(:func:`assay.cli.main.main` turns exceptions into exit codes).

Layer: the top one; may import any package, and no package imports it.
"""
