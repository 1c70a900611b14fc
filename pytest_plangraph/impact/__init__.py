"""Invalidation and the impact report (DESIGN §6): from changed paths down the graph (the
walk), the report itself (pure), and gathering what it needs from git and the store.
"""
