"""Independent models the planner's estimates are set beside (a second opinion).

Each peer is one adapter module that takes a candidate's inputs and returns the peer's figures
or why it does not cover them; nothing here imports Django, and the engine imports none of it.
"""
