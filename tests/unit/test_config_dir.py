from __future__ import annotations

from pathlib import Path

from beekeeper.core.config_dir import config_dir, deployment_file, room_file


def test_explicit_directory_wins() -> None:
    env = {"BEEKEEPER_CONFIG_DIR": "/tmp/bk", "XDG_CONFIG_HOME": "/tmp/xdg"}
    assert config_dir(env) == Path("/tmp/bk")
    assert room_file("sale", env) == Path("/tmp/bk/rooms/sale.toml")
    assert deployment_file("sale", env) == Path("/tmp/bk/rooms/sale.deployed.json")


def test_xdg_then_home() -> None:
    assert config_dir({"XDG_CONFIG_HOME": "/tmp/xdg"}) == Path("/tmp/xdg/beekeeper")
    assert config_dir({}) == Path.home() / ".config" / "beekeeper"
