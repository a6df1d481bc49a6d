"""Input generation: byte mutators, the byte-source API, structured strategies."""
