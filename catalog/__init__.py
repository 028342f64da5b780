"""The hardware and model catalog: accelerators, servers, parts, models, cloud prices."""
