"""Logical forms: lark grammars, AST, parse, render and canonical forms."""
