"""API Gateway as the room uses it, run on one machine: a REST API as API Gateway stores it
(`model`, standard library only: the stack checks its methods with it at synth), one method run
as API Gateway runs it (`runtime`, with the Velocity renderer `velocity/`, the local extra), a
room's templated route answered through them (`room`: the simulator and the tests).

Local mode's gateway, the simulator and the tests use it; it imports nothing from them.
Nothing here is imported on the deploy path except `model`.
"""
