"""The native backend: libFuzzer with ASan and UBSan for the C under a Python package.

``[tool.assay.native.<name>]`` (or :func:`native_target`) declares a harness; builds
are named by a build identity and never run stale (:mod:`assay.native.build`);
campaigns run libFuzzer bare under a supervising deadline (:mod:`assay.native.campaign`);
findings are replayed, minimized and published as artifacts (:mod:`assay.native.findings`).

Layer: may import the promoter and everything below; never compose, http or mutant.
"""

from assay.core.native_target import NativeTarget, native_target

__all__ = ["NativeTarget", "native_target"]
