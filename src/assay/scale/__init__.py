"""Scale-out: seeded, stateless shards that run anywhere and return their results as data.

:mod:`assay.scale.shard` runs one (target, shard) and applies its result to the
local content-addressed stores; :mod:`assay.scale.dask_executor` runs many of them on
a Dask cluster.  assay never grows a scheduler of its own.

Layer: may import the four features (mutant, native, compose, http) and everything below; never the CLI.
"""
