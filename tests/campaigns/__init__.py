"""The campaigns: stateful models, the reliability campaign and the bench (child-process runs)."""
