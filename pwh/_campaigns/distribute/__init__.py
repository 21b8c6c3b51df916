"""Campaigns spread over local worker processes or a Dask cluster."""
