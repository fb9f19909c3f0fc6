"""The CDK app: one stack per room."""
