"""Cost of recording the falsifying example of a Hypothesis ``@given`` target.

assay wraps the test's inner function so an exception carries its example (see
``assay.harness.given``).  This runs the same random inputs through ``fuzz_one_input``
with and without the wrapper, alternating, and prints the median executions per
second of each and their ratio.

    PYTHONPATH=src python bench/given_capture.py [--inputs N] [--rounds R]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from hypothesis import given, settings, strategies as st


def make_test():
    @settings(database=None)
    @given(st.lists(st.integers()), st.text(max_size=20))
    def mean_test(xs, label):
        if len(label) > 3 and xs:
            sum(xs) // (len(xs) - 1)  # fails for one-element lists

    return mean_test


def rate(run, inputs) -> float:
    t0 = time.perf_counter()
    for data in inputs:
        try:
            run(data)
        except Exception:  # noqa: BLE001 - failures are part of the workload
            pass
    return len(inputs) / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from assay.harness.given import fuzz_function

    rng = random.Random(0)
    inputs = [rng.randbytes(rng.randint(1, 64)) for _ in range(args.inputs)]
    plain = make_test().hypothesis.fuzz_one_input  # no wrapper
    wrapped = fuzz_function(make_test())
    a, b = [], []
    for _ in range(args.rounds):
        a.append(rate(plain, inputs))
        b.append(rate(wrapped, inputs))
    pa, pb = statistics.median(a), statistics.median(b)
    print(
        f"fuzz_one_input alone: {pa:,.0f}/s; with assay's example capture: {pb:,.0f}/s; ratio {pb / pa:.3f} "
        f"(medians of {args.rounds} rounds of {args.inputs} inputs)"
    )


if __name__ == "__main__":
    main()
