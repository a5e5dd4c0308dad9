"""Ambiguity detection: does the model know a sentence is ambiguous? (docs/paper-notes.md §22)

:mod:`~amp.detection.dataset` builds the balanced, word-held-out data; :mod:`~amp.detection.auroc`
scores a detector; :mod:`~amp.detection.signals` computes the model's uncertainty signals;
:mod:`~amp.detection.hidden_states` and :mod:`~amp.detection.probe` read its hidden states;
:mod:`~amp.detection.report` holds the combined, cached report.
"""
