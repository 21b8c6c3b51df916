"""``pwh reliability``: the campaign that feeds hostile providers, bad inputs, damaged journals and
leaking values to the reference and counts what held.
"""
