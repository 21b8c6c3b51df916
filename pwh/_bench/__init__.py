"""``pwh bench``: dispatcher throughput against the commit floor, the skeleton and LoopX.
"""
