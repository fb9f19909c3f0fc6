"""The local renderer behaves as API Gateway's Java Velocity, or fails loudly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beekeeper.apigateway.velocity.java import java_length, java_split
from beekeeper.apigateway.velocity.renderer import (
    MAX_FOREACH_ITERATIONS,
    Rendered,
    RenderInput,
    UnsupportedVtl,
    VelocityRuntimeError,
    escape_javascript,
    render,
    render_response,
    url_decode,
    url_encode,
)


def run(template: str, **data: object) -> str:
    return render(template, RenderInput(**data))  # type: ignore[arg-type]


def with_text(text: str, expression: str) -> str:
    """Render `expression` with $s set to `text` (set through a header: any text at all)."""
    return run(f"#set($s = $input.params('x')){expression}", headers={"x": text})


@pytest.mark.parametrize(
    ("text", "pattern", "expected"),
    [
        ("a;b;c", ";", ["a", "b", "c"]),
        ("a;b;;", ";", ["a", "b"]),  # trailing empty strings are dropped
        (";a", ";", ["", "a"]),  # a leading one is kept
        (";;", ";", []),
        ("", ";", [""]),  # no match: the input itself
        ("abc", "", ["a", "b", "c"]),  # no empty string at the start or the end
        ("a.b", ".", None),  # '.' is a regex: refused, it differs between Java and Python
        ("a1b22c", "[0-9]+", ["a", "b", "c"]),  # a regex, not a literal
        ("a|b", "|", ["a", "|", "b"]),  # "|" alone matches the empty string everywhere
    ],
)
def test_split_is_javas_regex_split(text: str, pattern: str, expected: list[str] | None) -> None:
    if expected is None:
        with pytest.raises(UnsupportedVtl):
            java_split(text, pattern)
        return
    assert java_split(text, pattern) == expected
    rendered = with_text(text, f"#foreach($p in $s.split('{pattern}'))<$p>#end")
    assert rendered == "".join(f"<{p}>" for p in expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  a b  ", "a b"),
        ("\t\n\x01x\x1f", "x"),  # every character <= U+0020 goes
        ("\u00a0x\u2003", "\u00a0x\u2003"),  # Unicode spaces stay (Python's strip removes them)
        ("", ""),
    ],
)
def test_trim_strips_only_characters_up_to_space(text: str, expected: str) -> None:
    assert with_text(text, "[$s.trim()]") == f"[{expected}]"


def test_index_of_returns_minus_one_and_counts_utf16_units() -> None:
    assert with_text("abc", "$s.indexOf('z')") == "-1"
    assert with_text("abc", "$s.indexOf('c')") == "2"
    # An emoji is two UTF-16 units in Java: indexes and length agree with Java, not Python.
    assert with_text("\U0001f600=x", "$s.indexOf('=') $s.length()") == "2 4"
    assert with_text("\U0001f600=x", "#set($i = $s.indexOf('='))$s.substring(0, $i)") == (
        "\U0001f600"
    )
    assert java_length("\U0001f600") == 2


def test_equals_is_type_strict_and_double_equals_refuses_mixed_types() -> None:
    assert with_text("1", "$s.equals('1') $s.equals(1)") == "true false"
    with pytest.raises(UnsupportedVtl, match="like with like"):
        with_text("1", "#if($s == 1)x#end")


def test_matches_must_match_the_whole_string() -> None:
    assert with_text("abc", "$s.matches('b') $s.matches('a[b]c')") == "false true"
    assert with_text("abc\n", "$s.matches('^abc$')") == "false"


def test_is_empty_lower_case_contains_starts_with() -> None:
    assert with_text("", "$s.isEmpty()") == "true"
    assert with_text("CoOkIe", "$s.toLowerCase() $s.contains('Ok') $s.startsWith('Co')") == (
        "cookie true true"
    )


def test_substring_out_of_range_is_a_velocity_runtime_error() -> None:
    with pytest.raises(VelocityRuntimeError, match="StringIndexOutOfBounds"):
        with_text("abc", "$s.substring(2, 5)")


def test_list_and_map_methods() -> None:
    template = (
        "#set($m = $util.parseJson($input.body))$m.keySet().size() $m.get('a') $m.b "
        "$m.containsKey('c') $m.list.get(1) $m.list.isEmpty() $m.list.contains('x')"
    )
    assert run(template, body='{"a": "1", "b": "2", "list": ["w", "x"]}') == (
        "3 1 2 false x false true"
    )


@pytest.mark.parametrize(
    "template",
    [
        "#set($s = 'abc')$s.upper()",  # a Python method, not Java's
        "#set($s = 'abc')$s.strip()",
        "#set($s = 'abc')$s.charAt(0)",  # Java has it; the renderer does not (not in the subset)
        "#set($s = 'abc')$s.length",  # a property where Java has none
        "#set($s = 'abc')$s.substring('1')",  # no overload takes a string
        "$context.nonsense",
        "$input.nonsense()",
        "$util.toJson('x')",
        "#set($m = $util.parseJson('{}'))$m.remove('a')",
        "$undefined",  # null rendered: text or nothing depending on the configuration
        "#if('text')x#end",  # truthiness of a string differs between versions
        "#set($a = 1 + 2 * 3)",  # airspeed's precedence is not Java's
        "#set($a = 1)#set($a = $missing)$a",  # #set to null: version-dependent
        "#macro(m)x#end#m()",
        "#set($m = {})",
        "#set($f = 1.5)",
        "#foreach($i in [1..3])$i#end",
        "#set($l = ['a'])$l[0]",
        "price: $5",  # a literal '$' in text
        "a # b",  # a literal '#' in text
        "#set($a = 1 / 0)",
        "#foreach($k in $util.parseJson('{}'))#end",  # iterating a map
    ],
)
def test_unsupported_constructs_fail_loudly(template: str) -> None:
    with pytest.raises(UnsupportedVtl):
        run(template)


def test_undefined_is_false_in_if_and_quiet_reference_renders_nothing() -> None:
    assert run("#if($nothing)yes#{else}no#end|$!nothing|#if(!$nothing)not#end") == "no||not"


def test_integer_arithmetic_truncates_toward_zero_like_java() -> None:
    assert run("#set($a = -7 / 2)#set($b = -7 % 2)#set($c = 7 / 2)$a $b $c") == "-3 -1 3"


def test_set_inside_foreach_outlives_the_loop() -> None:
    assert run("#foreach($i in ['a', 'b'])#set($last = $i)#end$last") == "b"


def test_foreach_beyond_api_gateways_iteration_quota_fails() -> None:
    header = ";".join(["x"] * (MAX_FOREACH_ITERATIONS + 1))
    with pytest.raises(UnsupportedVtl, match="allows 1000"):
        with_text(header, "#foreach($p in $s.split(';'))#end")
    # Bounded with split's limit: the last part holds the rest.
    rendered = with_text(header, "#foreach($p in $s.split(';', 1000))#set($last = $p)#end$last")
    assert rendered == "x;x"


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("a;b;c", 2, ["a", "b;c"]),
        ("a;b;;", 10, ["a", "b", "", ""]),  # a positive limit keeps trailing empty strings
        ("a;b;;", -1, ["a", "b", "", ""]),
        ("a;b;;", 0, ["a", "b"]),
        ("abc", 1, ["abc"]),
    ],
)
def test_split_with_a_limit(text: str, limit: int, expected: list[str]) -> None:
    assert java_split(text, ";", limit) == expected


def test_input_params_search_order_and_case_insensitive_headers() -> None:
    data = {
        "path_parameters": {"a": "path"},
        "query": {"a": "query", "b": "query"},
        "headers": {"A": "header", "Cookie": "c=1"},
    }
    assert run("$input.params('a') $input.params('b') $input.params('COOKIE')", **data) == (
        "path query c=1"
    )
    assert run("[$input.params('missing')]") == "[]"
    # The header map itself is an ordinary (case-sensitive) map, as in Java.
    assert run("[$!input.params().header.get('cookie')]", **data) == "[]"


def test_input_path_json_and_body() -> None:
    body = '{"a": {"b": [1, {"c": "x"}]}}'
    assert run("$input.path('$.a.b[1].c') $input.json('$.a.b')", body=body) == 'x [1,{"c":"x"}]'
    assert run("$input.body", body=body) == body
    with pytest.raises(UnsupportedVtl):
        run("$input.path('$..c')", body=body)


def test_context_and_stage_variables() -> None:
    rendered = run(
        "$context.requestTimeEpoch $context.identity.sourceIp $stageVariables.v",
        context={"requestTimeEpoch": 1_700_000_000_123, "identity": {"sourceIp": "192.0.2.1"}},
        stage_variables={"v": "stage"},
    )
    assert rendered == "1700000000123 192.0.2.1 stage"


def test_a_nested_context_object_is_one_object_within_a_render() -> None:
    # As in Java, where $context.identity is one object: a list holding it contains it.
    template = "#set($held = [$context.identity])$held.contains($context.identity)"
    assert run(template, context={"identity": {"sourceIp": "192.0.2.1"}}) == "true"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('it\'s "x"', 'it\\\'s \\"x\\"'),
        ("a/b\\c", "a\\/b\\\\c"),
        ("\n\t\x01", "\\n\\t\\u0001"),
        ("é\U0001f600", "\\u00E9\\uD83D\\uDE00"),
    ],
)
def test_escape_javascript_is_commons_lang(text: str, expected: str) -> None:
    assert escape_javascript(text) == expected
    assert with_text(text, "$util.escapeJavaScript($s)") == expected


def test_url_encode_decode_and_base64_follow_java() -> None:
    assert url_encode("a b*~é") == "a+b*%7E%C3%A9"
    assert url_decode("a+b%2A%7e") == "a b*~"
    with pytest.raises(VelocityRuntimeError):
        url_decode("%zz")
    assert run("$util.base64Encode('hé')") == "aMOp"
    assert run("$util.base64Decode('aMOp') $util.base64Decode('aMOp')") == "hé hé"
    with pytest.raises(VelocityRuntimeError):
        run("$util.base64Decode('!!')")
    with pytest.raises(VelocityRuntimeError):
        run("$util.parseJson('{oops')")


def test_remaining_string_methods() -> None:
    rendered = with_text(
        "a=b=c", "$s.endsWith('=c') $s.lastIndexOf('=') $s.indexOf('=', 2) $s.toString()"
    )
    assert rendered == "true 3 3 a=b=c"
    assert with_text("a1b22", "$s.replaceAll('[0-9]+', '-')") == "a-b-"
    with pytest.raises(UnsupportedVtl, match="replacement"):
        with_text("a1", "$s.replaceAll('[0-9]', '$0')")


@pytest.mark.parametrize(
    "template",
    [
        "#if(false)#macro(m)x#end#end",
        "#if(false)#set($m = {})#end",
        "#if(false)#set($a = 1 + 2 * 3)#end",
        "#if(false)price: $5#end",
        "#if(false)$x()#end",
        "#foreach($i in [])#set($l = ['a'])$l[0]#end",
    ],
)
def test_structural_refusals_do_not_wait_for_the_branch_to_run(template: str) -> None:
    # A construct outside the subset in a branch the tests never take would still reach
    # API Gateway: the compiler refuses it when the template is compiled.
    with pytest.raises(UnsupportedVtl):
        run(template)


def test_index_of_from_past_the_end_behaves_as_from_the_end() -> None:
    # java.lang.String#indexOf(str, fromIndex): "" is found at the length, nothing else is.
    assert with_text("abc", "$s.indexOf('', 7) $s.indexOf('c', 7) $s.indexOf('c', -4)") == (
        "3 -1 2"
    )
    assert with_text("\U0001f600c", "$s.indexOf('', 9) $s.indexOf('c', 1)") == "3 2"


def _utf16_index_of(text: str, needle: str, start: int) -> int:
    """Java's indexOf computed the slow way: over every UTF-16 code unit position."""
    units = text.encode("utf-16-le", "surrogatepass")
    wanted = needle.encode("utf-16-le", "surrogatepass")
    length = len(units) // 2
    for position in range(min(max(start, 0), length), length + 1):
        if units[2 * position : 2 * position + len(wanted)] == wanted:
            return position
    return -1


