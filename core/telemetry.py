"""The room's custom CloudWatch metrics: the names the Lambdas emit and the dashboard reads.

The functions write them as Embedded Metric Format lines into METRIC_NAMESPACE with one
dimension, ROOM_DIMENSION = the room's name; the monitoring construct (stacks/monitoring.py)
graphs and alarms on the very same names. Standard library only: the Lambda asset ships it.
"""

from __future__ import annotations

METRIC_NAMESPACE = "Beekeeper"
ROOM_DIMENSION = "Room"
ARRIVALS_METRIC = "Arrivals"
ADMITTED_METRIC = "Admitted"
RATE_METRIC = "Rate"
