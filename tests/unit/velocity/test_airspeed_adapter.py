"""airspeed's parse tree, as the adapter reads it (apigateway/velocity/airspeed_adapter.py).

Every piece of airspeed the local engine relies on is pinned here: a release of airspeed-ext
that parses differently, renames a class or an attribute, or stops keeping a parenthesized
expression behind its bound `calculate`, fails these tests before it can render a template
differently from API Gateway.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from beekeeper.apigateway.velocity import UnsupportedVtl
from beekeeper.apigateway.velocity.airspeed_adapter import parse
from beekeeper.apigateway.velocity.syntax import (
    Binary,
    Foreach,
    If,
    Interpolated,
    ListLiteral,
    Literal,
    Not,
    Reference,
    ResponseOverride,
    Set,
    Step,
    Text,
    Variable,
)
from beekeeper.core.paths import PACKAGE_ROOT
from beekeeper.core.routes import template_files
from beekeeper.core.settings import Mode
from beekeeper.vtl import load_template, template_values
from tests.support.packages import SOURCE_PACKAGES


def test_response_overrides_are_read_from_dotted_sets() -> None:
    # airspeed parses `$context.responseOverride.status` as DotDictAccessTerms: pinned here.
    assert parse(
        "#set($context.responseOverride.status = 302)"
        "#set($context.responseOverride.header.Location = $to)"
    ) == (
        ResponseOverride("status", Literal(302)),
        ResponseOverride("header.Location", Variable("to")),
    )


def test_every_statement_of_the_subset_is_read_into_our_syntax() -> None:
    template = (
        "## a comment\n"
        "#set($a = 'x')\n"
        "#set($n = -12)\n"
        "#set($flag = !$a.isEmpty())\n"
        "#if(($n < 0) && $flag)neg#elseif($n == 0)zero#{else}pos#end\n"
        "#foreach($item in ['p', \"q$a\"])$item.length()#end\n"
        "$!{input.params().header.get('Cookie')} {\"k\": $n}"
    )
    assert parse(template) == (
        Set("a", Literal("x")),
        Set("n", Literal(-12)),
        Set("flag", Not(Variable("a", (Step("isEmpty", ()),)))),
        If(
            (
                (
                    Binary(
                        "&&",
                        Binary("<", Variable("n"), Literal(0)),
                        Variable("flag"),
                    ),
                    (Text("neg"),),
                ),
                (Binary("==", Variable("n"), Literal(0)), (Text("zero"),)),
            ),
            (Text("pos"),),
        ),
        # A directive that ends its line takes the line's end with it.
        Foreach(
            "item",
            ListLiteral((Literal("p"), Interpolated((Text("q"), _ref("$a", Variable("a")))))),
            (_ref("$item.length()", Variable("item", (Step("length", ()),))),),
        ),
        Reference(
            Variable(
                "input",
                (
                    Step("params", ()),
                    Step("header"),
                    Step("get", (Literal("Cookie"),)),
                ),
            ),
            quiet=True,
            source="$!{input.params().header.get('Cookie')}",
        ),
        Text(' {"k": '),
        _ref("$n", Variable("n")),
        Text("}"),
    )


def _ref(source: str, value: Variable) -> Reference:
    return Reference(value, quiet=False, source=source)


def test_literals_and_empty_argument_lists() -> None:
    (statement,) = parse("#set($l = [true, false, null, 'a\\b', [], $x.f()])")
    assert statement == Set(
        "l",
        ListLiteral(
            (
                Literal(True),
                Literal(False),
                Literal(None),
                Literal("a\\b"),  # no escapes inside single quotes, as in API Gateway
                ListLiteral(()),
                Variable("x", (Step("f", ()),)),
            )
        ),
    )


def test_if_without_else_has_no_otherwise_and_whole_line_directives_eat_their_newline() -> None:
    assert parse("#if($a)\nyes\n#end\n") == (If(((Variable("a"), (Text("yes\n"),)),)),)


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("#macro(m)x#end", "MacroDefinition"),
        ("#parse('x.vtl')", "ParseDirective"),
        ("#stop", "StopDirective"),
        ("#set($m = {})", "DictionaryLiteral"),
        ("#set($f = 1.5)", "FloatingPointLiteral"),
        ("#foreach($i in [1..3])#end", "Range"),
        ("#set($l = ['a'])$l[0]", "index notation"),
        ("$a.b[0]", "index notation"),
        ("$x()", "calls a variable"),
        ("#set($a = 1 + 2 * 3)", "one operator per expression"),
        ("#set($a.b = 1)", "supported subset"),
        ("${a|'b'}", "Velocity 2"),
        ("price: $5", "not a reference"),
        ("a # b", "literal"),
        ("#if($a)", "template syntax"),
    ],
)
def test_what_has_no_node_is_refused_when_parsed(template: str, why: str) -> None:
    with pytest.raises(UnsupportedVtl, match=re.escape(why)):
        parse(template)


def test_the_real_templates_parse() -> None:
    values = template_values(
        table_name="t", origin="https://shop.example", mode=Mode.CAPACITY, session_seconds=900
    )
    for name in sorted(template_files()):
        assert parse(load_template(name, values)), name


def test_only_the_adapter_imports_airspeed() -> None:
    importing = sorted(
        str(path.relative_to(PACKAGE_ROOT))
        for folder in SOURCE_PACKAGES
        for path in (PACKAGE_ROOT / folder).glob("**/*.py")
        if re.search(r"^\s*(import airspeed|from airspeed\b)", path.read_text(), re.M)
    )
    assert importing == [str(Path("apigateway/velocity/airspeed_adapter.py"))]


def test_the_adapter_reads_one_private_member_of_airspeed() -> None:
    """Only a parenthesized expression's bound `calculate` (its owner, `__self__`) is private
    to airspeed; pyproject.toml pins the range these tests pass on."""
    source = (PACKAGE_ROOT / "apigateway" / "velocity" / "airspeed_adapter.py").read_text()
    code = "\n".join(line.split("#", 1)[0] for line in source.splitlines())
    assert re.findall(r"\b(?:parsed|airspeed)\._\w+", code) == []
    assert code.count(".__self__") == 1
    assert re.search(
        r'"airspeed-ext>=0\.6\.9,<0\.7"', (PACKAGE_ROOT / "pyproject.toml").read_text()
    )
