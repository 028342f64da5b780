"""Measured beats modelled: a load test of one replica, and the client's traffic logs."""
