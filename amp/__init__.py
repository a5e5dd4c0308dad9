"""AmP Explorer library: ambiguity in semantic parsing with language models.

No Streamlit import anywhere in this package.
"""
