"""The LoopX 2.1.1 adapter (optional extra ``loopx``): the adapter, its one mapping table, and the
isolated Node runtime LoopX's journal needs.
"""
