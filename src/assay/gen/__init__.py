"""Input generation: byte mutators, the byte-source API, structured strategies.

Layer: may import :mod:`assay.core` only; the strategies never know who runs them.
"""
