"""Validator/user divergence (the ``error-shape`` oracle).

Validation and use are often separate steps: a schema check, then code that
reads the validated data; an address syntax check, then the call that packs the
address.  :func:`error_shape` runs both on the same value and fires when they
disagree: the validator accepted what the user then rejects (``valid-rejected``:
the validator is too lax, or the user too strict), or the validator rejected
what the user happily accepts (``invalid-accepted``: the user skipped a check
the validator makes, or the validator is too strict).

Signature: ``error-shape:<name>/<kind>``; ``name`` defaults to
``<validate>~<use>`` by ``module.qualname``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from assay.core.observe import OracleFailure, feature
from assay.oracles._common import Outcome, attempt, identity, short_repr

#: The oracle tag of error-shape findings.
TAG = "error-shape"


class Shape(NamedTuple):
    """Validator and user agreed: ``valid`` is the shared verdict, ``result`` what ``use`` returned
    (``None`` when both rejected)."""

    valid: bool
    result: Any


def error_shape(
    validate: Callable[[Any], Any],
    use: Callable[[Any], Any],
    value: Any,
    *,
    name: str | None = None,
    invalid: tuple[type[BaseException], ...] = (Exception,),
    rejected: tuple[type[BaseException], ...] = (Exception,),
) -> Shape:
    """Check that ``validate`` and ``use`` agree about ``value``.

    ``validate(value)`` says *invalid* by raising one of ``invalid`` or by
    returning exactly ``False``; any other return (``None`` from
    ``jsonschema.validate``, an object from ``ipaddress.ip_address``, ``True``)
    means valid.  ``use(value)`` rejects by raising one of ``rejected``; a return
    is acceptance.  Exceptions outside those classes propagate (a panic).

    Raises :class:`~assay.core.observe.OracleFailure` tagged ``error-shape`` of kind
    ``valid-rejected`` or ``invalid-accepted`` on disagreement (chained to the
    exception involved); reports the feature ``<name>.valid``.
    """
    label = name or f"{identity(validate)}~{identity(use)}"
    verdict = attempt("validate", validate, value, catch=invalid)
    valid = verdict.ok and verdict.raw is not False
    outcome = attempt("use", use, value, catch=rejected)
    feature(f"{label}.valid", valid)
    if valid and not outcome.ok:
        raise OracleFailure(
            label,
            f"validator accepted the value, user raised {outcome.describe()}",
            kind="valid-rejected",
            oracle=TAG,
            data=_data(value, verdict, outcome),
        ) from outcome.exception
    if not valid and outcome.ok:
        raise OracleFailure(
            label,
            f"validator rejected the value ({verdict.describe() if verdict.is_error else 'returned False'}), "
            f"user accepted it: {outcome.describe()}",
            kind="invalid-accepted",
            oracle=TAG,
            data=_data(value, verdict, outcome),
        ) from verdict.exception
    return Shape(valid, outcome.raw if outcome.ok else None)


def _data(value: Any, verdict: Outcome, outcome: Outcome) -> dict[str, Any]:
    return {"value": short_repr(value), "validate": verdict.to_json(), "use": outcome.to_json()}


__all__ = ["Shape", "TAG", "error_shape"]
