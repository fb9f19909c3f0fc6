"""The whole journey a shop relies on, step by step, against any running room.

`journey` walks a room as visitors, the shop and the operator use it (over HTTP and through the
`beekeeper` command); it runs against a room deployed to AWS (tests/aws, opt-in) and against
`beekeeper local` (tests/integration). `aws_checks` holds what only AWS has: the room's metrics
in CloudWatch, alarm notifications, and the resources left after `destroy`; the tests run it
against moto too.
"""
