"""One request run the way API Gateway runs a REST API method, from the method as API Gateway
stores it (beekeeper.apigateway.model).

The steps, each as the AWS documentation gives it (docs/vtl.md lists the sources):

1. method request: a path and method the API does not have is the MISSING_AUTHENTICATION_TOKEN
   gateway response (403);
2. the request template is chosen by the request's Content-Type, only its MIME type (absent:
   application/json); with passthrough behaviour NEVER a type without a template is the
   UNSUPPORTED_MEDIA_TYPE gateway response (415);
3. the template is rendered (a Velocity runtime failure: 500) and sent to the integration: an
   AWS integration's action with the integration request headers its request parameters map
   (a `DynamoDbTarget`), or a MOCK integration's own `statusCode`;
4. the integration response is chosen by the backend's status code: the one whose selection
   pattern matches it (a full match), else the default (no pattern); none is a 500;
5. the response template is chosen by the request's Accept header (absent or unmatched:
   application/json, else the first), rendered over the integration's body, and its
   $context.responseOverride status and headers applied after the static mappings;
6. the method response of the integration response's status carries only the headers it
   declares; a status without a method response is a 500.

Every 4xx/5xx API Gateway makes itself is its gateway response of that type, or DEFAULT_4XX /
DEFAULT_5XX's, rendered as API Gateway renders them (simple substitutions, not Velocity).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from botocore.exceptions import BotoCoreError

from beekeeper.apigateway.dynamodb import DynamoDbTarget
from beekeeper.apigateway.http import HttpRequest, HttpResponse
from beekeeper.apigateway.model import (
    GATEWAY_HEADER,
    INTEGRATION_HEADER,
    METHOD_HEADER,
    IntegrationResponse,
    Method,
    RestApi,
    static_value,
)
from beekeeper.apigateway.velocity import RenderInput, VelocityRuntimeError, render_response

JSON = "application/json"
# The status each gateway response type answers with unless configured otherwise
# (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html).
DEFAULT_STATUS = {
    "MISSING_AUTHENTICATION_TOKEN": 403,
    "UNSUPPORTED_MEDIA_TYPE": 415,
    "API_CONFIGURATION_ERROR": 500,
    "INTEGRATION_FAILURE": 504,
    "THROTTLED": 429,
    "REQUEST_TOO_LARGE": 413,
}
MISSING_ROUTE = ("MISSING_AUTHENTICATION_TOKEN", "Missing Authentication Token")
UNSUPPORTED_MEDIA = ("UNSUPPORTED_MEDIA_TYPE", "Unsupported Media Type")
INTERNAL_ERROR = ("API_CONFIGURATION_ERROR", "Internal server error")
_GATEWAY_VARIABLES = re.compile(r"\$context\.error\.(messageString|message|responseType)")


class UnsupportedConfiguration(ValueError):
    """A method uses something this emulation does not run (a passthrough body, a mapping
    from a non-static value, an integration it has no backend for): a bug to fix, never an
    answer."""


def media_type(header: str) -> str:
    """The MIME type of a Content-Type or Accept value: "Only the MIME type is used from the
    Accept and Content-Type headers when selecting a mapping template" (parameters such as
    charset dropped). Its case is kept: AWS does not say it folds case, so nothing is folded."""
    return header.split(";", 1)[0].strip()


def _context(
    method: Method, request: HttpRequest, request_time_ms: int, request_id: str
) -> dict[str, Any]:
    return {
        "requestTimeEpoch": request_time_ms,
        # CLF, as $context.requestTime is documented: dd/MMM/yyyy:HH:mm:ss +-hhmm.
        "requestTime": time.strftime(
            "%d/%b/%Y:%H:%M:%S +0000", time.gmtime(request_time_ms / 1000)
        ),
        "requestId": request_id,
        "httpMethod": request.method,
        "resourcePath": method.path,
        "path": request.path,
        "stage": "local",
        "identity": {"sourceIp": "127.0.0.1", "userAgent": request.header("user-agent") or ""},
    }


# -- gateway responses ------------------------------------------------------------------------


def gateway_response(
    api: RestApi, response_type: str, message: str, *, status: int | None = None
) -> HttpResponse:
    """API Gateway's own answer of `response_type`: its configured gateway response, else
    DEFAULT_4XX's or DEFAULT_5XX's, else API Gateway's default {"message": ...}."""
    code = status or DEFAULT_STATUS.get(response_type, 500)
    fallback = "DEFAULT_4XX" if code < 500 else "DEFAULT_5XX"
    own = api.gateway_responses.get(response_type)
    configured = own or api.gateway_responses.get(fallback)
    if configured is None:
        body = json.dumps({"message": message}, separators=(",", ":"))
        return HttpResponse(code, {"Content-Type": JSON}, body)
    if configured.status_code:
        code = int(configured.status_code)
    headers = {"Content-Type": JSON}
    for name, value in configured.response_parameters.items():
        static = static_value(value)
        if not name.startswith(GATEWAY_HEADER) or static is None:
            raise UnsupportedConfiguration(f"gateway response {name} = {value!r}")
        headers[name.removeprefix(GATEWAY_HEADER)] = static
    templates = configured.response_templates
    template = templates.get(JSON, next(iter(templates.values()), None))
    if template is None:
        body = json.dumps({"message": message}, separators=(",", ":"))
    else:
        values = {"messageString": json.dumps(message), "message": message}
        values["responseType"] = response_type
        body = _GATEWAY_VARIABLES.sub(lambda match: values[match.group(1)], template)
        if "$" in body:
            raise UnsupportedConfiguration(f"gateway response template {template!r}")
    return HttpResponse(code, headers, body)


