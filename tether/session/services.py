"""Choosing a run's services by name: `--verifier sim|vlm` and `--diagnoser rules|llm`.

    services = open_services(ServicesConfig(verifier="vlm", backend="openai",
                                            chat=BackendConfig(model=..., base_url=...)))
    try: ... run(config, services=services) ...
    finally: services.close()

`VERIFIERS` and `DIAGNOSERS` are registries of factories from a `ServicesConfig` to the service
(None: the default, the sim's predicates and the rule-based diagnosis). A VLM verifier and an
LLM diagnoser ask the chat backend `backend` (`tether.models.planners`). The `replanner` is not
chosen here: `tether do` makes it from its planner (`tether.planning.do`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from tether.behaviours.services import Services
from tether.errors import TetherError
from tether.models.planners import BackendConfig
from tether.registry import Registry

VERIFIER_TOKENS = 16  # a yes or a no
DIAGNOSER_TOKENS = 256  # a cause and a remedy


@dataclass
class ServicesConfig:
    """Who judges expected effects, who diagnoses for memory, and the chat backend they ask."""

    verifier: str = "sim"
    diagnoser: str = "rules"
    backend: str = "openai"
    chat: BackendConfig = field(default_factory=BackendConfig)


Factory = Callable[[ServicesConfig], Any]
VERIFIERS: Registry[Factory] = Registry("verifier")
DIAGNOSERS: Registry[Factory] = Registry("diagnoser")


def _chat(config: ServicesConfig, option: str, max_tokens: int):
    from tether.models.planners import BACKENDS, get_backend

    if config.backend not in BACKENDS:
        raise TetherError(f"{option} needs a chat backend ({', '.join(BACKENDS)}) to ask; "
                          f"'{config.backend}' is not one (give --verifier-backend)")
    return get_backend(config.backend, replace(config.chat, max_tokens=max_tokens))


VERIFIERS.register("sim", lambda config: None)
DIAGNOSERS.register("rules", lambda config: None)


@VERIFIERS.register("vlm")
def vlm_verifier(config: ServicesConfig):
    """A VLM asked about the agentview image (`tether.behaviours.verifier.VLMVerifier`)."""
    from tether.behaviours.verifier import VLMVerifier
    from tether.models.vlm_judge import VLMJudge

    return VLMVerifier(VLMJudge(_chat(config, "--verifier vlm", VERIFIER_TOKENS)))


@DIAGNOSERS.register("llm")
def llm_diagnoser(config: ServicesConfig):
    """An LLM diagnosing the episode (`tether.memory.llm_diagnosis.LLMDiagnoser`)."""
    from tether.memory.llm_diagnosis import LLMDiagnoser

    return LLMDiagnoser(_chat(config, "--diagnoser llm", DIAGNOSER_TOKENS))


def open_services(config: ServicesConfig) -> Services:
    """The services `config` names; a `TetherError` for an unknown name or a missing backend."""
    verifier = VERIFIERS.get(config.verifier)(config)
    try:
        diagnoser = DIAGNOSERS.get(config.diagnoser)(config)
    except BaseException:
        Services(verifier=verifier).close()
        raise
    return Services(verifier=verifier, diagnoser=diagnoser)
