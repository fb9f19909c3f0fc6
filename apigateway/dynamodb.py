"""Where an AWS integration with DynamoDB sends its request, as API Gateway sends it: the
action and the rendered JSON body in, DynamoDB's HTTP status code and JSON body out."""

from __future__ import annotations

import json
from typing import Any, Protocol

from botocore.exceptions import ClientError, ParamValidationError


class DynamoDbTarget(Protocol):
    """The integration's DynamoDB: the room's store in local mode and the simulator
    (beekeeper.store.wire.TemplateTarget), a boto3 client in tests (Boto3DynamoDb)."""

    def __call__(self, action: str, body: str) -> tuple[int, str]: ...


_ACTIONS = {"BatchGetItem": "batch_get_item", "GetItem": "get_item", "UpdateItem": "update_item"}
# How DynamoDB names an error in its JSON body's __type.
ERROR_TYPE_PREFIX = "com.amazonaws.dynamodb.v20120810#"


class Boto3DynamoDb:
    """A boto3 DynamoDB client (moto's in tests) as the integration's target."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __call__(self, action: str, body: str) -> tuple[int, str]:
        try:
            request = json.loads(body)
        except ValueError:
            return 400, json.dumps({"__type": "SerializationException"})
        if not isinstance(request, dict):
            return 400, json.dumps({"__type": "SerializationException"})
        try:
            answer = getattr(self._client, _ACTIONS[action])(**request)
        except ParamValidationError as error:
            return 400, json.dumps({"__type": "ValidationException", "message": str(error)})
        except ClientError as error:
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 500)
            code = error.response.get("Error", {}).get("Code", "")
            message = error.response.get("Error", {}).get("Message", "")
            found = {"__type": ERROR_TYPE_PREFIX + code, "message": message}
            # A failed condition's item (ReturnValuesOnConditionCheckFailure ALL_OLD) travels
            # in DynamoDB's error body beside the type, as botocore parsed it out.
            if "Item" in error.response:
                found["Item"] = error.response["Item"]
            return int(status), json.dumps(found)
        answer = {key: value for key, value in answer.items() if key != "ResponseMetadata"}
        return 200, json.dumps(answer)


__all__ = ["ERROR_TYPE_PREFIX", "Boto3DynamoDb", "DynamoDbTarget"]
