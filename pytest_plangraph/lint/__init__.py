"""Lint of the plan format (DESIGN §3.4): the findings and the codes table, the rules by
family, the file-backed checks, the dependencies a coverage run observed, and the check
every command makes before it judges anything. No git, no SQL, no pytest.
"""
