"""`beekeeper check NAME`: a room proved end to end through its public address.

A few test visitors go through the room exactly as browsers and the shop would (the marketing
link with its work, the cookie and redirect, the page, the shared state, their own /polling,
admission, the ticket verified offline, /client and a redeem, a leave in capacity mode), each
step timed and reported; the operator's side (a test pass, the room's state, the visitors'
items removed at the end) goes through the operator's own credentials. The opt-in real-AWS
test (tests/aws) runs the same journey. Standard library HTTP (urllib) and `cryptography`,
both in the base install.
"""
