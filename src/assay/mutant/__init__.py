"""Mutation testing: operators, test selection, forked execution, history, fuzzing of survivors."""
