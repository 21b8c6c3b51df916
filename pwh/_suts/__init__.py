"""The SUT seam and the built-in adapters: how a scenario reaches an implementation.

Imports only the dispatcher core. ``loopx/`` holds everything that needs the optional ``loopx``
extra, so the rest of pwh never imports it.
"""
