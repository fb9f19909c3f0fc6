"""A REST API as API Gateway stores it, read from CloudFormation's shape, and the rules a
method must keep so that what API Gateway stores is what the template says.

API Gateway's data model (REST API reference: Method, Integration, IntegrationResponse,
MethodResponse, GatewayResponse): a method has one integration, whose integration responses
are kept by status code (PutIntegrationResponse takes the status code in its path, GetMethod
returns `integrationResponses` as a map), as are its method responses; gateway responses are
kept by response type. CloudFormation describes them as lists (AWS::ApiGateway::Method's
Integration.IntegrationResponses, MethodResponses), so loading a list as API Gateway stores it
means a later entry of one status replaces the earlier one. `load` does exactly that; `check`
refuses a definition where it would happen, or where API Gateway would answer 500 (an
integration response whose status has no method response: "If no method response is defined
for the returned status code, API Gateway returns a 500 error",
https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-integration-settings-integration-response.html),
or drop a header (a mapping the method response does not declare).

The same loader reads a synthesized template (`methods_of_template`) and the properties the
stack is built from (stacks/rest_api.py), so a test can hold the two equal. Standard library
only: the stack checks its methods with it at synth, without the local extra.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# The integration types that pass the request and the answer through untouched: no
# integration or method responses apply to them.
PROXY_TYPES = frozenset({"AWS_PROXY", "HTTP_PROXY"})
# API Gateway's default passthrough behaviour (Integration.passthroughBehavior).
DEFAULT_PASSTHROUGH = "WHEN_NO_MATCH"
METHOD_HEADER = "method.response.header."
INTEGRATION_HEADER = "integration.request.header."
GATEWAY_HEADER = "gatewayresponse.header."
# What a mapping template may override (apigateway-override-request-response-parameters).
_OVERRIDDEN_HEADER = re.compile(r"#set\(\s*\$context\.responseOverride\.header\.([^\s=)]+)\s*=")
_OVERRIDDEN_STATUS = re.compile(r"#set\(\s*\$context\.responseOverride\.status\s*=\s*([^)]*)\)")
_STATIC = re.compile(r"'([^']*)'", re.S)
_STATUS_CODE = re.compile(r"[1-5]\d{2}")
# A JSON-protocol AWS service and the media type its requests carry.
JSON_PROTOCOL_CONTENT_TYPES = {"dynamodb": "application/x-amz-json-1.0"}
_SERVICE_ACTION = re.compile(r":apigateway:[^:]*:(?P<service>[a-z0-9-]+):action/(?P<action>\w+)$")


class InvalidApi(ValueError):
    """A method (or gateway response) API Gateway would not keep or run as written."""


# -- CloudFormation values -----------------------------------------------------------------


def cfn_text(value: Any) -> str:
    """A CloudFormation string value as text: {"Ref": X} written <Ref:X>, {"Fn::GetAtt": [X,
    A]} written <GetAtt:X.A>, Fn::Join joined, so two definitions compare as strings."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(cfn_text(part) for part in parts)
    if isinstance(value, dict) and "Ref" in value:
        return f"<Ref:{value['Ref']}>"
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        target = value["Fn::GetAtt"]
        parts = target if isinstance(target, list) else str(target).split(".", 1)
        return "<GetAtt:{}.{}>".format(*parts)
    raise InvalidApi(f"not a CloudFormation string value: {value!r}")


_INTRINSICS = frozenset({"Fn::Join", "Ref", "Fn::GetAtt"})


def resolved(value: Any) -> Any:
    """A CloudFormation value with every string intrinsic written as text (cfn_text)."""
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in _INTRINSICS:
            return cfn_text(value)
        return {key: resolved(item) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item) for item in value]
    return value


def _texts(values: Mapping[str, Any] | None) -> dict[str, str]:
    return {str(key): cfn_text(value) for key, value in (values or {}).items()}


def static_value(mapping: str) -> str | None:
    """The value of a static mapping ('value'), or None for any other mapping expression."""
    match = _STATIC.fullmatch(mapping)
    return match.group(1) if match else None


def overridden_headers(template: str) -> tuple[str, ...]:
    """The headers a mapping template sets with $context.responseOverride.header.<Name>."""
    return tuple(dict.fromkeys(_OVERRIDDEN_HEADER.findall(template)))


def overridden_statuses(template: str) -> tuple[str, ...]:
    """What a mapping template sets $context.responseOverride.status to, as written."""
    return tuple(dict.fromkeys(value.strip() for value in _OVERRIDDEN_STATUS.findall(template)))


# -- the data model ----------------------------------------------------------------------


