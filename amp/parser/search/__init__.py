"""Grammar-constrained search and forced scoring: the algorithms under the parser facade.

The grammar automaton over LALR tables (:mod:`.automaton`, :mod:`.lalr_tables`), its token-level
masks (:mod:`.vocab`, :mod:`.processors`), the prompt pass shared by everything after it
(:mod:`.prefix`), the beam search itself (:mod:`.fastsearch` over :mod:`.beam_rows` and
:mod:`.beam_step`, driven by :mod:`.decode`), forced scoring of LF0/LF1 (:mod:`.scoring`),
sampling (:mod:`.sampling`), the first divergence between two parses (:mod:`.divergence`),
cancelling a search from outside (:mod:`.cancel`), and the settings every search is asked with
(:mod:`.settings`).  The modules that decode import torch; this package's ``__init__`` does not.
"""
