"""`beekeeper local`: the whole room on one machine, no AWS account."""
