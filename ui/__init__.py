"""Streamlit widgets and session helpers of the AmP Explorer app (no AmP logic here)."""