def _internal_error(api: RestApi) -> HttpResponse:
    return gateway_response(api, *INTERNAL_ERROR)


# -- one method -------------------------------------------------------------------------------


def _request_template(method: Method, request: HttpRequest) -> str | None:
    """The request template API Gateway selects; None when it answers 415."""
    integration = method.integration
    content_type = request.header("content-type")
    key = media_type(content_type) if content_type else JSON
    template = integration.request_templates.get(key)
    if template is not None:
        return template
    behaviour = integration.passthrough_behavior
    if behaviour == "NEVER" or (behaviour == "WHEN_NO_TEMPLATES" and integration.request_templates):
        return None
    raise UnsupportedConfiguration(f"{method.name}: a passthrough body ({behaviour}) is not run")


def _chosen(method: Method, status: int) -> IntegrationResponse | None:
    """The integration response for the backend's `status`: the one selection pattern that
    matches it in full, else the default; None when there is none (API Gateway: 500)."""
    responses = method.integration.responses.values()
    matching = [
        response
        for response in responses
        if response.selection_pattern is not None
        and re.fullmatch(response.selection_pattern, str(status))
    ]
    if len(matching) > 1:
        return None  # which one API Gateway takes is not documented: refused, never guessed
    if matching:
        return matching[0]
    return next((response for response in responses if response.selection_pattern is None), None)


def _response_template(
    response: IntegrationResponse, request: HttpRequest
) -> tuple[str, str] | None:
    """(content type, template) by the Accept header; None: the body passes through."""
    templates = response.response_templates
    if not templates:
        return None
    accept = request.header("accept")
    key = media_type(accept) if accept else JSON
    if key in templates:
        return key, templates[key]
    if accept is None and JSON in templates:
        return JSON, templates[JSON]
    first = next(iter(templates))
    return first, templates[first]


def _integration_headers(method: Method) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in method.integration.request_parameters.items():
        static = static_value(value)
        if not name.startswith(INTEGRATION_HEADER) or static is None:
            raise UnsupportedConfiguration(f"{method.name}: request parameter {name} = {value!r}")
        headers[name.removeprefix(INTEGRATION_HEADER)] = static
    return headers


