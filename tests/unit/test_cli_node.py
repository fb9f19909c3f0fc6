"""Which Node.js runs the AWS CDK (cli/node.py): the machine's when the CDK supports it, else
the checkout's Node.js 22, else the machine's with a sentence saying which Node.js the CDK
wants."""

from __future__ import annotations

from pathlib import Path

import pytest

from beekeeper.cli.errors import UserError
from beekeeper.cli.node import PROJECT_NODE, NodeChoice, NodeRuntime, choose_node

SYSTEM = "/usr/bin/node"


def which_node(path: str | None):  # type: ignore[no-untyped-def]
    return lambda name: path if name == "node" else None


def checkout(tmp_path: Path, *, with_node: bool) -> tuple[Path, str]:
    """A checkout folder, with the Node.js 22 that `npm ci` installs or without it."""
    project = tmp_path / PROJECT_NODE
    if with_node:
        project.parent.mkdir(parents=True)
        project.write_text("")
    return tmp_path, str(project)


def test_a_node_the_cdk_supports_is_used_as_it_is(tmp_path: Path) -> None:
    root, project = checkout(tmp_path, with_node=True)
    for version in ("v22.12.0", "v24.3.1"):
        versions = {SYSTEM: version, project: "v22.23.5"}
        choice = choose_node(which_node(SYSTEM), versions.get, root)
        assert choice == NodeChoice(NodeRuntime(SYSTEM, version))
        assert choice.note is None


@pytest.mark.parametrize("version", ["v20.20.2", "v18.20.4", "v25.1.0"])
def test_another_release_gives_way_to_the_checkouts_node_22_and_says_so(
    tmp_path: Path, version: str
) -> None:
    root, project = checkout(tmp_path, with_node=True)
    versions = {SYSTEM: version, project: "v22.23.5"}
    choice = choose_node(which_node(SYSTEM), versions.get, root)
    assert choice.runtime == NodeRuntime(project, "v22.23.5")
    assert choice.note == (
        f"The AWS CDK wants Node.js 24 or 22 (LTS); this machine's node is {version[1:]}, so "
        f"it runs on this checkout's Node.js 22.23.5 ({project})."
    )


def test_without_the_checkouts_node_the_machines_runs_it_with_a_plain_sentence(
    tmp_path: Path,
) -> None:
    root, _project = checkout(tmp_path, with_node=False)
    choice = choose_node(which_node(SYSTEM), {SYSTEM: "v20.20.2"}.get, root)
    assert choice.runtime == NodeRuntime(SYSTEM, "v20.20.2")
    assert choice.note is not None
    assert choice.note.startswith(
        "The AWS CDK wants Node.js 24 or 22 (LTS); this machine's node is 20.20.2, which the "
        "CDK does not support, and it runs on it anyway."
    )
    assert "`npm ci`" in choice.note and "b'" not in choice.note


def test_only_the_checkouts_node_is_enough(tmp_path: Path) -> None:
    root, project = checkout(tmp_path, with_node=True)
    choice = choose_node(which_node(None), {project: "v22.23.5"}.get, root)
    assert choice == NodeChoice(NodeRuntime(project, "v22.23.5"))


def test_without_any_node_the_message_says_to_install_one(tmp_path: Path) -> None:
    root, _project = checkout(tmp_path, with_node=False)
    with pytest.raises(UserError, match=r"needs Node\.js .* install Node\.js 24 or 22 \(LTS\)"):
        choose_node(which_node(None), {}.get, root)


def test_a_node_that_does_not_run_counts_as_none(tmp_path: Path) -> None:
    root, _project = checkout(tmp_path, with_node=False)
    with pytest.raises(UserError, match=r"needs Node\.js"):
        choose_node(which_node(SYSTEM), {}.get, root)  # `node --version` failed


def test_the_environment_puts_the_node_first_and_silences_jsiis_banners() -> None:
    choice = NodeChoice(NodeRuntime("/opt/node22/bin/node", "v22.23.5"))
    env = choice.environment({"PATH": "/usr/bin:/bin", "HOME": "/home/op"})
    assert env == {
        "PATH": "/opt/node22/bin:/usr/bin:/bin",
        "HOME": "/home/op",
        "JSII_NODE": "/opt/node22/bin/node",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "22",
        "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1",
        "JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION": "1",
    }


def test_an_operators_own_end_of_life_list_is_kept_once() -> None:
    choice = NodeChoice(NodeRuntime("/usr/bin/node", "v20.20.2"))
    switch = "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"
    assert choice.environment({switch: "20"})[switch] == "20"
    assert choice.environment({switch: "18, 16"})[switch] == "18,16,20"
