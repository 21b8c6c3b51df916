"""The SUT seam's adapters: the LoopX 2.1.1 adapter and its mapping."""
