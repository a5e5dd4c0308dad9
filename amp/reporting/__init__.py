"""The reporting layer: figures (plotly) of results and summaries."""
