"""Grading: a candidate's code scored against a coding task's numbered hidden checks, on the
verifier's runner and sandbox (run.py), and starter files to practise with (practice.py)."""
