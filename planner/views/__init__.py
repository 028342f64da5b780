"""Views of the planner app, split by subject."""