@dataclass(frozen=True)
class IntegrationResponse:
    status_code: str
    selection_pattern: str | None  # None: the default response
    response_parameters: dict[str, str] = field(default_factory=dict)
    response_templates: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Integration:
    type: str
    http_method: str | None = None
    uri: str | None = None
    credentials: str | None = None
    passthrough_behavior: str = DEFAULT_PASSTHROUGH
    request_parameters: dict[str, str] = field(default_factory=dict)
    request_templates: dict[str, str] = field(default_factory=dict)
    # By status code, as API Gateway keeps them, in the order first defined.
    responses: dict[str, IntegrationResponse] = field(default_factory=dict)

    def service_action(self) -> tuple[str, str] | None:
        """(service, action) of an action-based AWS integration URI."""
        match = _SERVICE_ACTION.search(self.uri or "")
        return (match.group("service"), match.group("action")) if match else None


@dataclass(frozen=True)
class MethodResponse:
    status_code: str
    # method.response.header.<Name> -> required
    response_parameters: dict[str, bool] = field(default_factory=dict)

    def declares(self, header: str) -> bool:
        return f"{METHOD_HEADER}{header}" in self.response_parameters


@dataclass(frozen=True)
class Method:
    path: str
    http_method: str
    integration: Integration
    method_responses: dict[str, MethodResponse] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.http_method} {self.path}"


@dataclass(frozen=True)
class GatewayResponse:
    response_type: str
    status_code: str | None = None
    response_parameters: dict[str, str] = field(default_factory=dict)
    response_templates: dict[str, str] = field(default_factory=dict)


MethodKey = tuple[str, str]  # (path, HTTP method)


@dataclass(frozen=True)
class RestApi:
    methods: dict[MethodKey, Method]
    gateway_responses: dict[str, GatewayResponse] = field(default_factory=dict)

    def method(self, path: str, http_method: str) -> Method | None:
        return self.methods.get((path, http_method))

    def paths(self) -> dict[str, tuple[str, ...]]:
        """Every path and the methods it has."""
        found: dict[str, tuple[str, ...]] = {}
        for path, verb in self.methods:
            found[path] = (*found.get(path, ()), verb)
        return found


# -- the rules -----------------------------------------------------------------------------


def method_problems(path: str, properties: Mapping[str, Any]) -> list[str]:
    """What is wrong with one method's AWS::ApiGateway::Method properties, each problem one
    sentence that names the route; [] when API Gateway keeps and runs it as written."""
    where = f"{properties.get('HttpMethod', '?')} {path}"
    integration = properties.get("Integration") or {}
    kind = integration.get("Type")
    if kind is None:
        return [f"{where} has no integration"]
    if kind in PROXY_TYPES:
        return []
    problems: list[str] = []
    declared: dict[str, set[str]] = {}
    for response in properties.get("MethodResponses") or []:
        status = str(response.get("StatusCode"))
        if status in declared:
            problems.append(f"{where} declares method response {status} twice")
        declared[status] = {
            name.removeprefix(METHOD_HEADER)
            for name in (response.get("ResponseParameters") or {})
            if name.startswith(METHOD_HEADER)
        }
    responses = integration.get("IntegrationResponses") or []
    if not responses:
        problems.append(f"{where} has no integration response (a non-proxy integration needs one)")
    seen: set[str] = set()
    defaults: list[str] = []
    patterns: list[tuple[str, re.Pattern[str]]] = []
    for response in responses:
        status = str(response.get("StatusCode"))
        if status in seen:
            problems.append(
                f"{where} has two integration responses with status {status}: API Gateway "
                "keeps one per status code, the later replacing the earlier"
            )
        seen.add(status)
        pattern = response.get("SelectionPattern") or None
        if pattern is None:
            defaults.append(status)
        else:
            try:
                patterns.append((status, re.compile(pattern)))
            except re.error as error:
                problems.append(f"{where}: selection pattern {pattern!r} is not a regex ({error})")
        problems += _response_problems(where, status, response, declared)
    if len(defaults) > 1:
        problems.append(
            f"{where} has {len(defaults)} default integration responses "
            f"({', '.join(defaults)}): API Gateway uses one"
        )
    problems += _overlaps(where, patterns)
    problems += _request_problems(where, integration)
    return problems


