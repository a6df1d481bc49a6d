"""The shop's transition table: items are listed, created, read and deleted.

The planted state bug (a deleted item is still served from the read cache) is
invisible to single requests: it needs create -> read -> delete -> read.
"""

from shop_fastapi import create_app, reset

from assay.http.stateful import StateSpec

SHOP_STATES = StateSpec(
    "http_shop_states",
    create_app,
    reset=reset,  # one app per process, a fresh database per sequence
    allow=("createItem", "deleteItem"),  # besides the safe methods
    exclude=("getFile", "getStats", "quoteItem"),  # not part of this state machine
    links={"createItem": {"item": "$response.body#/id"}},
    uses={"getItem": {"item_id": "item"}, "deleteItem": {"item_id": "item"}},
    readable=("createItem", "getItem"),  # a created item is readable
    gone=("deleteItem", "getItem"),  # a deleted item never comes back
    step_timeout=5.0,  # a step longer than this is a wedge
)

shop_states = SHOP_STATES.target(sources=["shop_fastapi.py"])
