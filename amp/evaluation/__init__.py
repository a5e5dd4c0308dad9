"""The evaluation layer: metrics, sweeps of the paper's experiments, interpretation-level decoding, research runs."""
