"""The extension API (DESIGN §8): the pluggy hook specifications and the one plugin
manager that the command line and the pytest plugin share.
"""