def _backend(
    method: Method, rendered: str, dynamodb: DynamoDbTarget | None
) -> tuple[int, str] | None:
    """(status, body) of the integration; None for a failed call (API Gateway: 500)."""
    integration = method.integration
    if integration.type == "MOCK":
        # A MOCK integration answers the statusCode its request template names.
        try:
            status = json.loads(rendered)["statusCode"]
        except (ValueError, KeyError, TypeError):
            return None
        return (status, "") if isinstance(status, int) else None
    service_action = integration.service_action()
    if integration.type != "AWS" or service_action is None or service_action[0] != "dynamodb":
        raise UnsupportedConfiguration(f"{method.name}: no backend for {integration.uri}")
    if dynamodb is None:
        raise UnsupportedConfiguration(f"{method.name}: no DynamoDB was given")
    content_type = _integration_headers(method).get("Content-Type")
    if content_type != "application/x-amz-json-1.0":
        # What DynamoDB does with another media type is not the room's to guess (model.check).
        raise UnsupportedConfiguration(f"{method.name} sends DynamoDB Content-Type {content_type}")
    try:
        return dynamodb(service_action[1], rendered)
    except BotoCoreError:
        return None


def invoke(
    api: RestApi,
    method: Method,
    request: HttpRequest,
    *,
    request_time_ms: int,
    dynamodb: DynamoDbTarget | None = None,
    request_id: str = "local",
) -> HttpResponse:
    """`request` answered by `method` (an AWS or MOCK integration) as API Gateway answers it.

    Raises UnsupportedVtl when a template steps outside what the renderer can render
    faithfully, UnsupportedConfiguration for a method this emulation does not run: bugs to
    fix, not answers to give."""
    template = _request_template(method, request)
    if template is None:
        return gateway_response(api, *UNSUPPORTED_MEDIA)
    data = RenderInput(
        body=request.body,
        query=dict(request.query),
        headers=dict(request.headers),
        context=_context(method, request, request_time_ms, request_id),
    )
    try:
        rendered = render_response(template, data).text
    except VelocityRuntimeError:
        return _internal_error(api)
    answered = _backend(method, rendered, dynamodb)
    if answered is None:
        return _internal_error(api)
    status, body = answered
    chosen = _chosen(method, status)
    if chosen is None:
        return _internal_error(api)
    method_response = method.method_responses.get(chosen.status_code)
    if method_response is None:
        return _internal_error(api)
    selected = _response_template(chosen, request)
    content_type: str | None = None
    if selected is None:
        text, override_status, overridden = body, None, {}
    else:
        content_type, response_template = selected
        try:
            answer = render_response(
                response_template,
                RenderInput(
                    body=body, query=data.query, headers=data.headers, context=data.context
                ),
            )
        except VelocityRuntimeError:
            return _internal_error(api)
        text, override_status, overridden = answer.text, answer.status, dict(answer.headers)
    headers: dict[str, str] = {}
    for name, value in chosen.response_parameters.items():
        static = static_value(value)
        if not name.startswith(METHOD_HEADER) or static is None:
            raise UnsupportedConfiguration(f"{method.name}: response parameter {name} = {value!r}")
        header = name.removeprefix(METHOD_HEADER)
        if method_response.declares(header):
            headers[header] = static
    # Overrides apply after the standard mappings, to headers the method response declares.
    headers |= {name: value for name, value in overridden.items() if method_response.declares(name)}
    if content_type and not any(name.lower() == "content-type" for name in headers):
        # The answer is of the media type its template was selected for.
        headers["Content-Type"] = content_type
    return HttpResponse(override_status or int(chosen.status_code), headers, text)


__all__ = [
    "DEFAULT_STATUS",
    "INTERNAL_ERROR",
    "MISSING_ROUTE",
    "UNSUPPORTED_MEDIA",
    "UnsupportedConfiguration",
    "gateway_response",
    "invoke",
    "media_type",
]