def _response_problems(
    where: str, status: str, response: Mapping[str, Any], declared: Mapping[str, set[str]]
) -> list[str]:
    if status not in declared:
        return [
            f"{where}: integration response {status} has no method response {status}, so "
            "API Gateway would answer 500"
        ]
    problems: list[str] = []
    mapped: set[str] = set()
    for name, value in (response.get("ResponseParameters") or {}).items():
        if not name.startswith(METHOD_HEADER):
            problems.append(f"{where}: integration response {status} maps {name}, not a header")
            continue
        header = name.removeprefix(METHOD_HEADER)
        mapped.add(header)
        if header not in declared[status]:
            problems.append(
                f"{where}: integration response {status} maps header {header}, which method "
                f"response {status} does not declare"
            )
        if not isinstance(value, str) or static_value(value) is None:
            problems.append(
                f"{where}: header {header} is mapped from {value!r}; only static values "
                "('...') are used here"
            )
    for template in (response.get("ResponseTemplates") or {}).values():
        if not isinstance(template, str):
            continue  # a token the stack resolves: checked on the definition itself
        overridden = set(overridden_headers(template))
        for header in sorted(overridden - declared[status]):
            problems.append(
                f"{where}: the template of integration response {status} sets header "
                f"{header}, which method response {status} does not declare"
            )
        for value in overridden_statuses(template):
            if not _STATUS_CODE.fullmatch(value):
                problems.append(
                    f"{where}: the template of integration response {status} sets the status "
                    f"to {value!r}; write the status as a number so it can be checked"
                )
            elif value not in declared:
                problems.append(
                    f"{where}: the template of integration response {status} sets status "
                    f"{value}, which has no method response"
                )
            else:
                for header in sorted((mapped | overridden) - declared[value]):
                    problems.append(
                        f"{where}: the template of integration response {status} sets status "
                        f"{value}, whose method response does not declare header {header}"
                    )
    return problems


def _overlaps(where: str, patterns: list[tuple[str, re.Pattern[str]]]) -> list[str]:
    """Two selection patterns that match one status code leave the choice to API Gateway."""
    for code in range(100, 600):
        matching = [status for status, pattern in patterns if pattern.fullmatch(str(code))]
        if len(matching) > 1:
            return [
                f"{where}: status {code} matches the selection patterns of integration "
                f"responses {' and '.join(matching)}"
            ]
    return []


