"""The plan: its runtime classes and the pydantic models that validate new input (the
boundary), the graph and its one traversal, reading plan files (YAML or JSON) with a position
for every message, plan edits between two versions, the cache of what a plan file gives, and
the lexical rules of its paths and test patterns. Pure but for reading the plan file and its
cache: no git, no SQL, no pytest.
"""
