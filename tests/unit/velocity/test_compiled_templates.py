"""What compiling a template to one Python function must not change: the shapes Python itself
limits (20 nested loops, 100 levels of indentation in one function), the scopes the compiler
resolves where a name is written, and renders of one cached template that share nothing.

Each case's expectation is Velocity 1.7's own output: `test_the_cases_are_velocity_1_7s_own_
output` renders them with Velocity 1.7 itself where Java and Debian's `velocity` are installed.
"""

from __future__ import annotations

import pytest

from beekeeper.apigateway.velocity.compiler import MAX_DEPTH
from beekeeper.apigateway.velocity.renderer import RenderInput, render
from tests.support.velocity_java import assert_velocity_1_7_renders, needs_velocity_1_7

NESTED_LOOPS = 25  # more than the 20 nested loops Python compiles in one function
NESTED_IFS = 110  # more than the 100 levels of indentation Python parses
ELSEIFS = 50  # each #elseif nests one level deeper than the one before
CALLS = MAX_DEPTH + 2  # a call's arguments are evaluated one level deeper than the call

# (template, what Velocity 1.7 renders)
CASES = [
    (
        "".join(f"#foreach($i{n} in [{n}])" for n in range(NESTED_LOOPS))
        + f"$i0$i{NESTED_LOOPS - 1}$foreach.count"
        + "#end" * NESTED_LOOPS,
        f"0{NESTED_LOOPS - 1}1",
    ),
    ("#if(true)" * NESTED_IFS + "deep" + "#end" * NESTED_IFS, "deep"),
    (
        f"#set($n = {ELSEIFS})#if($n == 0)zero"
        + "".join(f"#elseif($n == {k})n{k}" for k in range(1, ELSEIFS + 1))
        + "#{else}none#end",
        f"n{ELSEIFS}",
    ),
    ("#set($l = [0, 1])$l" + ".get($l" * CALLS + ".get(1)" + ")" * CALLS, "1"),
    # $foreach is the innermost loop's; a loop variable lives in its iteration only.
    (
        "#foreach($a in [1, 2])#foreach($b in ['x'])$foreach.count$foreach.hasNext#end"
        "$foreach.count$foreach.hasNext#end",
        "1false1true1false2false",
    ),
    ("#foreach($a in ['p', 'q'])#set($a = 'r')$a#end$!a", "rr"),
    ("#set($a = 'outer')#foreach($a in ['p'])$a#end$a", "pouter"),
    ("#foreach($x in [1, 2])#set($last = $x)#end$last", "2"),
]


@pytest.mark.parametrize(("template", "velocity_1_7"), CASES)
def test_compiled_templates_render_as_velocity_1_7(template: str, velocity_1_7: str) -> None:
    assert render(template, RenderInput()) == velocity_1_7


@pytest.mark.slow
@needs_velocity_1_7
def test_the_cases_are_velocity_1_7s_own_output() -> None:
    assert_velocity_1_7_renders(CASES)


def test_a_render_starts_from_nothing_a_previous_render_of_the_template_set() -> None:
    # One compiled function serves every render of a template text: what a render #sets must
    # be gone in the next one, in the template's scope and in a loop's.
    template = "#if($seen)seen #end#set($seen = true)#foreach($x in [1])#end$!x ok"
    assert [render(template, RenderInput()) for _ in range(3)] == [" ok"] * 3


def test_each_template_and_each_input_renders_its_own_output() -> None:
    # Templates that differ in one literal, and one template over different inputs, in turns:
    # a cache keyed by anything less than the whole text, or holding a render's input, fails.
    first, second = "#set($v = 'one')$v $input.params('q')", "#set($v = 'two')$v $input.params('q')"
    renders = [
        render(template, RenderInput(query={"q": query}))
        for query in ("a", "b")
        for template in (first, second, first)
    ]
    assert renders == ["one a", "two a", "one a", "one b", "two b", "one b"]