TEXT = st.text(alphabet=st.sampled_from(["a", "b", "=", " ", "é", "\U0001f600"]), max_size=8)


def _utf16_substring(text: str, begin: int) -> str | None:
    units = text.encode("utf-16-le", "surrogatepass")
    if not 0 <= begin <= len(units) // 2:
        return None
    return units[2 * begin :].decode("utf-16-le", "surrogatepass")


@settings(max_examples=300, deadline=None)
@given(text=TEXT, needle=TEXT, start=st.integers(min_value=-3, max_value=12))
def test_index_of_and_substring_count_utf16_units_for_any_text(
    text: str, needle: str, start: int
) -> None:
    # The renderer takes a short cut for ASCII text; both ways must give Java's answers.
    headers = {"x": text, "n": needle}
    setup = "#set($s = $input.params('x'))#set($n = $input.params('n'))"
    found = run(f"{setup}$s.indexOf($n, {start}) $s.length()", headers=headers)
    assert found == f"{_utf16_index_of(text, needle, start)} {java_length(text)}"
    expected = _utf16_substring(text, start)
    if expected is None:
        with pytest.raises(VelocityRuntimeError, match="StringIndexOutOfBounds"):
            run(f"{setup}$s.substring({start})", headers=headers)
    else:
        assert run(f"{setup}[$s.substring({start})]", headers=headers) == f"[{expected}]"


