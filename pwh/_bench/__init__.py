"""``pwh bench``: dispatcher throughput against the commit floor, the skeleton and LoopX.

``workloads`` is what a child process runs (entered through ``__main__``: ``python -m pwh._bench
WORKLOAD N DIR``); ``measure`` plans the run and pools the children's times; ``report`` says what
they mean. Nothing is re-exported here: every user imports from the module that defines a name.
"""
