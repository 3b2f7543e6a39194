"""Tests of the project around the package: demos, documentation, environment, import layers."""
