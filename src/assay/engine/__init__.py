"""The campaign engine: takes targets, runs them in crash-isolated workers.

The engine knows nothing of the CLI or pytest; both are thin adapters over
:func:`assay.engine.campaign.run_campaign`.

Layer: may import harness, findings and everything below them (feedback, gen, oracles, store, core).
"""
