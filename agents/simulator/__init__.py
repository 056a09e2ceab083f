"""An OpenAI-compatible chat-completions server for tests, benchmarks and offline integration."""

from agents.simulator.rules import Rule, SimConfig
from agents.simulator.server import SimulatorServer, SimulatorState, create_simulator

__all__ = ["Rule", "SimConfig", "SimulatorServer", "SimulatorState", "create_simulator"]
