"""The data layer: the lexicon, the templates, example generation and the v1 splits."""