def test_a_response_template_may_set_the_status_once() -> None:
    template = (
        "#if($input.path('$.code') == 'full')#set($context.responseOverride.status = 503)#end{}"
    )
    full = render_response(template, RenderInput(body='{"code": "full"}'))
    assert full == Rendered("{}", 503)
    assert render_response(template, RenderInput(body='{"code": "ok"}')) == Rendered("{}", None)
    # Overrides are final: a second one of the same parameter is an error (a 5XX in AWS).
    twice = (
        "#set($context.responseOverride.status = 200)#set($context.responseOverride.status = 503)"
    )
    with pytest.raises(VelocityRuntimeError, match="twice"):
        render_response(twice, RenderInput())
    with pytest.raises(VelocityRuntimeError, match="number"):
        render_response("#set($context.responseOverride.status = 'x')", RenderInput())
    # Any other dotted #set stays outside the subset.
    with pytest.raises(UnsupportedVtl, match="supported subset"):
        render_response("#set($context.responseOverride.body = 1)", RenderInput())
    with pytest.raises(UnsupportedVtl, match="supported subset"):
        render_response("#set($context.requestOverride.header.x = 1)", RenderInput())


def test_a_response_template_may_set_a_header_once() -> None:
    template = (
        "#set($to = \"https://shop.example/?t=$input.params('t')\")"
        "#set($context.responseOverride.status = 302)"
        "#set($context.responseOverride.header.Location = $to)"
    )
    rendered = render_response(template, RenderInput(query={"t": "a1"}))
    assert rendered == Rendered("", 302, {"Location": "https://shop.example/?t=a1"})
    twice = (
        "#set($context.responseOverride.header.Location = 'a')"
        "#set($context.responseOverride.header.Location = 'b')"
    )
    with pytest.raises(VelocityRuntimeError, match="twice"):
        render_response(twice, RenderInput())
