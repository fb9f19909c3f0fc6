"""AWS list prices (USD, us-east-1 and CloudFront's United States edge locations, as published
in 2025) the cost benchmarks share: bench/idle_cost.py and bench/visitor_cost.py.

Sources: aws.amazon.com/cloudfront/pricing (HTTPS requests $0.0100 per 10,000, data transfer
out to the internet $0.085 per GB for the first 10 TB), aws.amazon.com/waf/pricing ($5 per web
ACL and $1 per rule a month, $0.60 per million requests the web ACL inspects: every request to
the distribution), aws.amazon.com/api-gateway/pricing (REST APIs, $3.50 per million for the
first 333 million a month), aws.amazon.com/lambda/pricing (arm64), aws.amazon.com/dynamodb/
pricing/on-demand, aws.amazon.com/sqs/pricing (standard queues, per 64 KB request),
aws.amazon.com/appsync/pricing (AppSync Events: $1.00 per million Event API operations, $0.08
per million connection-minutes; data transfer at the EC2 rate, aws.amazon.com/ec2/pricing/
on-demand: $0.09 per GB out to the internet for the first 10 TB).
"""

from __future__ import annotations

MILLION = 1_000_000

CLOUDFRONT_HTTPS_REQUEST = 0.0100 / 10_000
CLOUDFRONT_GB_OUT = 0.085
WAF_REQUEST = 0.60 / MILLION
WAF_WEB_ACL_MONTH = 5.0
WAF_RULE_MONTH = 1.0
API_GATEWAY_REST_REQUEST = 3.50 / MILLION
LAMBDA_ARM_GB_SECOND = 0.0000133334
LAMBDA_REQUEST = 0.20 / MILLION
DYNAMODB_WRITE_UNIT = 0.625 / MILLION
DYNAMODB_READ_UNIT = 0.125 / MILLION
SQS_REQUEST = 0.40 / MILLION
APPSYNC_EVENTS_OPERATION = 1.00 / MILLION
APPSYNC_EVENTS_CONNECTION_MINUTE = 0.08 / MILLION
APPSYNC_GB_OUT = 0.09
