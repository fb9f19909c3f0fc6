"""The room's logic: places, pacing, the pre-queue, tickets and their keys, the governor, the
room's state, the producer, the trigger and the consumers' runs.

Standard library and boto3 only (the consumer's ticket signing also `cryptography`): this folder
ships in the Lambda asset (stacks/lambda_asset.py) under the same `beekeeper.room` import name it
has when installed. The Lambda handlers (`beekeeper.lambdas`), local mode and the simulator all
run it, each with the side effects passed in.
"""
