"""Manifests and datasets: files -> typed, validated records with error locations."""

from __future__ import annotations

from pytest_mobilebench.manifest.yamlfile import YamlDocument, read_yaml

__all__ = ["YamlDocument", "read_yaml"]
