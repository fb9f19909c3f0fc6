"""Apache Velocity 1.7 itself, for the tests that hold the local renderer to Java's engine:
Java's source launcher runs tests/support/velocity17/Render.java against Debian's `velocity`
package (the jar and its dependencies under /usr/share/java). CI installs it (.ci/run) and sets
CI_REQUIRE_VELOCITY: there a test that needs it fails, never skips."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from pathlib import Path

import pytest

VELOCITY_JARS = ("velocity.jar", "commons-collections3.jar", "commons-lang.jar")
JAVA_LIBRARIES = Path("/usr/share/java")
HARNESS = Path(__file__).resolve().parent / "velocity17" / "Render.java"

VELOCITY_MISSING = shutil.which("java") is None or not all(
    (JAVA_LIBRARIES / jar).exists() for jar in VELOCITY_JARS
)

# Marks a test that renders with Velocity 1.7 (slow: it starts a JVM).
needs_velocity_1_7 = pytest.mark.skipif(
    VELOCITY_MISSING and not os.environ.get("CI_REQUIRE_VELOCITY"),
    reason="needs Java and Velocity 1.7 (Debian: apt-get install velocity)",
)


def velocity_1_7_renders(templates: list[str]) -> list[str]:
    """Each template as Velocity 1.7's own engine renders it, with an empty context."""
    classpath = ":".join(str(JAVA_LIBRARIES / jar) for jar in VELOCITY_JARS)
    lines = "".join(base64.b64encode(t.encode()).decode() + "\n" for t in templates)
    done = subprocess.run(
        ["java", "-cp", classpath, str(HARNESS)],
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [base64.b64decode(line).decode() for line in done.stdout.splitlines()]


def assert_velocity_1_7_renders(cases: list[tuple[str, str]]) -> None:
    """Each (template, expected) case's expected text is Velocity 1.7's own output."""
    assert velocity_1_7_renders([template for template, _ in cases]) == [e for _, e in cases]
