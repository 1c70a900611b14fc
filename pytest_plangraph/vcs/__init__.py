"""The only git in the project, and the files of the working copy: running git, the state
of the repository, changed paths between revisions, the commits behind them, files as
they were at a revision, the workspace's paths and their sha256, and the facts of the
environment a verification runs in. Everything returned is a plain value.
"""
