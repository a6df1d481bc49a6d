"""Coverage feedback: which code an input reached, recorded through PEP 669.

Layer: may import :mod:`assay.core`, :mod:`assay.gen` and :mod:`assay.store`.
"""

from assay.feedback.protocol import Feedback
from assay.feedback.scope import Scope

__all__ = ["Feedback", "Scope"]
