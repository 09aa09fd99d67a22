"""Example agent plug-ins (docs/agents.md): seat them as python:examples.agents.NAME:Agent."""
