"""On-disk stores: the content-addressed corpus and the findings' artifacts.

Layer: may import :mod:`assay.core` only.
"""