def _request_problems(where: str, integration: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    parameters = integration.get("RequestParameters") or {}
    for name, value in parameters.items():
        if isinstance(value, str) and static_value(value) is None:
            problems.append(f"{where}: {name} is mapped from {value!r}; only static values")
    if integration.get("Type") == "AWS":
        uri = integration.get("Uri")
        text = uri if isinstance(uri, str) else ""
        if isinstance(uri, dict):
            try:
                text = cfn_text(uri)
            except InvalidApi:
                text = ""
        match = _SERVICE_ACTION.search(text)
        service = match.group("service") if match else ""
        wanted = JSON_PROTOCOL_CONTENT_TYPES.get(service)
        given = parameters.get(f"{INTEGRATION_HEADER}Content-Type")
        if wanted and given != f"'{wanted}'":
            problems.append(
                f"{where}: the {service} integration must send Content-Type {wanted} "
                f"(integration.request.header.Content-Type '{wanted}'), not whatever the "
                "client sent"
            )
    return problems


def gateway_response_problems(properties: Mapping[str, Any]) -> list[str]:
    kind = properties.get("ResponseType", "?")
    problems = []
    for name, value in (properties.get("ResponseParameters") or {}).items():
        if not name.startswith(GATEWAY_HEADER):
            problems.append(f"gateway response {kind} maps {name}, not a header")
        elif not isinstance(value, str) or static_value(value) is None:
            problems.append(f"gateway response {kind}: {name} is not a static value")
    return problems


def check(
    methods: Mapping[MethodKey, Mapping[str, Any]],
    gateway_responses: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Raise InvalidApi with every problem of the definition, one sentence each."""
    problems: list[str] = []
    for (path, verb), properties in methods.items():
        if properties.get("HttpMethod", verb) != verb:
            problems.append(f"{verb} {path} is defined with HttpMethod {properties['HttpMethod']}")
        problems += method_problems(path, properties)
    for properties in (gateway_responses or {}).values():
        problems += gateway_response_problems(properties)
    if problems:
        raise InvalidApi("; ".join(problems))


# -- loading, as API Gateway stores it ---------------------------------------------------------


def _integration(properties: Mapping[str, Any]) -> Integration:
    responses: dict[str, IntegrationResponse] = {}
    for response in properties.get("IntegrationResponses") or []:
        status = cfn_text(response["StatusCode"])
        # PutIntegrationResponse: one per status code; a later one replaces the earlier.
        responses[status] = IntegrationResponse(
            status_code=status,
            selection_pattern=cfn_text(response["SelectionPattern"])
            if response.get("SelectionPattern")
            else None,
            response_parameters=_texts(response.get("ResponseParameters")),
            response_templates=_texts(response.get("ResponseTemplates")),
        )
    return Integration(
        type=cfn_text(properties["Type"]),
        http_method=cfn_text(properties["IntegrationHttpMethod"])
        if properties.get("IntegrationHttpMethod")
        else None,
        uri=cfn_text(properties["Uri"]) if properties.get("Uri") else None,
        credentials=cfn_text(properties["Credentials"]) if properties.get("Credentials") else None,
        passthrough_behavior=cfn_text(properties.get("PassthroughBehavior", DEFAULT_PASSTHROUGH)),
        request_parameters=_texts(properties.get("RequestParameters")),
        request_templates=_texts(properties.get("RequestTemplates")),
        responses=responses,
    )


def load_method(path: str, properties: Mapping[str, Any]) -> Method:
    """One AWS::ApiGateway::Method's properties as API Gateway stores the method."""
    method_responses: dict[str, MethodResponse] = {}
    for response in properties.get("MethodResponses") or []:
        status = cfn_text(response["StatusCode"])
        method_responses[status] = MethodResponse(
            status, {str(k): bool(v) for k, v in (response.get("ResponseParameters") or {}).items()}
        )
    return Method(
        path=path,
        http_method=cfn_text(properties["HttpMethod"]),
        integration=_integration(properties["Integration"]),
        method_responses=method_responses,
    )


def load_gateway_response(properties: Mapping[str, Any]) -> GatewayResponse:
    status = properties.get("StatusCode")
    return GatewayResponse(
        response_type=cfn_text(properties["ResponseType"]),
        status_code=cfn_text(status) if status else None,
        response_parameters=_texts(properties.get("ResponseParameters")),
        response_templates=_texts(properties.get("ResponseTemplates")),
    )


def load(
    methods: Mapping[MethodKey, Mapping[str, Any]],
    gateway_responses: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    validate: bool = True,
) -> RestApi:
    """The API as API Gateway stores it, from AWS::ApiGateway::Method properties by (path,
    method) and AWS::ApiGateway::GatewayResponse properties by type. With `validate` (the
    default) a definition that breaks the rules above is refused (InvalidApi)."""
    if validate:
        check(methods, gateway_responses)
    return RestApi(
        methods={key: load_method(key[0], props) for key, props in methods.items()},
        gateway_responses={
            cfn_text(props["ResponseType"]): load_gateway_response(props)
            for props in (gateway_responses or {}).values()
        },
    )


def methods_of_template(
    template: Mapping[str, Any],
) -> tuple[dict[MethodKey, dict[str, Any]], dict[str, dict[str, Any]]]:
    """A synthesized CloudFormation template's methods by (path, method) and its gateway
    responses by type, as the properties `load` takes (RestApiId and ResourceId dropped)."""
    resources: Mapping[str, Any] = template["Resources"]
    path_parts = {
        logical_id: resource["Properties"]
        for logical_id, resource in resources.items()
        if resource["Type"] == "AWS::ApiGateway::Resource"
    }

    def path_of(reference: Any) -> str:
        if isinstance(reference, dict) and "Ref" in reference:
            parent = path_parts[reference["Ref"]]
            return f"{path_of(parent['ParentId']).rstrip('/')}/{parent['PathPart']}"
        return "/"  # the API's root resource (Fn::GetAtt RootResourceId)

    methods: dict[MethodKey, dict[str, Any]] = {}
    gateway: dict[str, dict[str, Any]] = {}
    for resource in resources.values():
        properties = dict(resource.get("Properties") or {})
        if resource["Type"] == "AWS::ApiGateway::Method":
            path = path_of(properties.pop("ResourceId"))
            properties = resolved(properties)
            properties.pop("RestApiId", None)
            methods[(path, properties["HttpMethod"])] = properties
        elif resource["Type"] == "AWS::ApiGateway::GatewayResponse":
            properties.pop("RestApiId", None)
            gateway[properties["ResponseType"]] = resolved(properties)
    return methods, gateway


def load_template(template: Mapping[str, Any], *, validate: bool = True) -> RestApi:
    """The REST API a synthesized template deploys, as API Gateway stores it."""
    methods, gateway = methods_of_template(template)
    return load(methods, gateway, validate=validate)


__all__ = [
    "GatewayResponse",
    "Integration",
    "IntegrationResponse",
    "InvalidApi",
    "Method",
    "MethodResponse",
    "RestApi",
    "cfn_text",
    "check",
    "load",
    "load_method",
    "load_template",
    "method_problems",
    "methods_of_template",
    "overridden_headers",
    "overridden_statuses",
    "resolved",
    "static_value",
]
