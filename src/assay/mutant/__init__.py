"""Mutation testing: operators, test selection, forked execution, history, fuzzing of survivors.

Layer: may import the promoter and everything below; never compose, http or native.
"""
