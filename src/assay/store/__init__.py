"""On-disk stores: the content-addressed corpus and the findings' artifacts."""
