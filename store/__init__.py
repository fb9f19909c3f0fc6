"""The room's DynamoDB table and SQS queues in memory: one store for the simulator and local mode.

The simulator calls it directly on its simulated clock (with its faults injected), local mode
through real boto3 clients and the templates' rendered requests in real time (store/wire.py);
above it the producer, trigger, consumer, governor and templates run exactly as in AWS. Local
mode also keeps the room's ticket keys' secret in it (store/secretsmanager.py), where the
stack keeps them in Secrets Manager.
"""
