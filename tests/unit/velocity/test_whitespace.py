"""Where a directive's line break goes: the local renderer as Java's Velocity 1.7.

Velocity 1.7 takes the end of a line holding only a directive (`#set`, `#if(...)`, `#else`,
`#end`, `#foreach(...)`) as part of the directive; airspeed did so for some of them and put the
rest into the output, so a loop rendered a blank line each time round. Each case below is
Velocity 1.7's own output; `test_the_cases_are_velocity_1_7s_own_output` renders them with
Velocity 1.7 itself where Java and Debian's `velocity` package are installed (the jar and its
dependencies under /usr/share/java), so the expectations can not drift from the engine.
"""

from __future__ import annotations

import pytest

from beekeeper.apigateway.velocity.renderer import RenderInput, render
from tests.support.velocity_java import assert_velocity_1_7_renders, needs_velocity_1_7

LOOP = "#foreach($c in ['a', 'b'])"
# (template, what Velocity 1.7 renders)
CASES = [
    (f"{LOOP}\n#set($x = 1)\n#end\nB\n", "B\n"),
    (f"{LOOP}\nA\n#end\nB\n", "A\nA\nB\n"),
    (f"{LOOP}\n$c\n#end\n", "a\nb\n"),
    (f"X {LOOP}\nA\n#end\n", "X A\nA\n"),
    (f"{LOOP}A#end\n", "AA"),
    (f"{LOOP}  \nA\n#end\nB\n", "A\nA\nB\n"),
    (f"{LOOP}\n\nA\n#end\n", "\nA\n\nA\n"),
    (f"{LOOP}\n#if($c == 'a')\nA\n#elseif($c == 'b')\nX\n#else\n#set($x = 1)\n#end\n#end\nB\n",
     "A\nX\nB\n"),
    ("#foreach($l in [['a', 'b'], ['c']])\n#foreach($c in $l)\n#set($x = 1)\n#end\n#end\nB\n",
     "B\n"),
    ("#if(false)\nA\n#else\nC\n#end\nB\n", "C\nB\n"),
    ("#if(false)\nA\n#else\n#set($x = 1)\n#end\nB\n", "B\n"),
    ("#if(false)\nA\n#else \nC\n#end\nB\n", "C\nB\n"),
    ("#if(false)\nA\n#else C\n#end\nB\n", " C\nB\n"),
    ("#if(false)\nA\n#else\n\nC\n#end\nB\n", "\nC\nB\n"),
    ("X #if(false)\nA\n#else\nC\n#end\nB\n", "X C\nB\n"),
    ("#if(false)\nA\n#elseif(true)\nC\n#end\nB\n", "C\nB\n"),
    ("#if(true)  \nA\n#end  \nB\n", "A\nB\n"),
    ("#set($y = 1)\n#if(true)\n#set($x = 1)\n#end\n#set($z = 1)\nB\n", "B\n"),
    ('{"k": [\n' + LOOP + "\n#if($c == 'b')\n,\n#end\n$c\n#end\n]}\n", '{"k": [\na\n,\nb\n]}\n'),
]  # fmt: skip


@pytest.mark.parametrize(("template", "velocity_1_7"), CASES)
def test_directive_lines_render_as_in_velocity_1_7(template: str, velocity_1_7: str) -> None:
    assert render(template, RenderInput()) == velocity_1_7


@pytest.mark.slow
@needs_velocity_1_7
def test_the_cases_are_velocity_1_7s_own_output() -> None:
    assert_velocity_1_7_renders(CASES)
