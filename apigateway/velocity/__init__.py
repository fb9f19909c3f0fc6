"""The local Velocity engine: renders API Gateway mapping templates as API Gateway would.

Used by `beekeeper local` and the tests, never by the stack or the deploy path: the deployed
room's templates are rendered by API Gateway itself. The interface is `render(template,
RenderInput(...))`, which returns the rendered text or raises one of the errors below
(docs/vtl.md says what each means). Inside: airspeed_adapter.py parses (the only module that
touches airspeed), compiler.py compiles the parsed template to a Python function, values.py
and java.py give it Java's semantics, renderer.py provides API Gateway's `$input`, `$util`
and `$context`.
"""

from beekeeper.apigateway.velocity.java import UnsupportedVtl, VelocityRuntimeError, VtlRenderError
from beekeeper.apigateway.velocity.renderer import Rendered, RenderInput, render, render_response

__all__ = [
    "RenderInput",
    "Rendered",
    "UnsupportedVtl",
    "VelocityRuntimeError",
    "VtlRenderError",
    "render",
    "render_response",
]
