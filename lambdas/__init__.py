"""The room's Lambda functions: producer, trigger, consumer and governor.

Standard library and boto3 only: this folder is deployed as the Lambda asset (together with
beekeeper.core), under the same `beekeeper.lambdas` import name it has when installed.
"""
