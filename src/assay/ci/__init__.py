"""CI templates written by ``assay init --ci PROVIDER``."""
